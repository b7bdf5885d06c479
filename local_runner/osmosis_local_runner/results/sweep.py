"""A checkpoint sweep: N runs of one config and dataset along training, read together —
each statistic by step, every run against a baseline (the oldest, unless chosen) with the
paired comparison of ``eval compare`` and McNemar's p corrected for the N − 1 comparisons
(Holm), and for each row the first checkpoint that solved it.

The step of a run is the last number in its name (``step-300`` → 300); runs without one
keep the order given.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from osmosis_client.errors import InvalidInputError
from osmosis_local_runner.results.documents import ResultsFile

#: what the sweep plots per run, from each run's summary
STATS = ("mean", "pass_at_1", "output_tokens", "reasoning_tokens", "truncation_rate", "cost_usd")
ALPHA = 0.05


@dataclass
class SweepRun:
    name: str
    path: Path
    step: int | None
    values: dict[str, float | None]


@dataclass
class AgainstBaseline:
    name: str
    diff: float | None
    low: float | None
    high: float | None
    mcnemar_p: float
    #: McNemar's p after Holm's correction for the sweep's comparisons
    adjusted_p: float = 1.0
    #: B worse than the baseline: the interval below 0 and the corrected p under ALPHA
    regression: bool = False


@dataclass
class Sweep:
    fn: str
    runs: list[SweepRun]
    baseline: str
    against: list[AgainstBaseline]
    #: row (by its prompt, else its index) → the first run that solved it (None: never)
    first_solved: dict[str, str | None] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        from dataclasses import asdict

        found = asdict(self)
        for run in found["runs"]:
            run["path"] = str(run["path"])
        return found


def step_of(name: str) -> int | None:
    found = re.search(r"(\d+)(?!.*\d)", name)
    return int(found.group(1)) if found else None


def sweep(runs: Sequence[tuple[str, Path]], baseline: str | None = None) -> Sweep:
    """The sweep of ``runs`` (name, results path), ordered by step; ``baseline`` names
    one of them (default: the first by step)."""
    from osmosis_local_runner.results.compare import compare

    if len(runs) < 2:
        raise InvalidInputError("a sweep needs two runs or more", code="VALIDATION")
    ordered = sorted(enumerate(runs), key=lambda p: (step_of(p[1][0]) is None,
                                                      step_of(p[1][0]) or 0, p[0]))  # fmt: skip
    points = [_point(name, path) for _, (name, path) in ordered]
    fns = [f for f in ResultsFile(points[0].path).eval_fns]
    if not fns:
        raise InvalidInputError("the runs have no eval fn to follow", code="VALIDATION")
    base = next((p for p in points if p.name == baseline), points[0]) if baseline else points[0]
    if baseline and base.name != baseline:
        raise InvalidInputError(f"{baseline!r} is not one of the sweep's runs", code="VALIDATION")
    against = []
    for point in points:
        if point is base:
            continue
        c = compare(base.path, point.path, eval_fns=fns[:1]).fns[fns[0]]
        low, high = (c.interval.low, c.interval.high) if c.interval else (None, None)
        against.append(AgainstBaseline(point.name, c.diff, low, high, c.mcnemar_p))
    _holm(against)
    return Sweep(fns[0], points, base.name, against, _first_solved(points, fns[0]))


def _point(name: str, path: Path) -> SweepRun:
    summary = ResultsFile(path).summary
    fns = summary.get("eval_fns") or {}
    first: dict[str, Any] = next(iter(fns.values()), {}) if isinstance(fns, dict) else {}
    found = summary.get("usage")
    usage: dict[str, Any] = found if isinstance(found, dict) else {}
    values: dict[str, float | None] = {
        "mean": first.get("mean"), "pass_at_1": first.get("pass_at_1"),
        "output_tokens": usage.get("output_tokens"),
        "reasoning_tokens": usage.get("reasoning_tokens"),
        "truncation_rate": usage.get("truncation_rate"),
        "cost_usd": usage.get("cost_usd"),
    }  # fmt: skip
    clean = {k: float(v) if isinstance(v, int | float) and not isinstance(v, bool) else None
             for k, v in values.items()}  # fmt: skip
    return SweepRun(name, path, step_of(name), clean)


def _holm(found: list[AgainstBaseline]) -> None:
    """Holm's step-down correction of McNemar's p over the sweep's comparisons."""
    ranked = sorted(found, key=lambda a: a.mcnemar_p)
    m, running = len(ranked), 0.0
    for i, item in enumerate(ranked):
        running = max(running, min(1.0, (m - i) * item.mcnemar_p))
        item.adjusted_p = running
        item.regression = (item.high is not None and item.high < 0 and running < ALPHA)


def _first_solved(points: list[SweepRun], fn: str) -> dict[str, str | None]:
    """Each row's first run where an attempt passed (rows keyed by prompt, else index)."""
    from osmosis_local_runner.results.scoring import passed

    first: dict[str, str | None] = {}
    for point in points:
        doc = ResultsFile(point.path)
        for row in doc.rows(transcripts=False):
            key = row.user_prompt or f"row {row.index}"
            solved = any(passed(r, fn, doc.pass_threshold) for r in row.runs)
            if first.get(key) is None:
                first[key] = point.name if solved else None
    return first


__all__ = ["ALPHA", "STATS", "AgainstBaseline", "Sweep", "SweepRun", "step_of", "sweep"]
