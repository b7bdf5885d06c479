"""Every statistic broken down by a dataset column (``--by difficulty``, ``[local]
slice_by``): per value of the column, the rows, attempts, mean and pass@k of each eval
fn — computed exactly as the run's summary computes them, over that value's rows only.

A row's value is its dataset column as the results keep it (``metadata``): text as is,
numbers and booleans as JSON writes them, anything else as compact JSON; a row without
the column is ``(none)``. Comparisons slice the paired rows the same way (compare.py).
"""

from __future__ import annotations

import json
from array import array
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from osmosis_client.errors import InvalidInputError
from osmosis_local_runner.results.documents.records import AttemptRecord
from osmosis_local_runner.results.statistics.scoring import describe, ks_for, mean_pass_at_k, passed

MISSING = "(none)"
#: a column with more distinct values is an identifier, not a slice: only the largest
#: this many values are shown (the rest are counted)
MAX_SLICES = 50
#: a value's text is cut here (a slice is named, not quoted)
MAX_VALUE = 60


def slice_value(metadata: Mapping[str, Any] | None, column: str) -> str:
    """The text a row's ``column`` is sliced by."""
    value = (metadata or {}).get(column)
    if value is None:
        return MISSING
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True)
    text = " ".join(text.split()) or '""'
    return text if len(text) <= MAX_VALUE else text[: MAX_VALUE - 1] + "…"


@dataclass
class Slice:
    """One value of the column: its rows and their statistics per eval fn."""

    value: str
    rows: int = 0
    attempts: int = 0
    #: fn → every attempt's score (summed by ``describe``: no overflow near ±1.8e308)
    _scores: dict[str, array[float]] = field(default_factory=dict, repr=False)
    #: fn → per row (attempts, passing attempts)
    _passes: dict[str, list[tuple[int, int]]] = field(default_factory=dict, repr=False)
    #: per row, the mean score of the first eval fn (what a chart of the slice bins)
    row_means: array[float] = field(default_factory=lambda: array("d"), repr=False)

    def add(self, runs: Sequence[AttemptRecord], fns: Sequence[str], threshold: float) -> None:
        scored = [r for r in runs if not r.skipped]
        if not scored:
            return
        self.rows += 1
        self.attempts += len(scored)
        for number, fn in enumerate(fns):
            scores = self._scores.setdefault(fn, array("d"))
            before = len(scores)
            scores.extend(float(r.scores.get(fn, 0.0)) for r in scored)
            if number == 0:
                self.row_means.append(describe(scores[before:])["mean"] or 0.0)
            passing = sum(passed(r, fn, threshold) for r in scored)
            self._passes.setdefault(fn, []).append((len(scored), passing))

    def stats(self, fn: str, n: int) -> dict[str, float | None]:
        values: dict[str, float | None] = {"mean": describe(self._scores.get(fn, []))["mean"]}
        counts = self._passes.get(fn, [])
        for k in ks_for(n):
            values[f"pass_at_{k}"] = mean_pass_at_k(counts, k)
        return values

    def to_json(self, fns: Sequence[str], n: int) -> dict[str, Any]:
        return {
            "value": self.value,
            "rows": self.rows,
            "attempts": self.attempts,
            "eval_fns": {fn: self.stats(fn, n) for fn in fns},
        }


@dataclass
class Slices:
    """A run's rows sliced by one column, largest slice first."""

    by: str
    slices: list[Slice]
    #: values beyond MAX_SLICES (their rows are in no slice shown)
    hidden: int = 0

    def to_json(self, fns: Sequence[str], n: int) -> dict[str, Any]:
        data: dict[str, Any] = {
            "by": self.by,
            "values": [s.to_json(fns, n) for s in self.slices],
        }
        if self.hidden:
            data["values_not_shown"] = self.hidden
        return data


def slice_rows(
    rows: Iterable[tuple[Mapping[str, Any] | None, Sequence[AttemptRecord]]],
    column: str,
    fns: Sequence[str],
    threshold: float,
) -> Slices:
    """``(metadata, attempts)`` per row → the slices of ``column`` (only the run's own
    model's attempts count, as in the summary)."""
    found = slice_columns(rows, [column], fns, threshold)[column]
    if all(s.value == MISSING for s in found.slices):
        raise NoSuchColumn(column)
    return found


def slice_columns(
    rows: Iterable[tuple[Mapping[str, Any] | None, Sequence[AttemptRecord]]],
    columns: Sequence[str],
    fns: Sequence[str],
    threshold: float,
) -> dict[str, Slices]:
    """Several columns in one pass over the rows."""
    found: dict[str, dict[str, Slice]] = {column: {} for column in columns}
    for metadata, runs in rows:
        own = [r for r in runs if r.model_tag is None]
        for column in columns:
            value = slice_value(metadata, column)
            found[column].setdefault(value, Slice(value)).add(own, fns, threshold)
    result = {}
    for column, by_value in found.items():
        ordered = order(list(by_value.values()), key=lambda s: s.rows)
        result[column] = Slices(column, ordered[:MAX_SLICES], max(0, len(ordered) - MAX_SLICES))
    return result


def order(slices: list[Any], key: Any) -> list[Any]:
    """Largest first, ``(none)`` last, ties by value (numbers in number order)."""

    def rank(item: Any) -> tuple[bool, int, tuple[int, float, str]]:
        value = item.value
        try:
            number = (0, float(value), "")
        except ValueError:
            number = (1, 0.0, value)
        return (value == MISSING, -key(item), number)

    return sorted(slices, key=rank)


def slices_of_records(
    rows: Mapping[int, Sequence[AttemptRecord]],
    column: str,
    fns: Sequence[str],
    threshold: float,
) -> Slices:
    """The slices of a run being written (records carry their row's facts as text)."""

    def facts(runs: Sequence[AttemptRecord]) -> Mapping[str, Any] | None:
        text = next((r.row_facts for r in runs if r.row_facts), None)
        metadata = json.loads(text).get("metadata") if text else None
        return metadata if isinstance(metadata, dict) else None

    return slice_rows(((facts(runs), runs) for runs in rows.values()), column, fns, threshold)


def check_column(column: str | None, columns: Iterable[str]) -> None:
    """Before a run: the column it is sliced by must be one of the dataset's."""
    known = sorted(columns)
    if column is not None and column not in known:
        raise NoSuchColumn(column, known)


class NoSuchColumn(InvalidInputError):
    """No row has the column a run or comparison was sliced by."""

    code = "NO_SUCH_COLUMN"

    def __init__(self, column: str, columns: Sequence[str] | None = None) -> None:
        known = ", ".join(columns[:20]) if columns else None
        super().__init__(
            f"no row has a column {column!r} to slice by",
            hint=f"slice by one of its columns: {known}"
            if known
            else "slice by a column of the dataset (other than the prompt and expected answer)",
            data={"column": column, "columns": list(columns or [])},
        )
