"""``osmosis eval plan`` / ``plan_rows`` (issue 53, part 3): the rows a paired comparison
needs and the smallest difference the rows one has detect — the power of a two-sided
paired t-test, equal to statsmodels' ``TTestPower`` — from a spread given, one pilot run,
or two runs' paired differences."""

from __future__ import annotations

from pathlib import Path

import pytest
from statsmodels.stats.power import TTestPower

from osmosis_local_runner import plan_rows, run_eval
from osmosis_local_runner.results.statistics.power import detectable, paired_power, rows_needed
from tests.osmosis_cli.conftest import Invoke


@pytest.mark.parametrize(("effect", "rows"), [(0.3, 30), (0.1, 200), (1.0, 5), (0.5, 3)])
def test_the_power_of_a_paired_t_test_is_statsmodels(effect: float, rows: int) -> None:
    expected = TTestPower().power(effect_size=effect, nobs=rows, alpha=0.05)
    assert paired_power(effect, 1.0, rows) == pytest.approx(expected, abs=1e-8)


def test_rows_needed_and_the_detectable_difference_are_statsmodels() -> None:
    solved = TTestPower().solve_power(effect_size=0.03 / 0.41, alpha=0.05, power=0.8)
    assert rows_needed(0.03, 0.41) == int(solved) + 1  # the fewest whole rows
    smallest = TTestPower().solve_power(nobs=30, alpha=0.05, power=0.8) * 0.41
    assert detectable(0.41, 30) == pytest.approx(smallest, abs=1e-6)
    assert rows_needed(0.0, 0.41) is None and detectable(0.41, 1) is None


def test_a_plan_from_a_pilot_and_through_the_cli(quickstart_project: Path, invoke: Invoke) -> None:
    config = "configs/eval/quickstart.toml"
    run_eval(config, model="mock/flaky-calculator", limit=20, n=4, name="a")
    run_eval(config, model="mock/calculator", limit=20, n=4, name="b")
    paired = plan_rows(0.1, pilot="a", vs="b")
    assert paired["rows_now"] == 20 and paired["sd_from"].startswith("the paired differences")
    assert paired["rows_needed"] == rows_needed(0.1, paired["sd"])
    one = plan_rows(0.1, pilot="a", correlation=0.0)
    assert one["sd"] > 0 and "correlation 0 assumed" in one["sd_from"]
    shown = invoke("eval", "plan", "--effect", "0.1", "--from", "a", "--vs", "b")
    assert shown.exit_code == 0, shown.stderr
    assert f"rows needed: {paired['rows_needed']:,}" in shown.stdout
    assert "smallest difference detectable" in shown.stdout
    assert invoke("--json", "eval", "plan", "--sd", "0.4", "--effect", "0.05").data()[
        "rows_needed"
    ] == rows_needed(0.05, 0.4)
    refused = invoke("eval", "plan", "--effect", "0.1")
    assert refused.exit_code == 2 and "spread of per-row differences" in refused.stderr


def test_attempts_per_row_shrink_only_the_attempts_part(
    quickstart_project: Path, invoke: Invoke
) -> None:
    config = "configs/eval/quickstart.toml"
    run_eval(config, model="mock/flaky-calculator", limit=20, n=4, name="a")
    run_eval(config, model="mock/calculator", limit=20, n=4, name="b")
    paired = plan_rows(0.1, pilot="a", vs="b")
    choices = {c["attempts"]: c for c in paired["by_attempts"]}
    assert paired["attempts_now"] == 4.0
    # σ²(K) = between + within / K: more attempts never need more rows, and the pilot's
    # own K reproduces its observed spread
    assert choices[4]["sd"] == pytest.approx(paired["sd"], rel=1e-9)
    needed = [choices[k]["rows_needed"] for k in (1, 2, 4, 8, 16)]
    assert needed == sorted(needed, reverse=True) and needed[0] > needed[-1]
    two = plan_rows(0.1, pilot="a", vs="b", attempts=2)
    assert two["rows_needed"] == rows_needed(0.1, choices[2]["sd"])
    shown = invoke("eval", "plan", "--effect", "0.1", "--from", "a", "--vs", "b")
    assert "rows needed by attempts per row (the pilot had 4)" in shown.stdout
    assert f" 1 a row: {needed[0]:,} rows" in shown.stdout
    single = invoke("eval", "plan", "--effect", "0.1", "--sd", "0.3", "--attempts", "2")
    assert single.exit_code == 2 and "two attempts a row or more" in single.stderr
