"""A checkpoint sweep: the runs of one series along training, read together — each
statistic by step (per attempt, never a total that grows with the rows), every run against
a baseline (the first step, unless chosen) with the paired comparison of ``eval compare``
and McNemar's p corrected for the N − 1 comparisons (Holm), and for each row the first
checkpoint that solved it.

A run's series and step are what it recorded (``--series``, ``--step``, a watch): never
read out of its name. Runs of another series, without a step, or two at one step are
refused — they are not one curve.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from osmosis_client.errors import InvalidInputError
from osmosis_local_runner.results.documents.documents import ResultsFile

#: what the sweep plots per run, from each run's summary
STATS = ("mean", "pass_at_1", "output_tokens", "reasoning_tokens", "truncation_rate", "cost_usd")
ALPHA = 0.05


@dataclass
class SweepRun:
    name: str
    path: Path
    step: int | None  # recorded by the run
    values: dict[str, float | None]  # per attempt where a total would grow with the rows
    series: str | None = None
    #: the mean's 95 % interval (rows as clusters), when the run has one
    interval: tuple[float, float] | None = None


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


def recorded_step(config: Mapping[str, Any]) -> tuple[str | None, int | None]:
    """A run's series and step, as it recorded them (None: not recorded)."""
    series, step = config.get("series"), config.get("step")
    return (
        series if isinstance(series, str) else None,
        step if isinstance(step, int) and not isinstance(step, bool) else None,
    )


def sweep(runs: Sequence[tuple[str, Path]], baseline: str | None = None) -> Sweep:
    """The sweep of ``runs`` (name, results path) of one series, ordered by their
    recorded step; ``baseline`` names one of them (default: the first step)."""
    from osmosis_local_runner.results.compare.compare import compare

    if len(runs) < 2:
        raise InvalidInputError("a sweep needs two runs or more", code="VALIDATION")
    points = sorted((_point(name, path) for name, path in runs), key=lambda p: p.step or 0)
    _one_curve(points)
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


def _one_curve(points: list[SweepRun]) -> None:
    """The runs make one curve: one series, each at its own recorded step."""
    unplaced = [p.name for p in points if p.series is None or p.step is None]
    if unplaced:
        raise InvalidInputError(
            f"run {unplaced[0]!r} records no series and step: a sweep plots the runs of one "
            "series by the step each recorded",
            hint="run the checkpoints with a series and a step (or watch them)",
            code="VALIDATION",
        )
    series = sorted({str(p.series) for p in points})
    if len(series) > 1:
        raise InvalidInputError(
            f"the runs are of several series ({', '.join(series)}): a sweep is one series",
            code="VALIDATION",
        )
    for before, after in itertools.pairwise(points):
        if before.step == after.step:
            raise InvalidInputError(
                f"runs {before.name!r} and {after.name!r} are both step {before.step} of "
                f"{series[0]}: name the one to plot",
                code="VALIDATION",
            )


def _point(name: str, path: Path) -> SweepRun:
    document = ResultsFile(path)
    summary = document.summary
    fns = summary.get("eval_fns") or {}
    first: dict[str, Any] = next(iter(fns.values()), {}) if isinstance(fns, dict) else {}
    found = summary.get("usage")
    usage: dict[str, Any] = found if isinstance(found, dict) else {}
    per = usage.get("per_attempt") if isinstance(usage.get("per_attempt"), dict) else {}
    values: dict[str, float | None] = {
        "mean": first.get("mean"),
        "pass_at_1": first.get("pass_at_1"),
        "truncation_rate": usage.get("truncation_rate"),
    }
    for key in ("output_tokens", "reasoning_tokens", "cost_usd"):  # per attempt, not totals
        values[key] = ((per or {}).get(key) or {}).get("mean")
    clean = {
        k: float(v) if isinstance(v, int | float) and not isinstance(v, bool) else None
        for k, v in values.items()
    }
    series, step = recorded_step(document.config)
    low, high = first.get("ci_low"), first.get("ci_high")
    interval = None
    if isinstance(low, int | float) and isinstance(high, int | float):
        interval = (float(low), float(high))
    return SweepRun(name, path, step, clean, series, interval)


def _holm(found: list[AgainstBaseline]) -> None:
    """Holm's step-down correction of McNemar's p over the sweep's comparisons."""
    ranked = sorted(found, key=lambda a: a.mcnemar_p)
    m, running = len(ranked), 0.0
    for i, item in enumerate(ranked):
        running = max(running, min(1.0, (m - i) * item.mcnemar_p))
        item.adjusted_p = running
        item.regression = item.high is not None and item.high < 0 and running < ALPHA


def _first_solved(points: list[SweepRun], fn: str) -> dict[str, str | None]:
    """Each row's first run where an attempt passed (rows keyed by prompt, else index)."""
    from osmosis_local_runner.results.statistics.scoring import passed

    first: dict[str, str | None] = {}
    for point in points:
        doc = ResultsFile(point.path)
        for row in doc.rows(transcripts=False):
            key = row.user_prompt or f"row {row.index}"
            solved = any(passed(r, fn, doc.pass_threshold) for r in row.runs)
            if first.get(key) is None:
                first[key] = point.name if solved else None
    return first


__all__ = ["ALPHA", "STATS", "AgainstBaseline", "Sweep", "SweepRun", "recorded_step", "sweep"]
