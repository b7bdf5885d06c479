"""``eval compare A B``: is B better or worse than A, and how sure are we?

Rows are paired by content (the row digest; the k-th duplicate of a row in A pairs
with the k-th in B, in row order) so two runs of the same dataset pair even when they
sampled or ordered rows differently. Per eval fn and paired row, a row's score is the
mean over its (non-skipped) attempts; the comparison is over the paired differences
B − A. docs/compare.md states every definition.
"""

from __future__ import annotations

import heapq
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from osmosis_client.errors import InvalidInputError
from osmosis_local_runner.results.compare.compare_usage import UsageComparison, compare_usage
from osmosis_local_runner.results.compare.pairing import Pairs, RowStats, Side, scan_both, with_text
from osmosis_local_runner.results.documents.documents import ResultsFile, majority_passes
from osmosis_local_runner.results.statistics.scoring import (
    counted_mean,
    ks_for,
    pass_at_k,
    score_text,
)
from osmosis_local_runner.results.statistics.stats import (
    Interval,
    mcnemar_exact,
    mean,
    paired_interval,
    scale_of,
    t_interval,
)

if TYPE_CHECKING:
    from osmosis_local_runner.results.compare.compare_slices import SlicedComparison

WORST_ROWS = 10
#: flipped rows listed per eval fn in ``--json`` (their count is always given)
FLIPS_LISTED = 10_000


@dataclass
class FnComparison:
    fn: str
    pairs: int
    mean_a: float | None
    mean_b: float | None
    diff: float | None
    interval: Interval | None
    t: Interval | None
    pass_rate_a: float | None
    pass_rate_b: float | None
    pass_at_k_a: dict[int, float | None]
    pass_at_k_b: dict[int, float | None]
    flipped_to_fail: int
    flipped_to_pass: int
    mcnemar_p: float
    #: the rows that flipped, in A's row order: (A's position, B's position — in their
    #: documents' row order — "to_fail" | "to_pass")
    flips: list[tuple[int, int, str]] = field(default_factory=list)

    @property
    def overflowed(self) -> bool:
        """B − A (or its interval) is beyond a float's range (scores near ±1.8e308)."""
        values = [self.diff] + ([self.interval.low, self.interval.high] if self.interval else [])
        return any(v is not None and v - v != 0.0 for v in values)

    def diff_text(self, missing: str = "–") -> str:
        return score_text(self.diff, missing, sign=True)

    def interval_text(self, *, method: bool = True, missing: str = "–") -> str:
        """``[-0.317, -0.117] (bootstrap)``: how every output shows the interval."""
        if self.interval is None or self.overflowed:
            return missing
        low, high = self.interval.low, self.interval.high
        text = f"[{score_text(low, sign=True)}, {score_text(high, sign=True)}]"
        return f"{text} ({self.interval.method})" if method else text

    def regressed(self, delta: float) -> bool:
        """B is worse than A by more than ``delta``: the interval lies below −delta."""
        return self.interval is not None and self.interval.high < -delta

    def to_json(self) -> dict[str, Any]:
        return {
            "pairs": self.pairs,
            "mean_a": self.mean_a,
            "mean_b": self.mean_b,
            "diff": _finite(self.diff),
            "ci_low": _finite(self.interval.low) if self.interval else None,
            "ci_high": _finite(self.interval.high) if self.interval else None,
            "ci_method": self.interval.method if self.interval else None,
            "t_ci_low": _finite(self.t.low) if self.t else None,
            "t_ci_high": _finite(self.t.high) if self.t else None,
            "pass_rate_a": self.pass_rate_a,
            "pass_rate_b": self.pass_rate_b,
            "pass_at_k_a": {str(k): v for k, v in self.pass_at_k_a.items()},
            "pass_at_k_b": {str(k): v for k, v in self.pass_at_k_b.items()},
            "flipped_to_fail": self.flipped_to_fail,
            "flipped_to_pass": self.flipped_to_pass,
            "mcnemar_p": self.mcnemar_p,
        }


@dataclass
class WorstRow:
    fn: str
    a: RowStats
    b: RowStats
    score_a: float
    score_b: float

    @property
    def prompt(self) -> str:
        return self.a.prompt or self.b.prompt

    @property
    def expected(self) -> str:
        return self.a.expected or self.b.expected or ""

    @property
    def answer_a(self) -> str:
        """A's best answer to the row (what B fell from)."""
        return self.a.answers[self.fn][0]

    @property
    def answer_b(self) -> str:
        """B's worst answer to the row."""
        return self.b.answers[self.fn][1]

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "row_index": self.a.index,
            "fn": self.fn,
            "score_a": self.score_a,
            "score_b": self.score_b,
            "prompt": self.prompt,
            "expected": self.expected or None,
            "answer_a": self.answer_a,
            "answer_b": self.answer_b,
        }
        if self.b.index != self.a.index:
            data["row_index_b"] = self.b.index
        return data


@dataclass
class Comparison:
    a: ResultsFile
    b: ResultsFile
    pairs: Pairs
    unpaired_a: int
    unpaired_b: int
    fns: dict[str, FnComparison]
    worst: list[WorstRow]
    only_a: list[str] = field(default_factory=list)
    only_b: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    #: the paired rows sliced by a column (compare_slices.compare_by)
    sliced: SlicedComparison | None = None
    #: tokens, truncation and cost, compared (documents that counted usage)
    usage: dict[str, UsageComparison] = field(default_factory=dict)

    def regressions(self, delta: float) -> list[str]:
        return [fn for fn, c in self.fns.items() if c.regressed(delta)]

    def verdict(self, delta: float) -> str:
        """``--fail-if-worse``'s verdict, as every output says it."""
        regressions = self.regressions(delta)
        if regressions:
            return (
                f"REGRESSION: B is worse than A on {', '.join(regressions)} — the 95% interval "
                f"of B−A lies below −{delta:g}"
            )
        return f"no regression established beyond −{delta:g}"

    def flip_views(self, fn: str, limit: int) -> list[tuple[RowStats, RowStats, str]]:
        """The first ``limit`` rows that flipped for ``fn``, as shown (with their text)."""
        side_a, side_b = self.pairs.a, self.pairs.b
        shown = [(side_a.view(pa), side_b.view(pb), d) for pa, pb, d in self.fns[fn].flips[:limit]]
        with_text(self.a, [ra for ra, _, _ in shown])
        with_text(self.b, [rb for _, rb, _ in shown])
        return shown

    def to_json(self, fail_if_worse: float | None = None) -> dict[str, Any]:
        side_a, side_b = self.pairs.a, self.pairs.b
        data: dict[str, Any] = {
            "a": str(self.a.path),
            "b": str(self.b.path),
            "model_a": self.a.model,
            "model_b": self.b.model,
            "paired_rows": len(self.pairs),
            "unpaired": {"a": self.unpaired_a, "b": self.unpaired_b},
            "eval_fns": {fn: c.to_json() for fn, c in self.fns.items()},
            "worst_rows": [w.to_json() for w in self.worst],
            "flipped_rows": [
                {
                    "row_index": side_a.index[pa],
                    "fn": fn,
                    "direction": direction,
                    "score_a": side_a.stats[pa][side_a.position_of(fn)][0],
                    "score_b": side_b.stats[pb][side_b.position_of(fn)][0],
                }
                for fn, c in self.fns.items()
                for pa, pb, direction in c.flips[:FLIPS_LISTED]
            ],
            "flipped_rows_total": sum(len(c.flips) for c in self.fns.values()),
            "only_in_a": self.only_a,
            "only_in_b": self.only_b,
            "notes": self.notes,
            "usage": {metric: c.to_json() for metric, c in self.usage.items()},
        }
        if self.sliced is not None:
            data["slices"] = self.sliced.to_json()
        if fail_if_worse is not None:
            data["fail_if_worse"] = fail_if_worse
            data["regressions"] = self.regressions(fail_if_worse)
        return data


def _mean(values: Sequence[float]) -> float | None:
    return mean(values) if values else None


def _finite(value: float | None) -> float | None:
    """JSON has no Infinity: a statistic beyond a float's range is null."""
    return value if value is not None and value - value == 0.0 else None


def compare_fn(fn: str, pairs: Pairs, ks: Sequence[int]) -> FnComparison:
    side_a, side_b = pairs.a, pairs.b
    fa, fb = side_a.position_of(fn), side_b.position_of(fn)
    # each pair's (mean, attempts, passing) on either side: shared tuples, so a million
    # pairs cost two lists of references
    rows_a = [side_a.stats[p][fa] for p in pairs.pa]
    rows_b = [side_b.stats[p][fb] for p in pairs.pb]
    places: Sequence[int] = range(len(rows_a))
    if any(x[0] is None or y[0] is None for x, y in zip(rows_a, rows_b, strict=True)):
        places = [i for i in places if rows_a[i][0] is not None and rows_b[i][0] is not None]
        rows_a, rows_b = [rows_a[i] for i in places], [rows_b[i] for i in places]
    means_a: list[float] = [x[0] for x in rows_a]  # type: ignore[misc]
    means_b: list[float] = [y[0] for y in rows_b]  # type: ignore[misc]
    # scores near ±1.8e308 are allowed: B − A is computed on exactly scaled values and
    # scaled back (a result beyond a float's range becomes ±inf, shown as missing)
    scale = scale_of(means_a + means_b)
    diffs = [b / scale - a / scale for a, b in zip(means_a, means_b, strict=True)]
    flips = [
        (pairs.pa[i], pairs.pb[i], "to_fail" if was else "to_pass")
        for i, x, y in zip(places, rows_a, rows_b, strict=True)
        if (was := majority_passes(x[1], x[2])) != majority_passes(y[1], y[2])
    ]
    to_fail = sum(direction == "to_fail" for _, _, direction in flips)
    to_pass = len(flips) - to_fail
    counts_a = Counter((x[1], x[2]) for x in rows_a)
    counts_b = Counter((y[1], y[2]) for y in rows_b)
    return FnComparison(
        fn=fn,
        pairs=len(rows_a),
        mean_a=_mean(means_a),
        mean_b=_mean(means_b),
        diff=None if not diffs else mean(diffs) * scale,
        interval=_scaled(paired_interval(diffs), scale),
        t=_scaled(t_interval(diffs), scale),
        pass_rate_a=counted_mean(counts_a, lambda n, c: c / n),
        pass_rate_b=counted_mean(counts_b, lambda n, c: c / n),
        pass_at_k_a={k: counted_mean(counts_a, partial(pass_at_k, k=k), k) for k in ks},
        pass_at_k_b={k: counted_mean(counts_b, partial(pass_at_k, k=k), k) for k in ks},
        flipped_to_fail=to_fail,
        flipped_to_pass=to_pass,
        flips=flips,
        mcnemar_p=mcnemar_exact(to_fail, to_pass),
    )


def _scaled(interval: Interval | None, scale: float) -> Interval | None:
    if interval is None or scale == 1.0:
        return interval
    return Interval(interval.low * scale, interval.high * scale, interval.method)


def worst_rows(fn: str, pairs: Pairs, limit: int = WORST_ROWS) -> list[WorstRow]:
    """The ``limit`` largest drops (B below A), largest first (their text not yet read)."""
    side_a, side_b = pairs.a, pairs.b
    fa, fb = side_a.position_of(fn), side_b.position_of(fn)
    drops = heapq.nsmallest(
        limit,
        (
            (sb - sa, side_a.index[pa], pa, pb, sa, sb)
            for pa, pb in zip(pairs.pa, pairs.pb, strict=True)
            if (sa := side_a.stats[pa][fa][0]) is not None
            and (sb := side_b.stats[pb][fb][0]) is not None
            and sb < sa
        ),
    )
    return [
        WorstRow(fn, side_a.view(pa), side_b.view(pb), sa, sb) for _, _, pa, pb, sa, sb in drops
    ]


def compare(
    path_a: Path,
    path_b: Path,
    *,
    eval_fns: Sequence[str] | None = None,
    by: Sequence[str] = (),
    reviewed: bool = False,
) -> Comparison:
    """A against B; ``by``: columns whose values each paired row keeps (compare_slices);
    ``reviewed``: attempts people reviewed count as they judged them (``results.reviews``)."""
    a, b = ResultsFile(path_a), ResultsFile(path_b)
    if reviewed:
        a.use_reviews()
        b.use_reviews()
    shared = shared_fns(a, b, eval_fns)
    side_a, side_b = scan_both(a, b, shared, by)
    return compare_sides(side_a, side_b, shared)


def compare_sides(side_a: Side, side_b: Side, shared: Sequence[str]) -> Comparison:
    """The comparison of two documents already scanned (their sides hold ``shared``)."""
    a, b, path_a, path_b = side_a.doc, side_b.doc, side_a.doc.path, side_b.doc.path
    pairs = Pairs.of(side_a, side_b)
    if not pairs:
        raise InvalidInputError(
            f"no row of {path_a} is in {path_b}",
            hint="compare two runs of the same dataset (rows are paired by content)",
            code="NO_COMMON_ROWS",
        )
    fns = {fn: compare_fn(fn, pairs, ks_for(min(a.n, b.n))) for fn in shared}
    worst = [w for fn in shared for w in worst_rows(fn, pairs)]
    with_text(a, [w.a for w in worst])
    with_text(b, [w.b for w in worst])
    return Comparison(
        a=a,
        b=b,
        pairs=pairs,
        unpaired_a=pairs.unpaired_a,
        unpaired_b=pairs.unpaired_b,
        fns=fns,
        worst=worst,
        usage=compare_usage(pairs),
        only_a=[fn for fn in a.eval_fns if fn not in b.eval_fns],
        only_b=[fn for fn in b.eval_fns if fn not in a.eval_fns],
        notes=_notes(a, b, len(pairs), pairs.unpaired_a, pairs.unpaired_b, fns),
    )


def shared_fns(a: ResultsFile, b: ResultsFile, eval_fns: Sequence[str] | None) -> list[str]:
    """The eval fns compared: those both documents have (``eval_fns`` among them)."""
    shared = [fn for fn in a.eval_fns if fn in b.eval_fns]
    if eval_fns:
        unknown = [fn for fn in eval_fns if fn not in shared]
        if unknown:
            raise InvalidInputError(
                f"eval fn {unknown[0]!r} is not in both documents",
                hint="eval fns in both: " + (", ".join(shared) or "none"),
                code="UNKNOWN_EVAL_FN",
            )
        shared = list(eval_fns)
    if not shared:
        raise InvalidInputError(
            "the two documents share no eval fn "
            f"(A: {', '.join(a.eval_fns) or 'none'}; B: {', '.join(b.eval_fns) or 'none'})",
            hint="compare runs scored by the same eval fns, or rescore one of them",
            code="NOTHING_TO_COMPARE",
        )
    return shared


def _notes(
    a: ResultsFile,
    b: ResultsFile,
    pairs: int,
    unpaired_a: int,
    unpaired_b: int,
    fns: dict[str, FnComparison],
) -> list[str]:
    notes = []
    if a.pass_threshold != b.pass_threshold:
        notes.append(
            f"pass thresholds differ (A {a.pass_threshold:g}, B {b.pass_threshold:g}): "
            "pass rates and flips use each run's own"
        )
    if unpaired_a or unpaired_b:
        notes.append(f"{unpaired_a} rows only in A and {unpaired_b} only in B are not compared")
    if pairs < 2:
        notes.append("fewer than two paired rows: no interval")
    for fn, comparison in fns.items():
        if comparison.overflowed:
            notes.append(
                f"{fn}: B − A is beyond the range of a number (scores near ±1.8e308); "
                "its difference and interval are not shown"
            )
    return notes
