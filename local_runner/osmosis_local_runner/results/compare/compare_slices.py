"""``eval compare --by COLUMN``: the paired rows sliced by a dataset column, and per value
the comparison ``eval compare`` makes of all rows — means, the paired difference B − A
with its 95% interval, pass rates, flips — over that value's pairs only. A pair takes
A's value of the column (paired rows hold the same content)."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from osmosis_local_runner.results.compare.compare import Comparison, FnComparison, compare_fn
from osmosis_local_runner.results.statistics.scoring import ks_for
from osmosis_local_runner.results.statistics.slices import (
    MAX_SLICES,
    NoSuchColumn,
    order,
    slice_value,
)

#: the keys of a fn's comparison each slice keeps (pass@k stays with the whole run)
SLICE_KEYS = (
    "pairs",
    "mean_a",
    "mean_b",
    "diff",
    "ci_low",
    "ci_high",
    "ci_method",
    "pass_rate_a",
    "pass_rate_b",
    "flipped_to_fail",
    "flipped_to_pass",
    "mcnemar_p",
)


@dataclass
class SliceComparison:
    value: str
    pairs: int
    fns: dict[str, FnComparison]

    def to_json(self) -> dict[str, Any]:
        return {
            "value": self.value,
            "paired_rows": self.pairs,
            "eval_fns": {
                fn: {k: v for k, v in c.to_json().items() if k in SLICE_KEYS}
                for fn, c in self.fns.items()
            },
        }


@dataclass
class SlicedComparison:
    by: str
    slices: list[SliceComparison]
    hidden: int = 0

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"by": self.by, "values": [s.to_json() for s in self.slices]}
        if self.hidden:
            data["values_not_shown"] = self.hidden
        return data


def compare_by(comparison: Comparison, column: str) -> SlicedComparison:
    """Each value of ``column`` among the paired rows (compared with ``by=[column]``)."""
    values = comparison.pairs.a.slices.get(column)
    if values is None:  # not scanned for this column: compare(…, by=[column]) first
        raise NoSuchColumn(column)
    groups: dict[str, list[int]] = defaultdict(list)
    for place, pa in enumerate(comparison.pairs.pa):
        groups[values[pa]].append(place)
    if all(value == slice_value(None, column) for value in groups):
        raise NoSuchColumn(column)
    ks = ks_for(min(comparison.a.n, comparison.b.n))
    found = []
    for value, places in groups.items():
        pairs = comparison.pairs.subset(places)
        fns = {fn: compare_fn(fn, pairs, ks) for fn in comparison.fns}
        found.append(SliceComparison(value, len(pairs), fns))
    ordered = order(found, key=lambda s: s.pairs)
    return SlicedComparison(column, ordered[:MAX_SLICES], max(0, len(ordered) - MAX_SLICES))
