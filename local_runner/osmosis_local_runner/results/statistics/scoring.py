"""Scores → statistics: pass@k (unbiased, numerically stable), mean, population std."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from osmosis_local_runner.results.documents.records import AttemptRecord

PASS_AT_K = (1, 3, 5, 10)


def pass_at_k(n: int, c: int, k: int) -> float:
    """1 − C(n−c, k) / C(n, k), as the product 1 − ∏_{i=n−c+1}^{n} (1 − k/i).

    ``n`` attempts, ``c`` of them passing, ``k`` ≤ ``n`` drawn.
    """
    if not 0 <= c <= n or not 1 <= k <= n:
        raise ValueError(f"need 0 <= c <= n and 1 <= k <= n, got n={n} c={c} k={k}")
    if n - c < k:
        return 1.0
    product = 1.0
    for i in range(n - c + 1, n + 1):
        product *= 1.0 - k / i
    return 1.0 - product


def score_text(value: object, missing: str = "–", *, sign: bool = False) -> str:
    """How every output shows a score or a statistic: three decimals, or three significant
    digits for magnitudes a fixed point would spell out over hundreds of characters."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return missing
    if value - value != 0:
        return missing  # NaN or ±inf: nothing to show
    plus = "+" if sign else ""
    return f"{value:{plus}.3f}" if abs(value) < 1e6 else f"{value:{plus}.3g}"


def ks_for(n: int) -> list[int]:
    """The k of pass@k a summary reports: 1, 3, 5, 10 up to n, and always n itself."""
    return sorted({k for k in PASS_AT_K if k <= n} | ({n} if n >= 1 else set()))


def counted_mean(
    counts: Mapping[tuple[int, int], int], value: Callable[[int, int], float], least: int = 1
) -> float | None:
    """The mean over rows of ``value(attempts, passing)`` for rows with at least ``least``
    attempts, ``counts`` holding how many rows have each (attempts, passing): computed
    once per distinct pair (a million rows hold only a few)."""
    kept = [(value(n, c), times) for (n, c), times in counts.items() if n >= least]
    total = sum(times for _, times in kept)
    return math.fsum(v * times for v, times in kept) / total if total else None


def mean_pass_at_k(passes_per_row: Iterable[tuple[int, int]], k: int) -> float | None:
    """pass@k averaged over rows; each row is (attempts, passing attempts)."""
    values = [pass_at_k(n, c, k) for n, c in passes_per_row if n >= k]
    return sum(values) / len(values) if values else None


def describe(scores: Sequence[float]) -> dict[str, float | None]:
    """mean, population std, min and max (None for an empty list).

    Overflow-safe for any finite scores (even ±1e308): sums run on scores scaled into
    [-1, 1], so every statistic stays finite — the mean lies within [min, max] and the
    population std is at most half the range.
    """
    if not scores:
        return {"mean": None, "std": None, "min": None, "max": None}
    low, high = min(scores), max(scores)
    scale = max(abs(low), abs(high)) or 1.0
    count = len(scores)
    mean = math.fsum(s / scale for s in scores) / count * scale
    centre = mean / scale
    variance = math.fsum((s / scale - centre) ** 2 for s in scores) / count
    return {
        "mean": min(max(mean, low), high),  # rounding never leaves the range
        "std": math.sqrt(variance) * scale,
        "min": low,
        "max": high,
    }


def passed(record: AttemptRecord, fn: str, threshold: float) -> bool:
    """Errored or skipped attempts never pass, nor does an eval fn that raised, whatever
    the score."""
    return attempt_passes(
        record.success, record.skipped, record.fn_errors, record.scores, fn, threshold
    )


def attempt_passes(
    success: bool,
    skipped: bool,
    fn_errors: Mapping[str, str] | None,
    scores: Mapping[str, float],
    fn: str,
    threshold: float,
) -> bool:
    """:func:`passed` of an attempt's fields (a record's, or a document's run as read)."""
    return (
        success
        and not skipped
        and not (fn_errors and fn in fn_errors)
        and scores.get(fn, 0.0) >= threshold
    )
