from __future__ import annotations

import itertools
from fractions import Fraction
from math import comb

import pytest
from hypothesis import given, strategies as st

from osmosis_local_runner.results.statistics.scoring import (
    describe,
    ks_for,
    mean_pass_at_k,
    pass_at_k,
)


@pytest.mark.parametrize(
    ("k", "expected"),
    [
        (1, Fraction(2, 5)),
        (2, Fraction(7, 10)),
        (3, Fraction(9, 10)),
        (4, Fraction(1)),
        (5, Fraction(1)),
    ],
)
def test_pass_at_k_exact_fractions_n5_c2(k: int, expected: Fraction) -> None:
    assert pass_at_k(5, 2, k) == pytest.approx(float(expected), abs=1e-12)


@given(
    st.integers(1, 60).flatmap(
        lambda n: st.tuples(st.just(n), st.integers(0, n), st.integers(1, n))
    )
)
def test_pass_at_k_matches_the_combinatorial_definition(nck: tuple[int, int, int]) -> None:
    n, c, k = nck
    exact = 1 - Fraction(comb(n - c, k), comb(n, k))
    assert pass_at_k(n, c, k) == pytest.approx(float(exact), abs=1e-9)


@given(st.integers(1, 200).flatmap(lambda n: st.tuples(st.just(n), st.integers(0, n))))
def test_pass_at_k_is_monotone_in_k_and_bounded(nc: tuple[int, int]) -> None:
    n, c = nc
    values = [pass_at_k(n, c, k) for k in range(1, n + 1)]
    assert all(0.0 <= v <= 1.0 for v in values)
    assert all(a <= b + 1e-12 for a, b in itertools.pairwise(values))
    assert values[0] == pytest.approx(c / n)


def test_pass_at_k_large_n_is_stable() -> None:
    # C(1000, 500) overflows floats; the product form does not.
    assert 0.0 < pass_at_k(1000, 1, 10) < 1.0
    assert pass_at_k(1000, 1, 10) == pytest.approx(0.01)


def test_invalid_arguments() -> None:
    with pytest.raises(ValueError):
        pass_at_k(3, 4, 1)
    with pytest.raises(ValueError):
        pass_at_k(3, 1, 4)


def test_ks_and_row_average() -> None:
    assert ks_for(1) == [1]
    assert ks_for(5) == [1, 3, 5]
    assert ks_for(12) == [1, 3, 5, 10, 12]  # k = n always: pass@n is "any attempt passed"
    assert ks_for(2) == [1, 2] and ks_for(4) == [1, 3, 4]
    assert mean_pass_at_k([(2, 1), (2, 0)], 1) == pytest.approx(0.25)
    assert mean_pass_at_k([(1, 1)], 3) is None


def test_describe_uses_population_std() -> None:
    stats = describe([0.0, 1.0])
    assert stats == {"mean": 0.5, "std": 0.5, "min": 0.0, "max": 1.0}
    assert describe([]) == {"mean": None, "std": None, "min": None, "max": None}
