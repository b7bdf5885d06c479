"""How many rows a paired comparison needs (``osmosis eval plan``): the power of a
two-sided paired t-test — the test ``eval compare``'s t interval makes — for a true
difference δ between two runs whose per-row differences have standard deviation σ_d,
on n rows:

    power = P(T > t_c) + P(T < −t_c),  T ~ noncentral t(n − 1, δ / σ_d · √n),
    t_c = t(1 − α/2, n − 1)

the noncentral t's tails computed by quadrature over its scaled χ denominator (no library
here has it without scipy: the runtime does not depend on scipy; the tests check it
against statsmodels' ``TTestPower``). Then the rows for a target power, and the smallest
difference detectable with the rows one has."""

from __future__ import annotations

import math

from osmosis_local_runner.results.statistics.stats import t_ppf

#: quadrature points over the denominator's range
POINTS = 2_000
#: rows beyond which the planner stops searching (a difference too small for any eval)
MOST_ROWS = 10_000_000


def _phi(x: float) -> float:
    return 0.5 * math.erfc(-x / math.sqrt(2.0))


def _tails(df: int, nc: float, critical: float) -> float:
    """P(T > c) + P(T < −c) for T ~ noncentral t(df, nc): T = (Z + nc) / S with
    S = √(χ²_df / df); integrated over S by Simpson's rule on its bulk."""
    spread = 1.0 / math.sqrt(2.0 * df)
    low, high = max(0.0, 1.0 - 12.0 * spread), 1.0 + 12.0 * spread
    step = (high - low) / POINTS
    log_norm = (df / 2.0) * math.log(df / 2.0) - math.lgamma(df / 2.0) + math.log(2.0)
    total = 0.0
    for i in range(POINTS + 1):
        s = low + i * step
        if s <= 0.0:
            continue
        density = math.exp(log_norm + (df - 1) * math.log(s) - df * s * s / 2.0)
        tails = (1.0 - _phi(critical * s - nc)) + _phi(-critical * s - nc)
        weight = 1 if i in (0, POINTS) else (4 if i % 2 else 2)
        total += weight * density * tails
    return min(1.0, total * step / 3.0)


def paired_power(effect: float, sd: float, rows: int, alpha: float = 0.05) -> float:
    """The power of the two-sided paired t-test at ``alpha`` on ``rows`` rows."""
    if rows < 2 or sd <= 0.0:
        return 0.0
    df = rows - 1
    return _tails(df, abs(effect) / sd * math.sqrt(rows), t_ppf(1.0 - alpha / 2.0, df))


def rows_needed(effect: float, sd: float, alpha: float = 0.05, power: float = 0.8) -> int | None:
    """The fewest rows with at least ``power`` (None: more than :data:`MOST_ROWS`)."""
    if effect == 0.0 or sd <= 0.0:
        return None if effect == 0.0 else 2
    low, high = 2, 2
    while paired_power(effect, sd, high, alpha) < power:
        if high >= MOST_ROWS:
            return None
        low, high = high, min(MOST_ROWS, high * 2)
    while low < high:  # the smallest n with enough power (power grows with n)
        middle = (low + high) // 2
        if paired_power(effect, sd, middle, alpha) >= power:
            high = middle
        else:
            low = middle + 1
    return high


def detectable(sd: float, rows: int, alpha: float = 0.05, power: float = 0.8) -> float | None:
    """The smallest difference detected with ``power`` on ``rows`` rows (None: too few)."""
    if rows < 2 or sd <= 0.0:
        return None
    low, high = 0.0, sd
    while paired_power(high, sd, rows, alpha) < power:
        high *= 2.0
    for _ in range(60):
        middle = (low + high) / 2.0
        if paired_power(middle, sd, rows, alpha) >= power:
            high = middle
        else:
            low = middle
    return high


__all__ = ["detectable", "paired_power", "rows_needed"]
