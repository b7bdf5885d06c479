"""``compare_runs(a, b)``: is B better or worse than A, and how sure are we — exactly what
``osmosis eval compare A B --json`` prints (the CLI calls this)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from osmosis_local_runner.api.results import EvalResult, run_path
from osmosis_local_runner.results.compare.compare import Comparison
from osmosis_local_runner.results.statistics.sweep import Sweep

RunRef = EvalResult | str | Path


class CompareResult:
    """The paired comparison: per eval fn B − A with its 95 % interval, pass rates and
    pass@k, flipped rows with McNemar's test, the largest drops (and ``by``'s slices)."""

    def __init__(self, comparison: Comparison) -> None:
        self.comparison = comparison

    def to_dict(self, fail_if_worse: float | None = None) -> dict[str, Any]:
        """The ``eval compare --json`` document's data (``fail_if_worse``: its verdict)."""
        return self.comparison.to_json(fail_if_worse)

    def regressions(self, delta: float) -> list[str]:
        """The eval fns on which B is established worse than A by more than ``delta``."""
        return self.comparison.regressions(delta)

    def __repr__(self) -> str:
        fns = ", ".join(
            f"{fn}: {c.diff_text()} [{c.interval_text(method=False)}]"
            for fn, c in self.comparison.fns.items()
        )
        return f"CompareResult({fns})"


def compare_runs(
    a: RunRef,
    b: RunRef,
    *,
    eval_fns: Sequence[str] | None = None,
    by: str | None = None,
    root: Path | None = None,
    reviewed: bool = False,
) -> CompareResult:
    """A (the baseline) against B (the candidate): results, run directories, run names.
    ``reviewed``: attempts people reviewed (``EvalResult.review``) count as they judged."""
    from osmosis_local_runner.results.compare.compare import compare

    comparison = compare(
        _path(a, root), _path(b, root), eval_fns=eval_fns, by=[by] if by else (), reviewed=reviewed
    )
    if by:
        from osmosis_local_runner.results.compare.compare_slices import compare_by

        comparison.sliced = compare_by(comparison, by)
    return CompareResult(comparison)


def sweep_runs(
    refs: Sequence[RunRef], *, baseline: RunRef | None = None, root: Path | None = None
) -> Sweep:
    """Runs along training read together (what the viewer's sweep page shows): ordered by
    the number in their names; each statistic by step; every run against ``baseline``
    (default: the first step) with McNemar's p corrected for the comparisons (Holm) and
    regressions flagged; each row's first checkpoint that solved it."""
    from osmosis_local_runner.api.results import _name_of
    from osmosis_local_runner.results.statistics.sweep import sweep

    def named(ref: RunRef) -> tuple[str, Path]:
        path = _path(ref, root)
        return (ref.name if isinstance(ref, EvalResult) else _name_of(path)), path

    runs = [named(ref) for ref in refs]
    return sweep(runs, named(baseline)[0] if baseline is not None else None)


def _path(ref: RunRef, root: Path | None) -> Path:
    return ref.path if isinstance(ref, EvalResult) else run_path(ref, root=root)


__all__ = ["CompareResult", "compare_runs", "sweep_runs"]
