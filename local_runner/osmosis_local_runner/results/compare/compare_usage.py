"""``eval compare``'s tokens, truncation and cost: each a column of paired rows
compared as scores are (docs/compare.md). Reasoning length along checkpoints is a
training signal; so are truncation at the context limit and what a run costs."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from osmosis_local_runner.results.compare.pairing import Pairs
from osmosis_local_runner.results.statistics.stats import Interval, mean, paired_interval
from osmosis_local_runner.results.statistics.usage import USAGE_METRICS

#: how each metric is named in tables
LABELS = {
    "output_tokens": "output tokens",
    "reasoning_tokens": "reasoning tokens",
    "truncation_rate": "truncated",
    "cost_usd": "cost (USD)",
}


@dataclass
class UsageComparison:
    """A usage metric — output or reasoning tokens, the truncation rate, the cost — per
    paired row (the mean over its attempts), compared as scores are: B − A with its
    interval. Rows where either side does not know it are left out."""

    metric: str
    pairs: int
    mean_a: float | None
    mean_b: float | None
    diff: float | None
    interval: Interval | None

    def text(self, value: float | None, *, sign: bool = False) -> str:
        """A value of this metric as every output shows it (tokens, a rate, dollars)."""
        if value is None or value != value:
            return "-"
        plus = "+" if sign and value >= 0 else ""
        if self.metric == "truncation_rate":
            return f"{plus}{value:.1%}"
        if self.metric == "cost_usd":
            return f"{plus}{value:.6f}" if abs(value) < 0.01 else f"{plus}{value:.4f}"
        return f"{plus}{value:,.1f}"

    def row(self) -> list[str]:
        """``[metric, A, B, B−A, 95% CI]`` (per paired row, the mean over its attempts)."""
        interval = "-"
        if self.interval is not None:
            low, high = (self.text(v, sign=True) for v in (self.interval.low, self.interval.high))
            interval = f"[{low}, {high}]"
        return [
            LABELS[self.metric],
            self.text(self.mean_a),
            self.text(self.mean_b),
            self.text(self.diff, sign=True),
            interval,
        ]

    def to_json(self) -> dict[str, Any]:
        return {
            "pairs": self.pairs,
            "mean_a": self.mean_a,
            "mean_b": self.mean_b,
            "diff": self.diff,
            "ci_low": self.interval.low if self.interval else None,
            "ci_high": self.interval.high if self.interval else None,
            "ci_method": self.interval.method if self.interval else None,
        }


def compare_usage(pairs: Pairs) -> dict[str, UsageComparison]:
    """Each usage metric both documents counted, B − A over the paired rows."""
    side_a, side_b = pairs.a, pairs.b
    found: dict[str, UsageComparison] = {}
    for metric in USAGE_METRICS:
        column_a, column_b = side_a.usage.get(metric), side_b.usage.get(metric)
        if column_a is None or column_b is None:
            continue
        both = [
            (x, y)
            for pa, pb in zip(pairs.pa, pairs.pb, strict=True)
            if (x := column_a[pa]) == x and (y := column_b[pb]) == y  # NaN ≠ NaN: unknown
        ]
        if not both:
            continue
        diffs = [y - x for x, y in both]
        found[metric] = UsageComparison(
            metric=metric,
            pairs=len(both),
            mean_a=mean([x for x, _ in both]),
            mean_b=mean([y for _, y in both]),
            diff=mean(diffs),
            interval=paired_interval(diffs),
        )
    return found


__all__ = ["UsageComparison", "compare_usage"]
