"""``plan_rows`` (``osmosis eval plan``): how many rows a paired comparison needs to see a
difference, and the smallest difference the rows one has can see — from a pilot's
observed spread of per-row differences (two runs on the same rows), from one run's spread
of row means and an assumed correlation between the two runs, or from a spread given."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from osmosis_client.errors import InvalidInputError
from osmosis_local_runner.api.results import run_path
from osmosis_local_runner.results.power import detectable, rows_needed
from osmosis_local_runner.results.stats import t_ppf


def plan_rows(
    effect: float | None = None,
    *,
    alpha: float = 0.05,
    power: float = 0.8,
    sd: float | None = None,
    pilot: str | Path | None = None,
    vs: str | Path | None = None,
    correlation: float = 0.5,
    root: Path | None = None,
) -> dict[str, Any]:
    """The plan: ``sd`` (of per-row differences) and where it came from, ``rows_needed``
    for ``effect`` (a difference of the mean score) at ``alpha`` with ``power``, and with
    a pilot its rows (``rows_now``) and the smallest difference they detect."""
    if not (0.0 < alpha < 1.0 and 0.0 < power < 1.0 and -1.0 <= correlation < 1.0):
        raise InvalidInputError("alpha and power are in (0, 1), correlation in [−1, 1)",
                                code="USAGE")  # fmt: skip
    spread, source, rows = _spread(sd, pilot, vs, correlation, root)
    return {
        "effect": effect,
        "alpha": alpha,
        "power": power,
        "sd": spread,
        "sd_from": source,
        "rows_needed": rows_needed(effect, spread, alpha, power) if effect else None,
        "rows_now": rows,
        "detectable_now": detectable(spread, rows, alpha, power) if rows else None,
    }


def _spread(
    sd: float | None,
    pilot: str | Path | None,
    vs: str | Path | None,
    correlation: float,
    root: Path | None,
) -> tuple[float, str, int | None]:
    """σ of per-row differences, what it is from, and the pilot's rows."""
    if pilot is not None and vs is not None:
        from osmosis_local_runner.results.compare import compare

        a, b = run_path(pilot, root=root), run_path(vs, root=root)
        found = next(iter(compare(a, b).fns.values()), None)
        if found is None or found.t is None or found.pairs < 2:
            raise InvalidInputError("the two runs share fewer than two rows", code="VALIDATION")
        half = (found.t.high - found.t.low) / 2.0
        spread = half / t_ppf(0.975, found.pairs - 1) * math.sqrt(found.pairs)
        return spread, f"the paired differences of {found.pairs} rows", found.pairs
    if pilot is not None:
        from osmosis_local_runner.results.documents import ResultsFile

        doc = ResultsFile(run_path(pilot, root=root))
        fns = doc.summary.get("eval_fns") or {}
        stats = (fns.get(doc.eval_fns[0]) if doc.eval_fns else None) or {}
        stderr, rows = stats.get("stderr"), stats.get("clusters")
        if not isinstance(stderr, int | float) or not isinstance(rows, int) or rows < 2:
            raise InvalidInputError(
                "the pilot run has no interval to read its spread from",
                hint="a pilot needs two rows or more",
                code="VALIDATION",
            )
        spread = stderr * math.sqrt(rows) * math.sqrt(2.0 * (1.0 - correlation))
        return spread, f"one run's row means, correlation {correlation:g} assumed", rows
    if sd is not None and sd > 0:
        return sd, "given", None
    raise InvalidInputError(
        "a plan needs the spread of per-row differences",
        hint="give a pilot run (and the run to compare it with), or the spread itself",
        code="USAGE",
    )


__all__ = ["plan_rows"]
