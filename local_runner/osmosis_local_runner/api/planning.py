"""``plan_rows`` (``osmosis eval plan``): how many rows a paired comparison needs to see a
difference, and the smallest difference the rows one has can see — from a pilot's
observed spread of per-row differences (two runs on the same rows), from one run's spread
of row means and an assumed correlation between the two runs, or from a spread given.

With a pilot whose rows had two attempts or more, the spread splits into the part of
the rows themselves and the part of the attempts (``results/intervals.variance_split``):
``σ²_diff(K) = between + within / K``, so the plan also says how many rows each number of
attempts per row needs — more attempts shrink only the second part."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from osmosis_client.errors import InvalidInputError
from osmosis_local_runner.api.results import run_path
from osmosis_local_runner.results.statistics.power import detectable, rows_needed
from osmosis_local_runner.results.statistics.stats import t_ppf

#: the attempts per row a plan compares (beside the pilot's own)
ATTEMPT_CHOICES = (1, 2, 4, 8, 16)


@dataclass(frozen=True)
class _Spread:
    """σ of per-row differences at the pilot's attempts per row, what it is from, the
    pilot's rows, and — when the pilot repeated attempts — its two parts."""

    sd: float
    source: str
    rows: int | None = None
    between: float | None = None  # σ² of the differences of the rows' true means
    within: float | None = None  # σ² the attempts add, times K (both runs together)
    attempts: float | None = None  # K: the pilot's attempts per row

    def at(self, attempts: float) -> float:
        """The spread with ``attempts`` attempts per row."""
        if self.between is None or self.within is None:
            raise InvalidInputError(
                "the pilot does not say how its spread splits between rows and attempts",
                hint="plan attempts per row from a pilot run with two attempts a row or more",
                code="USAGE",
            )
        return math.sqrt(self.between + self.within / attempts)


def plan_rows(
    effect: float | None = None,
    *,
    alpha: float = 0.05,
    power: float = 0.8,
    sd: float | None = None,
    pilot: str | Path | None = None,
    vs: str | Path | None = None,
    correlation: float = 0.5,
    attempts: int | None = None,
    root: Path | None = None,
) -> dict[str, Any]:
    """The plan: ``sd`` (of per-row differences) and where it came from, ``rows_needed``
    for ``effect`` (a difference of the mean score) at ``alpha`` with ``power``, and with
    a pilot its rows (``rows_now``) and the smallest difference they detect.

    ``attempts``: plan for this many attempts per row (the pilot's otherwise); with a
    pilot of repeated attempts, ``by_attempts`` lists the spread and rows needed for
    1, 2, 4, 8 and 16 attempts per row (``attempts_now``: the pilot's)."""
    if not (0.0 < alpha < 1.0 and 0.0 < power < 1.0 and -1.0 <= correlation < 1.0):
        raise InvalidInputError(
            "alpha and power are in (0, 1), correlation in [−1, 1)", code="USAGE"
        )
    if attempts is not None and attempts < 1:
        raise InvalidInputError("attempts per row is 1 or more", code="USAGE")
    found = _spread(sd, pilot, vs, correlation, root)
    spread = found.sd if attempts is None else found.at(attempts)
    plan: dict[str, Any] = {
        "effect": effect,
        "alpha": alpha,
        "power": power,
        "sd": spread,
        "sd_from": found.source,
        "attempts": attempts,
        "rows_needed": rows_needed(effect, spread, alpha, power) if effect else None,
        "rows_now": found.rows,
        "detectable_now": detectable(found.sd, found.rows, alpha, power) if found.rows else None,
        "attempts_now": found.attempts,
    }
    if found.between is not None:
        plan["by_attempts"] = [
            {
                "attempts": k,
                "sd": found.at(k),
                "rows_needed": rows_needed(effect, found.at(k), alpha, power) if effect else None,
            }
            for k in ATTEMPT_CHOICES
        ]
    return plan


def _spread(
    sd: float | None,
    pilot: str | Path | None,
    vs: str | Path | None,
    correlation: float,
    root: Path | None,
) -> _Spread:
    """σ of per-row differences, what it is from, the pilot's rows and its parts."""
    if pilot is not None and vs is not None:
        return _paired(run_path(pilot, root=root), run_path(vs, root=root))
    if pilot is not None:
        return _one_run(run_path(pilot, root=root), correlation)
    if sd is not None and sd > 0:
        return _Spread(sd, "given")
    raise InvalidInputError(
        "a plan needs the spread of per-row differences",
        hint="give a pilot run (and the run to compare it with), or the spread itself",
        code="USAGE",
    )


def _paired(a: Path, b: Path) -> _Spread:
    from osmosis_local_runner.results.compare.compare import compare

    found = next(iter(compare(a, b).fns.values()), None)
    if found is None or found.t is None or found.pairs < 2:
        raise InvalidInputError("the two runs share fewer than two rows", code="VALIDATION")
    half = (found.t.high - found.t.low) / 2.0
    spread = half / t_ppf(0.975, found.pairs - 1) * math.sqrt(found.pairs)
    source = f"the paired differences of {found.pairs} rows"
    parts = [_variance(a), _variance(b)]
    if any(p is None for p in parts):
        return _Spread(spread, source, found.pairs)
    # the attempts' part of the differences: each run's within-row variance over its K
    noise = sum(p["within"] / p["attempts_per_row"] for p in parts if p is not None)
    k = min(p["attempts_per_row"] for p in parts if p is not None)
    # estimated apart, the attempts' part may exceed the spread observed: the observed
    # one is the measurement, so at the pilot's K the plan reproduces it
    noise = min(noise, spread**2)
    between = spread**2 - noise
    return _Spread(spread, source, found.pairs, between, noise * k, k)


def _one_run(path: Path, correlation: float) -> _Spread:
    from osmosis_local_runner.results.documents.documents import ResultsFile

    doc = ResultsFile(path)
    fns = doc.summary.get("eval_fns") or {}
    stats = (fns.get(doc.eval_fns[0]) if doc.eval_fns else None) or {}
    stderr, rows = stats.get("stderr"), stats.get("clusters")
    if not isinstance(stderr, int | float) or not isinstance(rows, int) or rows < 2:
        raise InvalidInputError(
            "the pilot run has no interval to read its spread from",
            hint="a pilot needs two rows or more",
            code="VALIDATION",
        )
    shared = 2.0 * (1.0 - correlation)  # what pairing leaves of the rows' own variance
    spread = stderr * math.sqrt(rows) * math.sqrt(shared)
    source = f"one run's row means, correlation {correlation:g} assumed"
    split = _variance(path)
    if split is None:
        return _Spread(spread, source, rows)
    # the attempts' noise is each run's own: pairing does not cancel it
    within = 2.0 * split["within"]
    between = shared * split["between"]
    k = split["attempts_per_row"]
    return _Spread(math.sqrt(between + within / k), source, rows, between, within, k)


def _variance(path: Path) -> dict[str, Any] | None:
    """The first eval fn's variance split of a run (None: no row repeated attempts)."""
    from osmosis_local_runner.results.documents.documents import ResultsFile

    doc = ResultsFile(path)
    stats = (doc.summary.get("eval_fns") or {}).get(doc.eval_fns[0] if doc.eval_fns else "")
    split = (stats or {}).get("variance")
    return split if isinstance(split, dict) else None


__all__ = ["plan_rows"]
