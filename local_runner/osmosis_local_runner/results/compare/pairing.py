"""What a comparison keeps of each row, and how the rows of two runs pair: by content,
the k-th duplicate of a row in A with the k-th in B.

A comparison never holds a transcript, nor a row's text: each document is scanned once
into columns (:class:`Side`: row index, digest and, per eval fn, the row's mean score,
attempts and passing attempts — repeated values shared), so a million-row run compares
in a few hundred megabytes. The few rows a comparison shows (its largest drops, the first
flips) are read again for their text (:func:`with_text`), by row index, parsing only
those rows.
"""

from __future__ import annotations

import operator
import os
from array import array
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from osmosis_client.errors import InvalidInputError, OsmosisError
from osmosis_local_runner.results.documents.documents import ResultsFile, excerpt, majority_passes
from osmosis_local_runner.results.statistics.scoring import attempt_passes
from osmosis_local_runner.results.statistics.slices import slice_value
from osmosis_local_runner.results.statistics.stats import mean
from osmosis_local_runner.results.statistics.usage import USAGE_METRICS, row_usage

#: a row's statistics for one eval fn: (mean score or None, attempts, passing attempts,
#: attempts that errored or whose eval fn raised)
FnStats = tuple[float | None, int, int, int]


class Side:
    """One document's rows as columns, in the order written."""

    def __init__(
        self,
        doc: ResultsFile,
        fns: Sequence[str],
        by: Sequence[str] = (),
        *,
        columns: int = 0,
    ) -> None:
        """``columns``: also collect each metadata column's distinct values (up to this
        many per column, one more to tell there are more), and while a column has no more
        than that, its value in every row (in ``slices``, as ``by`` columns are)."""
        self.doc = doc
        self.values: dict[str, set[str]] = {}
        self.fns = tuple(fns)
        self.by = tuple(by)
        self.index = array("q")
        self.digest: list[str] = []
        #: per row, per eval fn (in ``fns`` order): FnStats — equal tuples are one object
        self.stats: list[tuple[FnStats, ...]] = []
        self.slices: dict[str, list[str]] = {column: [] for column in self.by}
        shared: dict[object, object] = {}
        memo: dict[tuple[Any, ...], tuple[FnStats, ...]] = {}

        def one(value: object) -> object:
            return shared.setdefault(value, value)

        threshold = doc.pass_threshold
        # a million rows: each attribute lookup saved counts
        index_append = self.index.append
        digest_append = self.digest.append
        stats_append = self.stats.append
        #: per row, the mean over its attempts of each usage metric (NaN: not known) —
        #: only for a document that counted usage
        self.usage: dict[str, array[float]] = (
            {metric: array("d") for metric in USAGE_METRICS} if doc.summary.get("usage") else {}
        )
        #: where each row's line starts: the rows a comparison shows are read back by it
        self.offsets: array[int] | None = array("q")
        for index, digest, runs, raw in doc.checked_rows(transcripts=False, offsets=self.offsets):
            index_append(index)
            digest_append(digest)
            stats_append(_row_stats(runs, self.fns, threshold, one, memo))
            if self.usage:
                row_usage(runs, self.usage)
            if self.by or columns:
                metadata = raw.get("metadata") if isinstance(raw.get("metadata"), dict) else None
                for column in self.by:
                    self.slices[column].append(one(slice_value(metadata, column)))  # type: ignore[arg-type]
                if columns:
                    self._collect(metadata or {}, columns, one)

        if len(self.offsets) != len(self.index):
            self.offsets = None  # not laid out a row per line: read back by index

    def _collect(self, metadata: dict[str, Any], limit: int, one: Any) -> None:
        """Each column's distinct values, and its value per row while it has few."""
        row = len(self.index) - 1
        for column in metadata:
            seen = self.values.get(column)
            if seen is None:
                seen = self.values[column] = set()
                if column not in self.slices:
                    self.slices[column] = [one(slice_value(None, column))] * row
            if len(seen) <= limit:
                seen.add(slice_value(metadata, column))
        for column, values in list(self.slices.items()):
            if column in self.by:
                continue
            if len(self.values.get(column, ())) > limit:
                del self.slices[column]  # an identifier: not a slice
            else:
                values.append(one(slice_value(metadata, column)))

    def __len__(self) -> int:
        return len(self.index)

    def position_of(self, fn: str) -> int:
        return self.fns.index(fn)

    def view(self, position: int) -> RowStats:
        """The row at ``position`` as a comparison shows it (its text filled later)."""
        stats = self.stats[position]
        return RowStats(
            index=self.index[position],
            digest=self.digest[position],
            means={fn: s[0] for fn, s in zip(self.fns, stats, strict=True)},
            passes={fn: (s[1], s[2]) for fn, s in zip(self.fns, stats, strict=True)},
            slices={column: values[position] for column, values in self.slices.items()},
            offset=None if self.offsets is None else self.offsets[position],
        )


def _row_stats(
    runs: list[dict[str, Any]],
    fns: tuple[str, ...],
    threshold: float,
    one: Any,
    memo: dict[tuple[Any, ...], tuple[FnStats, ...]],
) -> tuple[FnStats, ...]:
    """A row's :data:`FnStats` per eval fn, over its scored attempts (primary, not
    skipped), shared with every equal row. One plain attempt — n = 1, the usual — is
    looked up by (success, its scores): a run has few distinct ones."""
    if len(runs) == 1:
        get = runs[0].get
        if get("model_tag") in (None, "primary") and get("skipped") is not True:
            scores = runs[0]["scores"]
            key = (get("success") is True, *[scores.get(fn, 0.0) for fn in fns])
            if get("fn_errors"):
                key += (tuple(get("fn_errors") or ()),)
            found = memo.get(key)
            if found is None:
                found = memo[key] = _one_attempt(runs[0], fns, threshold, one)
            return found
    return one(_many_attempts(runs, fns, threshold, one))  # type: ignore[no-any-return]


def _one_attempt(
    run: dict[str, Any], fns: tuple[str, ...], threshold: float, one: Any
) -> tuple[FnStats, ...]:
    ok = run.get("success") is True
    fn_errors = run.get("fn_errors") or ()
    scores = run["scores"]
    return one(  # type: ignore[no-any-return]
        tuple(
            [
                one(
                    (
                        float(scores.get(fn, 0.0)),
                        1,
                        int(ok and fn not in fn_errors and scores.get(fn, 0.0) >= threshold),
                        int(not ok or fn in fn_errors),
                    )
                )
                for fn in fns
            ]
        )
    )


def _many_attempts(
    runs: list[dict[str, Any]], fns: tuple[str, ...], threshold: float, one: Any
) -> tuple[FnStats, ...]:
    scored = [
        r for r in runs if r.get("model_tag") in (None, "primary") and r.get("skipped") is not True
    ]
    row: list[FnStats] = []
    for fn in fns:
        values = [float(r["scores"].get(fn, 0.0)) for r in scored]
        passing = sum(
            attempt_passes(
                r.get("success") is True, False, r.get("fn_errors"), r["scores"], fn, threshold
            )
            for r in scored
        )
        errored = sum(
            r.get("success") is not True or fn in (r.get("fn_errors") or ()) for r in scored
        )
        row.append(one((mean(values) if values else None, len(scored), passing, errored)))
    return tuple(row)


#: both documents at least this large: B is scanned in a second process beside A
PARALLEL_BYTES = 64 << 20


def scan_both(
    a: ResultsFile, b: ResultsFile, fns: Sequence[str], by: Sequence[str] = ()
) -> tuple[Side, Side]:
    """A's and B's sides; two large documents are scanned at once, B in a forked process
    (parsing is most of a large comparison's time, and a machine has more than one core)."""
    if min(_size(a), _size(b)) < PARALLEL_BYTES or (os.cpu_count() or 1) < 2:
        return Side(a, fns, by), Side(b, fns)
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    try:
        context = multiprocessing.get_context("fork")
    except ValueError:  # no fork here: one after the other
        return Side(a, fns, by), Side(b, fns)
    with ProcessPoolExecutor(1, mp_context=context) as pool:
        future = pool.submit(_scan, b, tuple(fns))
        side_a = Side(a, fns, by)
        outcome = future.result()
    if isinstance(outcome, Side):
        return side_a, outcome
    message, hint, code, data = outcome
    raise InvalidInputError(message, hint=hint, code=code, data=data)


def _scan(
    doc: ResultsFile, fns: tuple[str, ...]
) -> Side | tuple[str, str | None, str, dict[str, Any]]:
    """In the second process: B's side, or its input error as plain values."""
    try:
        return Side(doc, fns)
    except OsmosisError as exc:
        return exc.message, exc.hint, exc.code, exc.data


def _size(doc: ResultsFile) -> int:
    try:
        return doc.path.stat().st_size
    except OSError:
        return 0


@dataclass
class RowStats:
    """A row as a comparison shows it: its statistics and, once read, its text."""

    index: int
    digest: str
    means: dict[str, float | None]
    passes: dict[str, tuple[int, int]]  # fn → (attempts, passing attempts)
    prompt: str = ""
    #: fn → (the answer of its best-scoring attempt, of its worst-scoring attempt)
    answers: dict[str, tuple[str, str]] = field(default_factory=dict)
    #: column → the row's value, for the columns a comparison is sliced by
    slices: dict[str, str] = field(default_factory=dict)
    expected: str | None = None
    offset: int | None = None  # where the row's line starts in its document, when known

    def majority_passes(self, fn: str) -> bool:
        """A row passes when more than half of its attempts pass."""
        return majority_passes(*self.passes[fn])


def with_text(doc: ResultsFile, views: Iterable[RowStats]) -> None:
    """Fill in the prompt, expected answer and answers of these rows: read back from
    where their lines start, else in one more pass parsing only their rows."""
    wanted: dict[int, list[RowStats]] = {}
    for view in views:
        wanted.setdefault(view.index, []).append(view)
    if not wanted:
        return
    offsets = [v.offset for views in wanted.values() for v in views]
    rows = (
        doc.rows_from(o for o in offsets if o is not None)
        if None not in offsets
        else doc.rows_at(set(wanted))
    )
    for row in rows:
        runs = row.scored()
        for view in wanted.get(row.index, []):
            view.prompt = excerpt(row.prompt())
            view.expected = excerpt(row.expected) if row.expected is not None else None
            for fn in view.means:
                ranked = sorted(runs, key=lambda r: (r.scores.get(fn, 0.0), -r.run_index))
                view.answers[fn] = (
                    (excerpt(ranked[-1].answer), excerpt(ranked[0].answer)) if ranked else ("", "")
                )


@dataclass
class Pairs:
    """The paired rows of two sides: A's and B's positions, in A's row order."""

    a: Side
    b: Side
    pa: array[int]
    pb: array[int]
    unpaired_a: int = 0
    unpaired_b: int = 0

    @classmethod
    def of(cls, a: Side, b: Side) -> Pairs:
        pa, pb, unpaired_a, unpaired_b = pair_sides(a, b)
        return cls(a, b, pa, pb, unpaired_a, unpaired_b)

    def __len__(self) -> int:
        return len(self.pa)

    def __iter__(self) -> Iterator[tuple[RowStats, RowStats]]:
        """Each pair as shown (no text): for small comparisons and tests."""
        for pa, pb in zip(self.pa, self.pb, strict=True):
            yield self.a.view(pa), self.b.view(pb)

    def subset(self, keep: Iterable[int]) -> Pairs:
        """The pairs at these places (in order)."""
        kept = list(keep)
        return Pairs(
            self.a,
            self.b,
            array("q", (self.pa[i] for i in kept)),
            array("q", (self.pb[i] for i in kept)),
        )


def pair_sides(a: Side, b: Side) -> tuple[array[int], array[int], int, int]:
    """Pairs by content digest (duplicates in row order); rows without a digest pair by
    row index — all rows do when one side has no digests at all (e.g. a hosted run whose
    dataset is not here). Returns (A's positions, B's positions — paired, in A's row
    order — unpaired in A, unpaired in B)."""
    by_digest = any(a.digest) and any(b.digest)

    def keys(side: Side) -> list[str]:
        if by_digest and all(side.digest):
            return side.digest  # the usual: every row has its digest
        return [
            digest if by_digest and digest else f"#{index}"
            for index, digest in zip(side.index, side.digest, strict=True)
        ]

    keys_a, keys_b = keys(a), keys(b)
    unique_b = dict(zip(keys_b, range(len(b)), strict=True))
    if len(unique_b) == len(b) and len(set(keys_a)) == len(a):
        return _pair_unique(a, b, keys_a, unique_b)
    # B's positions by key, in row order: one int, or a list for a repeated row
    waiting: dict[str, int | list[int]] = {}
    for position in _row_order(b):
        key = keys_b[position]
        held = waiting.get(key)
        if held is None:
            waiting[key] = position
        elif isinstance(held, int):
            waiting[key] = [held, position]
        else:
            held.append(position)
    taken: dict[str, int] = {}
    pa, pb = array("q"), array("q")
    for position in _row_order(a):
        key = keys_a[position]
        held = waiting.get(key)
        if held is None:
            continue
        count = taken.get(key, 0)
        candidates = [held] if isinstance(held, int) else held
        if count < len(candidates):
            pa.append(position)
            pb.append(candidates[count])
            taken[key] = count + 1
    return pa, pb, len(a) - len(pa), len(b) - len(pa)


def _pair_unique(
    a: Side, b: Side, keys_a: list[str], positions_b: dict[str, int]
) -> tuple[array[int], array[int], int, int]:
    """No repeated row on either side (the usual): pairing is one look-up per row."""
    found = list(map(positions_b.get, keys_a))
    paired = [p for p in _row_order(a) if found[p] is not None]
    pa, pb = array("q", paired), array("q", [found[p] or 0 for p in paired])
    return pa, pb, len(a) - len(pa), len(b) - len(pa)


def _row_order(side: Side) -> Sequence[int]:
    """A side's positions in row-index order (already so when written in order)."""
    index = side.index
    if all(map(operator.le, index, index[1:])):
        return range(len(index))
    return sorted(range(len(index)), key=index.__getitem__)
