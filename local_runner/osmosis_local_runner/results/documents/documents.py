"""Reading a results document back: its head (config, summary) and its rows, row by
row — what ``eval compare``, ``rescore``, ``report`` and the CI artefacts start from.

Our documents hold one row per line (results.document_chunks), so rows are parsed one
line at a time and a 100 k-row document never sits in memory as one tree; a document
reformatted by another tool (still valid JSON) is read whole instead.

A document may come from anywhere (hand-edited, another tool, a colleague): every value
the results commands use is checked as it is read — JSON proper (no ``NaN`` or
``Infinity``, nothing nested beyond the parser, numbers a float can hold), the head's
known keys of the right types — and a problem is one clear error naming the file and
the place (exit 2), never a crash further on.
"""

from __future__ import annotations

import re
from array import array
from collections.abc import Container, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from osmosis_client._fs import open_regular
from osmosis_client.errors import InvalidInputError
from osmosis_local_runner.results.documents.checks import (
    LARGEST as LARGEST,
    head_problem,
    is_number as is_number,
    pass_at_key as pass_at_key,
    run_problem,
    whole,
)
from osmosis_local_runner.results.documents.document import ROWS_MARK
from osmosis_local_runner.results.documents.labels import label_of
from osmosis_local_runner.results.documents.records import AttemptRecord, compact, row_facts
from osmosis_local_runner.results.documents.rowlines import decode_line, load_json
from osmosis_local_runner.results.statistics.scoring import passed
from osmosis_local_runner.results.statistics.stats import mean

#: how many characters of a prompt or answer an excerpt keeps
EXCERPT = 200


def _problem(path: Path, what: str, hint: str | None = None) -> InvalidInputError:
    return InvalidInputError(
        f"{path}: {what}",
        hint=hint or "give a results document written by a local run",
        code="NOT_RESULTS",
        data={"path": str(path)},
    )


@dataclass
class Row:
    """One row of a results document: its attempts as records."""

    index: int
    digest: str
    runs: list[AttemptRecord]
    #: the dataset row's expected answer (``ground_truth`` / label) and other columns
    expected: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    #: the user prompt as the dataset had it (documents before it was kept: None)
    user_prompt: str | None = None

    def scored(self, model_tag: str | None = None) -> list[AttemptRecord]:
        """The attempts that count in statistics (not skipped) of one model."""
        return [r for r in self.runs if r.model_tag == model_tag and not r.skipped]

    def mean_score(self, fn: str, model_tag: str | None = None) -> float | None:
        runs = self.scored(model_tag)
        return mean([float(r.scores.get(fn, 0.0)) for r in runs]) if runs else None

    def passes(self, fn: str, threshold: float, model_tag: str | None = None) -> tuple[int, int]:
        """(attempts, passing attempts)."""
        runs = self.scored(model_tag)
        return len(runs), sum(passed(r, fn, threshold) for r in runs)

    def prompt(self) -> str | None:
        """The row's user prompt: as kept, else the first user message of the first
        attempt with a transcript."""
        if self.user_prompt is not None:
            return self.user_prompt
        for record in self.runs:
            messages = record.messages()
            for message in messages or ():
                if isinstance(message, dict) and message.get("role") == "user":
                    return text_of(message.get("content"))
        return None


def majority_passes(attempts: int, passing: int) -> bool:
    """A row passes (for flips, JUnit and the report) when more than half of its attempts
    pass."""
    return attempts > 0 and passing * 2 > attempts


def text_of(content: Any) -> str:
    """A message's content as text (OpenAI content parts joined)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(
            str(part.get("text", "")) for part in content if isinstance(part, dict)
        ).strip()
    return "" if content is None else str(content)


def excerpt(text: str | None, limit: int = EXCERPT) -> str:
    if text is None:
        return ""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


class ResultsFile:
    """A results document on disk; ``rows()`` reads it again each time."""

    def __init__(self, path: Path) -> None:
        self.path = path
        #: people's verdicts, by (row, attempt), once :meth:`use_reviews` was called:
        #: every read of the rows then sees these attempts as reviewed
        self.reviewed: dict[tuple[int, int], Any] | None = None
        if not path.exists():
            raise _problem(path, "no such file")
        if path.is_dir():
            raise _problem(path, "is a directory, not a results document")
        self.head = self._read_head()
        problem = head_problem(self.head)
        if problem is not None:
            raise _problem(path, problem)
        self.config: dict[str, Any] = self.head["config"]
        self.summary: dict[str, Any] = self.head["summary"]
        config, summary = self.config, self.summary
        fns = config.get("eval_fns") or list((summary.get("eval_fns") or {}).keys())
        self.eval_fns: list[str] = [str(fn) for fn in fns]
        threshold = config.get("pass_threshold", 1.0)
        self.pass_threshold = float(threshold) if isinstance(threshold, int | float) else 1.0
        n = config.get("n_runs", 1)
        self.n = n if isinstance(n, int) and n > 0 else 1
        self._streamable = True

    def use_reviews(self, reviewed: Path | None = None) -> int:
        """Read the reviewed attempts as people judged them (``results.reviews``) from
        now on — in the rows and in the summary, recomputed; ``reviewed``: the results
        path the reviews were written beside (a running run's is not this copy). How
        many attempts a review judges."""
        from osmosis_local_runner.results.reviews.reviews import use_reviews

        return use_reviews(self, reviewed or self.path)

    def _read_head(self) -> dict[str, Any]:
        try:
            with open_regular(self.path, follow=True) as handle:
                start = handle.read(1 << 20)
        except OSError as exc:
            raise _problem(self.path, f"cannot read it ({exc.strerror or exc})") from exc
        end = start.find(ROWS_MARK)
        if end >= 0:
            try:
                head = load_json(start[:end] + b"\n}")
                if isinstance(head, dict):
                    return head
            except ValueError as exc:
                if "not a JSON number" in str(exc) or "too large" in str(exc):
                    raise _problem(self.path, f"not valid JSON ({exc})") from exc
        document = self._load_whole()
        return {k: v for k, v in document.items() if k != "rows"}

    def _load_whole(self) -> dict[str, Any]:
        try:
            with open_regular(self.path, follow=True) as handle:
                document = load_json(handle.read())
        except (OSError, ValueError) as exc:
            raise _problem(self.path, f"not valid JSON ({exc})") from exc
        if not isinstance(document, dict) or not isinstance(document.get("rows"), list):
            raise _problem(self.path, "not an osmosis results document (no rows)")
        return document

    @property
    def model(self) -> str:
        return str(self.config.get("model") or "?")

    @property
    def label(self) -> str:
        return label_of(self.path, self.config)

    def raw_rows(
        self,
        wanted: Container[int] | None = None,
        *,
        transcripts: bool = True,
        offsets: array[int] | None = None,
    ) -> Iterator[dict[str, Any]]:
        """Each row object as written (``wanted``: only the rows of these indices — in
        our own documents, the others are never parsed; ``transcripts=False``: runs may
        come without their ``messages`` — a hint: orjson parses them faster than they could
        be cut out, so they come along; ``offsets``: gets where each row's line starts,
        for :meth:`rows_from` — left empty for a document not laid out a row per line)."""
        if self._streamable:
            try:
                yield from self._stream(wanted, offsets)
                return
            except _NotStreamable:
                self._streamable = False
        if offsets is not None:
            del offsets[:]
        rows = self._load_whole()["rows"]
        for row in rows:
            if not isinstance(row, dict):
                raise _problem(self.path, "a row is not an object")
            if wanted is None or row.get("row_index") in wanted:
                yield row

    def _stream(
        self,
        wanted: Container[int] | None = None,
        offsets: array[int] | None = None,
    ) -> Iterator[dict[str, Any]]:
        with open_regular(self.path, follow=True) as handle:
            prefix = b""
            for line in handle:
                prefix += line
                if ROWS_MARK in prefix:
                    break
                if len(prefix) > (1 << 22):
                    raise _NotStreamable
            else:
                raise _NotStreamable
            rest = prefix.split(ROWS_MARK, 1)[1].strip()
            if rest not in (b"", b"]"):
                raise _NotStreamable
            if rest == b"]":
                return
            parsed = False  # a row line parsed: the layout is ours
            position = len(prefix)
            for line in handle:
                start, position = position, position + len(line)
                text = line.strip()
                if text in (b"]", b"}", b""):
                    continue
                if text.endswith(b","):
                    text = text[:-1]
                if wanted is not None and parsed:
                    found = _INDEX.match(text)
                    if found is not None and int(found.group(1)) not in wanted:
                        continue  # a row of ours, not asked for: never parsed
                try:
                    row = decode_line(text)
                except ValueError as exc:
                    if parsed or "not a JSON number" in str(exc) or "too large" in str(exc):
                        raise _problem(self.path, f"a row is not valid JSON ({exc})") from exc
                    raise _NotStreamable from exc
                if not isinstance(row, dict):
                    if parsed:
                        raise _problem(self.path, "a row is not an object")
                    raise _NotStreamable
                parsed = True
                if wanted is None or row.get("row_index") in wanted:
                    if offsets is not None:
                        offsets.append(start)
                    yield row

    def checked_rows(
        self,
        wanted: Container[int] | None = None,
        *,
        transcripts: bool = True,
        offsets: array[int] | None = None,
    ) -> Iterator[CheckedRow]:
        """Each row as written — (row_index, digest, runs, the row object) — its runs
        checked (what a result command reads of them is sound), no record built."""
        for raw in self.raw_rows(wanted, transcripts=transcripts, offsets=offsets):
            yield self._checked(raw)

    def _checked(
        self, raw: dict[str, Any]
    ) -> tuple[int, str, list[dict[str, Any]], dict[str, Any]]:
        index, digest, runs = raw.get("row_index"), raw.get("row_digest", ""), raw.get("runs")
        if not isinstance(index, int) or not whole(index) or not isinstance(runs, list):
            raise _problem(self.path, "a row lacks row_index or runs")
        if digest is not None and not isinstance(digest, str):
            raise _problem(self.path, f"row {index}: row_digest must be text")
        for run in runs:
            if not isinstance(run, dict):
                raise _problem(self.path, f"row {index}: a run is not an object")
            problem = run_problem(run)
            if problem is not None:
                raise _problem(self.path, f"row {index}: a malformed run ({problem})")
        if self.reviewed and any(row == index for row, _ in self.reviewed):
            from osmosis_local_runner.results.reviews.reviews import as_reviewed

            runs = as_reviewed(runs, index, self.reviewed, self.eval_fns, self.pass_threshold)
        return index, str(digest or ""), runs, raw

    def rows_at(self, wanted: Container[int], *, transcripts: bool = True) -> Iterator[Row]:
        """The rows of these row indices."""
        return (row for row in self.rows(wanted, transcripts=transcripts) if row.index in wanted)

    def rows(
        self, wanted: Container[int] | None = None, *, transcripts: bool = True
    ) -> Iterator[Row]:
        """Each row with its attempts as records (``transcripts=False``: without their
        conversations, which are then never parsed)."""
        for checked in self.checked_rows(wanted, transcripts=transcripts):
            yield self._row(*checked)

    def rows_from(self, offsets: Iterable[int]) -> Iterator[Row]:
        """The rows whose lines start at these offsets (from ``raw_rows(offsets=…)``):
        a few rows of a large document without scanning it again."""
        with open_regular(self.path, follow=True) as handle:
            for offset in sorted(set(offsets)):
                handle.seek(offset)
                text = handle.readline().strip().removesuffix(b",")
                try:
                    raw = decode_line(text)
                except ValueError as exc:
                    raise _problem(self.path, f"a row is not valid JSON ({exc})") from exc
                if not isinstance(raw, dict):
                    raise _problem(self.path, "a row is not an object")
                yield self._row(*self._checked(raw))

    def _row(self, index: int, digest: str, runs: list[dict[str, Any]], raw: dict[str, Any]) -> Row:
        known = row_facts(raw)
        facts = compact(known) if known else None  # one string shared by the attempts
        records = []
        for run in runs:
            try:
                record = AttemptRecord.from_json({**run, "row_index": index, "row_digest": digest})
            except (KeyError, TypeError, ValueError) as exc:
                raise _problem(self.path, f"row {index}: a malformed run ({exc})") from exc
            record.row_facts = facts
            records.append(record)
        return Row(
            index,
            str(digest or ""),
            records,
            expected=known.get("expected"),
            metadata=known.get("metadata") or {},
            user_prompt=known.get("prompt"),
        )


#: a row as :meth:`ResultsFile.checked_rows` gives it
CheckedRow = tuple[int, str, list[dict[str, Any]], dict[str, Any]]
#: the start of a row line as our documents write it
_INDEX = re.compile(rb'\{"row_index": (\d{1,18}),')


class _NotStreamable(Exception):
    """The document is valid JSON but not laid out one row per line."""
