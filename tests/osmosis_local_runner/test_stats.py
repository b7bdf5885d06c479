"""The paired statistics against scipy (an independent implementation; tests only)."""

from __future__ import annotations

import random

import pytest
from scipy import stats as sp

from osmosis_local_runner.results.statistics import stats


@pytest.mark.parametrize("df", [1, 2, 3, 7, 19, 100, 1999, 100_000])
@pytest.mark.parametrize("p", [0.5, 0.6, 0.9, 0.975, 0.999, 0.025])
def test_t_quantile_matches_scipy(df: int, p: float) -> None:
    assert stats.t_ppf(p, df) == pytest.approx(sp.t.ppf(p, df), rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("x", [0.0, 1e-9, 0.2, 0.5, 0.93, 1.0])
@pytest.mark.parametrize(("a", "b"), [(0.5, 0.5), (2.0, 3.0), (50.0, 0.5), (0.5, 1000.0)])
def test_incomplete_beta_matches_scipy(a: float, b: float, x: float) -> None:
    from scipy.special import betainc

    assert stats.betainc(a, b, x) == pytest.approx(float(betainc(a, b, x)), rel=1e-9, abs=1e-14)


def test_t_interval_matches_scipy() -> None:
    rng = random.Random(3)
    diffs = [rng.gauss(0.1, 0.7) for _ in range(40)]
    mean = sum(diffs) / len(diffs)
    low, high = sp.t.interval(0.95, len(diffs) - 1, loc=mean, scale=sp.sem(diffs))
    interval = stats.t_interval(diffs)
    assert interval is not None and interval.method == "t"
    assert interval.low == pytest.approx(low, rel=1e-9)
    assert interval.high == pytest.approx(high, rel=1e-9)


def test_intervals_need_two_pairs() -> None:
    assert stats.t_interval([0.5]) is None
    assert stats.bootstrap_interval([0.5]) is None
    assert stats.paired_interval([]) is None


def test_bootstrap_is_deterministic_and_agrees_with_scipy() -> None:
    rng = random.Random(5)
    diffs = [rng.choice([-1.0, 0.0, 0.0, 0.0, 1.0, -1.0 / 3]) for _ in range(120)]
    first = stats.bootstrap_interval(diffs)
    assert first == stats.bootstrap_interval(list(diffs))  # fixed seed: same answer
    assert first is not None and first.method == "bootstrap"
    theirs = sp.bootstrap(
        (diffs,),
        lambda x, axis: x.mean(axis=axis),
        method="percentile",
        n_resamples=10_000,
        random_state=0,
    ).confidence_interval
    # different random streams: the two percentile intervals agree to Monte Carlo error
    assert first.low == pytest.approx(theirs.low, abs=0.015)
    assert first.high == pytest.approx(theirs.high, abs=0.015)
    assert first.low < sum(diffs) / len(diffs) < first.high


def test_constant_differences_give_a_point_interval() -> None:
    interval = stats.bootstrap_interval([0.25] * 10)
    assert interval is not None and interval.low == interval.high == pytest.approx(0.25)


def test_paired_interval_switches_to_t_above_the_bootstrap_limit() -> None:
    small = [0.0, 1.0] * (stats.BOOTSTRAP_MAX_PAIRS // 2)
    assert stats.paired_interval(small).method == "bootstrap"  # type: ignore[union-attr]
    large = [*small, 0.0, 1.0]
    assert stats.paired_interval(large).method == "t"  # type: ignore[union-attr]


def test_percentile_interpolates_like_numpy() -> None:
    import numpy as np

    values = sorted(random.Random(1).random() for _ in range(37))
    for q in (0.0, 0.025, 0.5, 0.975, 1.0):
        assert stats.percentile(values, q) == pytest.approx(float(np.quantile(values, q)))


@pytest.mark.parametrize(
    ("to_fail", "to_pass"), [(0, 0), (0, 5), (3, 10), (7, 7), (40, 60), (1, 30), (600, 700)]
)
def test_mcnemar_exact_matches_scipy_binomial_test(to_fail: int, to_pass: int) -> None:
    expected = (
        1.0
        if to_fail + to_pass == 0
        else sp.binomtest(min(to_fail, to_pass), to_fail + to_pass, 0.5).pvalue
    )
    assert stats.mcnemar_exact(to_fail, to_pass) == pytest.approx(expected, rel=1e-9)


@pytest.mark.parametrize(("n", "p"), [(7, 0.3), (40, 0.05), (300, 0.4), (2000, 0.7), (5, 0.99)])
def test_binomial_draws_follow_the_binomial_distribution(n: int, p: float) -> None:
    rng = random.Random(11)
    draws = [stats.binomial(rng, n, p) for _ in range(20_000)]
    assert all(0 <= d <= n for d in draws)
    counts = [0] * (n + 1)
    for d in draws:
        counts[d] += 1
    # chi-square goodness of fit over the cells scipy expects ≥ 5 draws in (pooled tails)
    expected = [20_000 * sp.binom.pmf(k, n, p) for k in range(n + 1)]
    cells, observed, pooled_e, pooled_o = [], [], 0.0, 0
    for e, o in zip(expected, counts, strict=True):
        pooled_e += e
        pooled_o += o
        if pooled_e >= 5:
            cells.append(pooled_e)
            observed.append(pooled_o)
            pooled_e, pooled_o = 0.0, 0
    cells[-1] += pooled_e
    observed[-1] += pooled_o
    chi2 = sum((o - e) ** 2 / e for o, e in zip(observed, cells, strict=True))
    assert sp.chi2.sf(chi2, len(cells) - 1) > 1e-4


def test_the_bootstrap_by_counts_agrees_with_resampling_pairs() -> None:
    rng = random.Random(3)
    diffs = [rng.choice([-1.0, -2 / 3, -1 / 3, 0.0, 0.0, 1 / 3, 2 / 3, 1.0]) for _ in range(500)]
    by_counts = stats.bootstrap_interval(diffs)
    many = [d + i * 1e-12 for i, d in enumerate(diffs)]  # > MAX_CLASSES values: pair by pair
    by_pairs = stats.bootstrap_interval(many)
    assert by_counts is not None and by_pairs is not None
    assert by_counts.low == pytest.approx(by_pairs.low, abs=0.01)
    assert by_counts.high == pytest.approx(by_pairs.high, abs=0.01)
    assert by_counts == stats.bootstrap_interval(list(reversed(diffs)))  # order-free, seeded


def test_counts_keep_scores_near_the_float_limit_finite() -> None:
    interval = stats.bootstrap_interval([1.7e308, -1.7e308, 1.7e308, 0.0] * 5)
    assert interval is not None
    assert -1.8e308 < interval.low <= interval.high < 1.8e308
