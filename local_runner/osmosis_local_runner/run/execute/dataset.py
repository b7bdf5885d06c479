"""Datasets: ``.jsonl`` (streamed), ``.json`` (array), ``.csv``, ``.parquet`` (extra).

A dataset is read twice: once to validate every row (``FILE:LINE: problem``,
before any model call) and count it, then streamed row by row while the run
executes — memory stays flat however large the file is.
"""

from __future__ import annotations

import csv
import hashlib
import json
import math
import random
from collections.abc import Container, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from osmosis_client import _json
from osmosis_client._fs import file_sha256
from osmosis_client.errors import ConfigError, InvalidInputError, Problem
from osmosis_local_runner.results.documents.records import facts_text

FORMATS = (".jsonl", ".json", ".csv", ".parquet")
MAX_PROBLEMS = 20
SAMPLE_FRACTION = 0.1


@dataclass(slots=True)
class Row:
    """One dataset row, as the runner needs it."""

    index: int  # 0-based position in the file: with the run index, the attempt's key
    line: int  # where it starts (1-based; parquet: the row number)
    user_prompt: str
    system_prompt: str | None
    ground_truth: str | None  # `ground_truth`, else the 0.3 SDK's `label` column
    metadata: dict[str, Any]  # the other columns, plus the keys of a `metadata` column
    digest: str  # content hash: a changed dataset is detected on resume; compare pairs by it
    data: dict[str, Any]  # the whole row, as decoded
    #: its place among the run's chosen rows (what the published protocol calls row_index)
    position: int | None = None
    _facts: str | None = field(default=None, repr=False, compare=False)

    def facts(self) -> str | None:
        """What the results keep of the row — its prompt, expected answer and metadata
        columns — as compact JSON text, computed once and shared by its attempts."""
        if self._facts is None:
            self._facts = facts_text(
                {
                    "prompt": self.user_prompt,
                    "expected": self.ground_truth,
                    "metadata": self.metadata,
                }
            )
        return self._facts

    def prompt(self) -> list[dict[str, Any]]:
        messages: list[dict[str, Any]] = []
        if self.system_prompt:
            messages.append({"role": "system", "content": self.system_prompt})
        messages.append({"role": "user", "content": self.user_prompt})
        return messages


@dataclass(frozen=True)
class DatasetInfo:
    path: Path
    total_rows: int
    fingerprint: str  # sha256 of the file's bytes
    #: the columns rows keep as metadata (every column but the prompts and ground truth)
    columns: frozenset[str] = frozenset()


def row_digest(data: Mapping[str, Any]) -> str:
    """A short hash of the row's content (key order and whitespace do not matter)."""
    raw = _json.sorted_dumps(data) if isinstance(data, dict) else None  # the usual flat row
    if raw is None:
        text = json.dumps(
            data, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str
        )
        raw = text.encode()
    return hashlib.blake2b(raw, digest_size=10).hexdigest()


#: rows nesting deeper than this are refused: they only break things later (encoders,
#: transcripts, reports) and no real dataset needs them
MAX_NESTING = 64
TOO_DEEP = f"the row nests lists/objects more than {MAX_NESTING} levels deep"


def _text(value: Any, *, optional: bool) -> str | None:
    if value is None or (optional and value == ""):
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"must be a string, got {type(value).__name__}")
    return str(value)


def _metadata_column(value: Any) -> dict[str, Any]:
    """The ``metadata`` column: an object, or a string holding a JSON object."""
    if value is None or value == "":
        return {}
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError as exc:
            raise ValueError("metadata must be an object or a JSON object string") from exc
    if not isinstance(value, dict):
        raise ValueError(f"metadata must be an object, got {type(value).__name__}")
    return value


def nesting(value: Any, limit: int = MAX_NESTING) -> int:
    """How deeply lists and objects nest in ``value`` (counting stops past ``limit``)."""
    if isinstance(value, dict) and not any(isinstance(v, dict | list) for v in value.values()):
        return 1  # the usual row: columns of text and numbers, nothing to walk
    deepest = 0
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        deepest = max(deepest, depth)
        if deepest > limit:
            break
        stack.extend((child, depth + 1) for child in children)
    return deepest


def check_row(data: Any) -> tuple[str, str | None, str | None, dict[str, Any]]:
    """(user_prompt, system_prompt, ground_truth, metadata column) of a decoded row;
    ``ValueError`` if bad."""
    if not isinstance(data, dict):
        raise ValueError(f"a row must be an object, got {type(data).__name__}")
    if nesting(data) > MAX_NESTING:
        raise ValueError(TOO_DEEP)
    prompt = data.get("user_prompt")
    if not isinstance(prompt, str) or not prompt.strip():
        if "user_prompt" not in data:
            raise ValueError("missing required column user_prompt")
        raise ValueError("user_prompt must be a non-empty string")
    try:
        system = _text(data.get("system_prompt"), optional=True)
    except ValueError as exc:
        raise ValueError(f"system_prompt {exc}") from exc
    column = "ground_truth" if data.get("ground_truth") not in (None, "") else "label"
    try:
        truth = _text(data.get(column), optional=True)
    except ValueError as exc:
        raise ValueError(f"{column} {exc}") from exc
    return prompt, system, truth, _metadata_column(data.get("metadata"))


_RESERVED = frozenset({"user_prompt", "system_prompt", "ground_truth", "metadata"})


def make_row(index: int, line: int, data: Any) -> Row:
    """A validated row with its metadata and content hash."""
    prompt, system, truth, extra = check_row(data)
    metadata = {k: v for k, v in data.items() if k not in _RESERVED}
    metadata.update(extra)
    return Row(index, line, prompt, system, truth, metadata, row_digest(data), data)


class Dataset:
    """A dataset file: validate it once, then stream its rows."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.suffix = path.suffix.lower()
        if self.suffix not in FORMATS:
            raise InvalidInputError(
                f"unsupported dataset format {path.suffix or '(none)'} for {path}",
                hint="use .jsonl, .json, .csv or .parquet",
            )
        if not path.is_file():
            raise InvalidInputError(f"dataset {path} does not exist", hint="check the path")

    # ------------------------------------------------------------- decoding

    def _decoded(self) -> Iterator[tuple[int, Any]]:
        """(line, decoded row or a ValueError) for every row, streamed; a file that cannot
        be read (permissions, an I/O error) is one clear error."""
        read = {".jsonl": self._jsonl, ".json": self._json_array, ".csv": self._csv}
        try:
            yield from read.get(self.suffix, self._parquet)()
        except OSError as exc:
            raise InvalidInputError(
                f"cannot read the dataset {self.path}: {exc.strerror or exc}",
                hint="check the file's permissions",
                code="DATASET_UNREADABLE",
                data={"path": str(self.path)},
            ) from exc

    def _jsonl(self) -> Iterator[tuple[int, Any]]:
        with self.path.open("rb") as handle:
            for lineno, raw in enumerate(handle, 1):
                if not raw.strip():
                    continue
                try:
                    yield lineno, _json.loads(raw.decode("utf-8"))  # str: no encoding sniffing
                except (ValueError, UnicodeDecodeError) as exc:
                    yield lineno, ValueError(f"invalid JSON: {_short(exc)}")
                except RecursionError:
                    yield lineno, ValueError(TOO_DEEP)

    def _json_array(self) -> Iterator[tuple[int, Any]]:
        try:
            text = self.path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            yield 1, ValueError("the file is not UTF-8 text")
            return
        decoder = json.JSONDecoder()
        pos = _skip_ws(text, 0)
        if pos >= len(text) or text[pos] != "[":
            yield 1, ValueError("a .json dataset must be an array of objects")
            return
        pos = _skip_ws(text, pos + 1)
        line, counted = 1, 0
        while pos < len(text) and text[pos] != "]":
            line += text.count("\n", counted, pos)
            counted = pos
            try:
                value, end = decoder.raw_decode(text, pos)
            except ValueError as exc:
                yield line, ValueError(f"invalid JSON: {_short(exc)}")
                return
            except RecursionError:
                yield line, ValueError(TOO_DEEP)
                return
            yield line, value
            pos = _skip_ws(text, end)
            if pos < len(text) and text[pos] == ",":
                pos = _skip_ws(text, pos + 1)
            elif pos < len(text) and text[pos] != "]":
                line += text.count("\n", counted, pos)
                yield line, ValueError("expected ',' or ']' between rows")
                return

    def _csv(self) -> Iterator[tuple[int, Any]]:
        with self.path.open(newline="", encoding="utf-8-sig") as handle:  # a BOM is not data
            reader = csv.DictReader(handle, strict=True)  # an unterminated quote is an error
            start = 2
            try:
                for record in reader:
                    if None in record:
                        yield start, ValueError("more fields than the header has columns")
                    else:
                        yield start, {k: v for k, v in record.items() if k is not None}
                    start = reader.line_num + 1
            except (csv.Error, UnicodeDecodeError) as exc:
                yield start, ValueError(f"invalid CSV: {_short(exc)}")

    def _parquet(self) -> Iterator[tuple[int, Any]]:
        try:
            import pyarrow.parquet as pq
        except ImportError as exc:
            raise InvalidInputError(
                "reading .parquet needs pyarrow",
                hint="pip install 'osmosis-client[parquet]'",
            ) from exc
        number = 0
        try:
            for batch in pq.ParquetFile(self.path).iter_batches(batch_size=1024):
                for record in batch.to_pylist():
                    number += 1
                    yield number, record
        except Exception as exc:  # pyarrow's errors (ArrowInvalid, OSError…) for a bad file
            yield number + 1, ValueError(f"not a readable parquet file: {_short(exc)}")

    # ------------------------------------------------------------- public

    def validate(self) -> DatasetInfo:
        """Check every row; raise ``ConfigError`` with up to 20 located problems."""
        shown = str(self.path)
        problems: list[Problem] = []
        count = 0
        columns: set[str] = set()
        for line, data in self._decoded():
            try:
                if isinstance(data, ValueError):
                    raise data
                columns.update(check_row(data)[3])
                columns.update(k for k in data if k not in _RESERVED)
            except ValueError as exc:
                problems.append(Problem(shown, line, None, "", str(exc)))
                if len(problems) >= MAX_PROBLEMS:
                    break
            count += 1
        if problems:
            more = " (showing the first 20)" if len(problems) >= MAX_PROBLEMS else ""
            raise ConfigError(
                f"dataset {shown} has invalid rows{more}",
                problems,
                hint="fix the rows listed below (each needs a non-empty user_prompt)",
            )
        if count == 0:
            raise InvalidInputError(f"dataset {shown} has no rows", hint="add rows to it")
        return DatasetInfo(self.path, count, file_sha256(self.path), frozenset(columns))

    def rows(self, selected: Container[int] | None = None) -> Iterator[Row]:
        """Stream validated rows; ``selected`` limits them to those row indices (each
        row then knows its ``position`` among them)."""
        position = 0
        for index, (line, data) in enumerate(self._decoded()):
            if selected is None or index in selected:
                row = make_row(index, line, data)
                row.position = position
                position += 1
                yield row


def _skip_ws(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in " \t\r\n":
        pos += 1
    return pos


def _short(exc: Exception) -> str:
    return str(exc).split(": line ")[0][:120]


def select_rows(
    total: int,
    limit: int | None,
    *,
    sample: bool,
    seed: int,
    offset: int = 0,
    rows: frozenset[int] | None = None,
    dataset: str = "the dataset",
) -> Container[int]:
    """The platform's row choice: ``rows`` (``--rows``: source indices) when given;
    else the first ``limit`` rows; else, with ``sample``, a seeded random 10 % (at least
    one row); else every row. ``offset`` skips rows first (row indices stay absolute)."""
    if rows is not None:
        outside = sorted(i for i in rows if i >= total)
        if outside:
            shown = ", ".join(map(str, outside[:5])) + (", …" if len(outside) > 5 else "")
            valid = f"valid indices are 0-{total - 1}" if total else "it has no rows"
            raise InvalidInputError(
                f"rows [{shown}] are selected but {dataset} has {total} rows ({valid})",
                hint="row indices count from 0, in file order",
                code="ROWS_OUT_OF_RANGE",
            )
        return rows
    start = min(offset, total)
    if limit is not None:
        return range(start, min(start + limit, total))
    if not sample:
        return range(start, total)
    pool = range(start, total)
    size = max(1, math.ceil(len(pool) * SAMPLE_FRACTION)) if pool else 0
    return frozenset(random.Random(seed).sample(pool, size))


def compact_rows(rows: Iterator[int] | Container[int], total: int) -> str:
    """Selected source rows as ``0-3`` or ``0,2,5-9`` (the published manifest's form)."""
    from osmosis_local_runner.run.request.row_lists import rows_text

    return rows_text(i for i in range(total) if i in rows)


def count_selected(total: int, selected: Container[int]) -> int:
    if isinstance(selected, range | frozenset | set):
        return len(selected)
    return sum(1 for i in range(total) if i in selected)


def find_dataset(root: Path, name: str) -> Path:
    """``data/<name>.{jsonl,json,parquet,csv}`` under the project root."""
    for suffix in (".jsonl", ".json", ".parquet", ".csv"):
        candidate = root / "data" / f"{name}{suffix}"
        if candidate.is_file():
            return candidate
    raise InvalidInputError(
        f"no local file for dataset {name!r} (looked for data/{name}.jsonl|json|parquet|csv)",
        hint="set [local].dataset_file in the config",
        code="DATASET_NOT_FOUND",
    )
