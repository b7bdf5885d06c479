"""The paired statistics against scipy (an independent implementation; tests only)."""

from __future__ import annotations

import random

import pytest
from scipy import stats as sp

from osmosis_local_runner.results import stats


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
