"""The uncertainty of a run's scores, where a score is read (Miller, "Adding Error Bars to
Evals", arXiv 2411.00640; Inspect's clustered ``stderr``):

- the mean's standard error and 95 % interval with **rows as clusters**: a row's attempts
  are not independent, so each row's mean over its attempts is one observation —
  ``SE = sd(row means) / √rows``, ``mean ± t(0.975, rows − 1) · SE`` (with one attempt a
  row, the usual t interval of the attempts);
- pass@k's interval by the percentile bootstrap over rows (resampling rows, each with its
  own unbiased pass@k; seeded, so the same run always gives the same interval);
- where the uncertainty comes from: the variance between rows and within a row's
  attempts, ``SE² ≈ (σ²_between + σ²_within / K) / rows``, and what twice the rows or
  twice the attempts per row would make of the standard error.

Errored attempts count as they score: 0 (as in every other statistic of the run)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from osmosis_local_runner.results.statistics.stats import (
    CONFIDENCE,
    bootstrap_interval,
    mean as average,
    scale_of,
    t_ppf,
)


def _sample_variance(values: Sequence[float]) -> float:
    centre = average(values)
    return math.fsum((v - centre) ** 2 for v in values) / (len(values) - 1)


def _scaled(rows: Sequence[Sequence[float]]) -> tuple[list[list[float]], float]:
    """The rows' scores brought near 1 when they are so large that a square would
    overflow (scores may be any finite number), and the factor to multiply back."""
    scale = max((scale_of(list(r)) for r in rows if r), default=1.0)
    if scale == 1.0:
        return [list(r) for r in rows], 1.0
    return [[v / scale for v in r] for r in rows], scale


def mean_interval(
    rows: Sequence[Sequence[float]],
    mean: float | None,
    labels: Sequence[str] | None = None,
) -> dict[str, Any]:
    """``stderr``, ``ci_low``, ``ci_high`` of ``mean`` (rows as clusters; None with fewer
    than two clusters) and ``clusters``: the clusters counted. ``labels`` (one per row):
    rows of one label share a context and are one cluster — the cluster-robust standard
    error of the rows' means (:func:`clustered_se`), t with clusters − 1 degrees of
    freedom."""
    rows, scale = _scaled(rows)
    kept = [(i, average(scores)) for i, scores in enumerate(rows) if scores]
    row_means = [m for _, m in kept]
    groups = None if labels is None else [labels[i] for i, _ in kept]
    clusters = len(row_means) if groups is None else len(set(groups))
    found: dict[str, Any] = {"stderr": None, "ci_low": None, "ci_high": None, "clusters": clusters}
    if mean is None or clusters < 2:
        return found
    if groups is None:
        stderr = math.sqrt(_sample_variance(row_means) / len(row_means))
    else:
        stderr = clustered_se(row_means, groups)
    half = t_ppf(0.5 + CONFIDENCE / 2.0, clusters - 1) * stderr
    low, high = mean / scale - half, mean / scale + half
    if not all(math.isfinite(v * scale) for v in (stderr, low, high)):
        return found  # an interval wider than the floats: none rather than a wrong one
    return {**found, "stderr": stderr * scale, "ci_low": low * scale, "ci_high": high * scale}


def clustered_se(values: Sequence[float], groups: Sequence[str]) -> float:
    """The cluster-robust standard error of the mean of ``values`` (Miller 2024, eq. 4;
    statsmodels' ``cov_type="cluster"`` of a constant): ``√(C/(C−1) · Σ_c (Σ_{i∈c}
    (x_i − x̄))² / N²)``. With every value its own cluster it is the usual ``s/√N``."""
    centre = average(values)
    sums: dict[str, float] = {}
    for value, group in zip(values, groups, strict=True):
        sums[group] = sums.get(group, 0.0) + (value - centre)
    c, n = len(sums), len(values)
    return math.sqrt(c / (c - 1) * math.fsum(s * s for s in sums.values()) / (n * n))


#: resamples of pass@k's bootstrap: every document written computes it (a run's end, a
#: live page's update): 2,000 put its ends within 0.01 of 10,000's (20 sets of 30 rows)
PASS_AT_K_RESAMPLES = 2_000


def pass_at_k_interval(per_row: Sequence[float]) -> list[float] | None:
    """pass@k's 95 % interval: the percentile bootstrap of the mean of the rows' pass@k."""
    found = bootstrap_interval(per_row, resamples=PASS_AT_K_RESAMPLES)
    return None if found is None else [found.low, found.high]


def variance_split(rows: Sequence[Sequence[float]]) -> dict[str, Any] | None:
    """Where the uncertainty comes from: ``between`` (σ² of the rows' true means, by the
    method of moments: the row means' variance less what the attempts add) and ``within``
    (σ² of attempts around their row's mean), ``attempts_per_row`` (K), and the standard
    error with twice the rows (``se_twice_rows``) or twice the attempts per row
    (``se_twice_attempts``) by that formula — estimates, beside the ``stderr`` measured
    from the rows. None with fewer than two rows or no row of two attempts."""
    kept, scale = _scaled([scores for scores in rows if scores])
    repeated = [scores for scores in kept if len(scores) > 1]
    if len(kept) < 2 or not repeated or scale != 1.0:  # scores beyond any variance's range
        return None
    within = math.fsum(_sample_variance(s) for s in repeated) / len(repeated)
    row_means = [average(s) for s in kept]
    attempts = math.fsum(len(s) for s in kept) / len(kept)
    between = max(0.0, _sample_variance(row_means) - within / attempts)
    n = len(kept)

    def se(rows_: float, per_row: float) -> float:
        return math.sqrt((between + within / per_row) / rows_)

    return {
        "between": between,
        "within": within,
        "attempts_per_row": attempts,
        "rows": n,
        "se_twice_rows": se(2 * n, attempts),
        "se_twice_attempts": se(n, 2 * attempts),
    }


def half_width_text(stats: dict[str, Any]) -> str:
    """`` ± 0.090``: half a mean's 95 % interval, as every face prints it beside the mean
    (``""`` when it has none)."""
    low, high = stats.get("ci_low"), stats.get("ci_high")
    if isinstance(low, int | float) and isinstance(high, int | float):
        return f" ± {(high - low) / 2:.3f}"
    return ""


__all__ = [
    "clustered_se",
    "half_width_text",
    "mean_interval",
    "pass_at_k_interval",
    "variance_split",
]
