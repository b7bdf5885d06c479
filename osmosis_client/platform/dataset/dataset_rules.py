"""What the platform accepts as a dataset upload (published-cli-0.3.8.md §3.1), checked
offline, streaming (a 5 GiB file is read line by line, never held), every problem located:
``line 7: missing key ground_truth``.

The rules:

- the file exists, ends in ``.jsonl``, ``.csv`` or ``.parquet``, is not empty, and is at
  most 5 GiB;
- a file with a ``metadata`` column is in *metadata mode*; otherwise it needs
  ``user_prompt`` and ``ground_truth`` (``label`` counts as ``ground_truth``);
- JSONL: every non-blank line is a JSON object with the first object's keys, exactly;
  CSV (UTF-8): a header, and every row as many cells as it; Parquet (needs pyarrow, else
  a warning and no content check): columns and rows, ``metadata`` a struct or a string;
- a ``metadata`` cell: present, an object (or a string holding one), not empty, no ``{}``
  nested anywhere, integers within int64, and each path's JSON type the same in every
  row (integers and floats are both numbers);
- at least 4 rows.

Unlike the published client, which stops at five problems, the report keeps the first
``max_errors`` (default 50) and counts the rest.
"""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

EXTENSIONS = ("jsonl", "csv", "parquet")
MAX_SIZE = 5 * 1024**3
MIN_ROWS = 4
MAX_ERRORS = 50
_INT64 = (-(2**63), 2**63 - 1)


@dataclass
class DatasetReport:
    """What a dataset file is, and what the platform would refuse in it."""

    file: Path
    extension: str
    file_size: int
    rows: int = 0
    errors: list[str] = field(default_factory=list)
    #: the same problems as (where — "line 7", "row 3", "header" — or None, message)
    located: list[tuple[str | None, str]] = field(default_factory=list)
    more_errors: int = 0  # problems past ``max_errors``, counted
    warnings: list[str] = field(default_factory=list)
    metadata_mode: bool = False
    checked: bool = True  # False: the content could not be read (Parquet without pyarrow)

    @property
    def valid(self) -> bool:
        return not self.errors

    @property
    def file_name(self) -> str:
        return self.file.name

    @property
    def dataset_name(self) -> str:
        """The name the platform gives it: the file's stem."""
        return self.file.stem

    def to_json(self) -> dict[str, Any]:
        return {
            "valid": self.valid,
            "file": str(self.file),
            "file_name": self.file_name,
            "extension": self.extension,
            "file_size": self.file_size,
            "rows": self.rows,
            "metadata_mode": self.metadata_mode,
            "checked": self.checked,
            "errors": list(self.errors),
            "more_errors": self.more_errors,
            "warnings": list(self.warnings),
        }


class _Problems:
    def __init__(self, report: DatasetReport, cap: int) -> None:
        self.report = report
        self.cap = cap

    def add(self, message: str, where: str | None = None) -> None:
        if len(self.report.errors) < self.cap:
            self.report.errors.append(f"{where}: {message}" if where else message)
            self.report.located.append((where, message))
        else:
            self.report.more_errors += 1


def check_dataset(path: Path, *, max_errors: int = MAX_ERRORS) -> DatasetReport:
    """Check ``path`` as the platform would check an upload (never raises for content)."""
    path = Path(path).expanduser().absolute()
    extension = path.suffix.lower().lstrip(".")
    report = DatasetReport(path, extension, 0)
    problems = _Problems(report, max_errors)
    if not path.is_file():
        problems.add(f"file not found: {path}")
        return report
    report.file_size = path.stat().st_size
    if extension not in EXTENSIONS:
        problems.add(f"unsupported file type '.{extension}' (supported: csv, jsonl, parquet)")
        return report
    if report.file_size == 0:
        problems.add("the file is empty")
        return report
    if report.file_size > MAX_SIZE:
        problems.add(f"the file is {report.file_size:,} bytes; the platform takes at most 5 GiB")
        return report
    reader = {"jsonl": _jsonl, "csv": _csv, "parquet": _parquet}[extension]
    reader(path, report, problems)
    if report.checked and report.rows < MIN_ROWS:
        problems.add(f"{report.rows} row(s): the platform needs at least {MIN_ROWS}")
    return report


# ------------------------------------------------------------------ the schema


def _columns(keys: list[str], report: DatasetReport, problems: _Problems, where: str) -> None:
    report.metadata_mode = "metadata" in keys
    if report.metadata_mode:
        return
    missing = [k for k in ("user_prompt", "ground_truth") if k not in keys]
    if "ground_truth" in missing and "label" in keys:
        missing.remove("ground_truth")
    if missing:
        problems.add(
            f"missing {', '.join(missing)} (a row needs user_prompt and ground_truth "
            "— or label — unless it has a metadata column)",
            where,
        )


class _MetadataTypes:
    """Each metadata path's JSON type, as the first row that had it set it."""

    def __init__(self) -> None:
        self.seen: dict[str, tuple[str, str]] = {}  # path -> (type, where first seen)

    def check(self, cell: Any, where: str, problems: _Problems) -> None:
        value = cell
        if value is None or (isinstance(value, str) and not value.strip()):
            problems.add("metadata is missing", where)
            return
        if isinstance(value, str):
            try:
                value = json.loads(value)
            except ValueError:
                problems.add("metadata is not JSON", where)
                return
        if not isinstance(value, dict):
            problems.add(f"metadata must be an object, not {_kind(value)}", where)
            return
        if not value:
            problems.add("metadata is an empty object", where)
            return
        for path, item in _leaves(value, "metadata"):
            kind = _kind(item)
            if kind == "empty object":
                problems.add(f"{path} is an empty object", where)
                continue
            whole = isinstance(item, int) and not isinstance(item, bool)
            if whole and not _INT64[0] <= item <= _INT64[1]:
                problems.add(f"{path} = {item} does not fit in 64 bits", where)
                continue
            if kind == "number" and isinstance(item, float) and not math.isfinite(item):
                problems.add(f"{path} is not a finite number", where)
                continue
            first = self.seen.setdefault(path, (kind, where))
            if first[0] != kind:
                problems.add(f"{path} is {kind} here but {first[0]} at {first[1]}", where)


def _leaves(value: Any, path: str) -> Iterator[tuple[str, Any]]:
    """(dotted path, value) of every leaf; an empty object is a leaf (a problem)."""
    if isinstance(value, dict):
        if not value:
            yield path, value
        for key, item in value.items():
            yield from _leaves(item, f"{path}.{key}")
    elif isinstance(value, list):
        for item in value:  # arrays are one type; empty objects inside them still count
            for inner, found in _leaves(item, f"{path}[]"):
                if isinstance(found, dict) and not found:
                    yield inner, found
        yield path, value
    else:
        yield path, value


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if value is None:
        return "null"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object" if value else "empty object"
    return type(value).__name__


# ------------------------------------------------------------------ the formats


def _jsonl(path: Path, report: DatasetReport, problems: _Problems) -> None:
    schema: list[str] | None = None
    first_line = 0
    types = _MetadataTypes()
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, 1):
            if not raw.strip():
                continue
            where = f"line {number}"
            try:
                row = json.loads(raw)
            except ValueError as exc:
                problems.add(f"not JSON ({_reason(exc)})", where)
                continue
            if not isinstance(row, dict):
                problems.add(f"a row must be a JSON object, not {_kind(row)}", where)
                continue
            report.rows += 1
            if schema is None:
                schema, first_line = list(row), number
                _columns(schema, report, problems, where)
            elif set(row) != set(schema):
                missing = [k for k in schema if k not in row]
                extra = [k for k in row if k not in schema]
                said = [f"missing {', '.join(missing)}"] if missing else []
                said += [f"extra {', '.join(extra)}"] if extra else []
                problems.add(
                    f"{'; '.join(said)} (every row needs the keys of line {first_line})", where
                )
                continue
            if report.metadata_mode:
                types.check(row.get("metadata"), where, problems)


def _reason(exc: ValueError) -> str:
    return getattr(exc, "msg", None) or str(exc).split(":")[0]


def _csv(path: Path, report: DatasetReport, problems: _Problems) -> None:
    types = _MetadataTypes()
    try:
        with path.open(newline="", encoding="utf-8") as handle:
            rows = csv.reader(handle)
            header = next(rows, None)
            if not header or not any(cell.strip() for cell in header):
                problems.add("a CSV file needs a header row", "line 1")
                return
            header = [cell.strip() for cell in header]
            _columns(header, report, problems, "header")
            at = header.index("metadata") if report.metadata_mode else -1
            for row in rows:
                where = f"line {rows.line_num}"
                if not row or not any(cell.strip() for cell in row):
                    continue
                report.rows += 1
                if len(row) != len(header):
                    problems.add(f"{len(row)} cells, the header has {len(header)}", where)
                    continue
                if at >= 0:
                    types.check(row[at], where, problems)
    except UnicodeDecodeError as exc:
        problems.add(f"byte {exc.start}: the file is not UTF-8")
    except csv.Error as exc:
        problems.add(f"not a readable CSV file: {exc}")


def _parquet(path: Path, report: DatasetReport, problems: _Problems) -> None:
    try:
        import pyarrow.parquet as pq
        import pyarrow.types as pa_types
    except ImportError:
        report.checked = False
        report.warnings.append(
            "the file's content was not checked: reading Parquet needs pyarrow "
            "(pip install 'osmosis-client[parquet]')"
        )
        return
    try:
        parquet = pq.ParquetFile(path)
    except Exception as exc:  # pyarrow raises its own error types for a bad file
        problems.add(f"not a readable Parquet file: {exc}")
        return
    schema = parquet.schema_arrow
    names = list(schema.names)
    if not names:
        problems.add("the file has no columns")
        return
    _columns(names, report, problems, "columns")
    report.rows = parquet.metadata.num_rows
    if report.rows == 0 or not report.metadata_mode:
        return
    kind = schema.field("metadata").type
    if not (pa_types.is_struct(kind) or pa_types.is_string(kind) or pa_types.is_large_string(kind)):
        problems.add(f"column metadata is {kind}; it must be a struct or a string")
        return
    types = _MetadataTypes()
    row = 0
    for batch in parquet.iter_batches(columns=["metadata"], batch_size=4096):
        for cell in batch.column(0).to_pylist():
            row += 1
            types.check(cell, f"row {row}", problems)
