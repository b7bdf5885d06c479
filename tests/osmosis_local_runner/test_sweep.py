"""A checkpoint sweep (issue 46): runs by step, each against the baseline with McNemar's
p corrected for the comparisons (Holm), and each row's first solving checkpoint. The step
is what each run recorded (issue 52), never a number read out of its name."""

from __future__ import annotations

from pathlib import Path

import pytest

from osmosis_client.errors import InvalidInputError
from osmosis_local_runner.results.statistics.sweep import AgainstBaseline, _holm, sweep

CONFIG = "configs/eval/quickstart.toml"


@pytest.fixture
def steps(quickstart_project: Path) -> list[tuple[str, Path]]:
    from osmosis_local_runner.api import run_eval

    models = {"step-300": "mock/echo", "step-100": "mock/calculator", "step-200": "mock/calculator"}
    found = []
    for name, model in models.items():  # given out of order: the sweep orders by step
        step = int(name.split("-")[1])
        run_eval(CONFIG, name=name, model=model, limit=8, n=1, series="grpo", step=step)
        found.append((name, quickstart_project / ".osmosis" / "evals" / name / "results.json"))
    return found


def test_runs_by_step_against_the_oldest_with_the_regression_named(
    steps: list[tuple[str, Path]],
) -> None:
    found = sweep(steps)
    assert [r.name for r in found.runs] == ["step-100", "step-200", "step-300"]
    assert [r.step for r in found.runs] == [100, 200, 300] and found.baseline == "step-100"
    assert [r.values["mean"] for r in found.runs] == [1.0, 1.0, 0.0]
    by = {a.name: a for a in found.against}
    assert by["step-200"].diff == 0 and not by["step-200"].regression
    worse = by["step-300"]
    assert worse.diff == -1.0 and worse.high is not None and worse.high < 0
    assert worse.adjusted_p == pytest.approx(min(1.0, 2 * worse.mcnemar_p))  # Holm: 2 tests
    assert worse.regression
    assert set(found.first_solved.values()) == {"step-100"}  # every row, at the first step
    chosen = sweep(steps, baseline="step-300")
    assert chosen.baseline == "step-300" and {a.name for a in chosen.against} == {
        "step-100",
        "step-200",
    }
    with pytest.raises(InvalidInputError, match="not one of"):
        sweep(steps, baseline="step-999")
    with pytest.raises(InvalidInputError, match="two runs or more"):
        sweep(steps[:1])


def test_holm_steps_down_and_never_lowers_a_later_p() -> None:
    found = [
        AgainstBaseline(n, -0.1, -0.2, -0.01, p) for n, p in (("a", 0.01), ("b", 0.04), ("c", 0.03))
    ]
    _holm(found)
    adjusted = {a.name: a.adjusted_p for a in found}
    assert adjusted == pytest.approx({"a": 0.03, "c": 0.06, "b": 0.06})
    assert [a.regression for a in found] == [True, False, False]


def test_sweep_runs_takes_names_runs_or_paths_as_compare_runs_does(
    steps: list[tuple[str, Path]],
) -> None:
    from osmosis_local_runner import load_run, sweep_runs

    found = sweep_runs(["step-300", load_run("step-100"), steps[2][1]], baseline="step-200")
    assert [r.name for r in found.runs] == ["step-100", "step-200", "step-300"]
    assert found.baseline == "step-200"
    assert found.to_json()["against"][1]["regression"] is True  # step-300 against step-200


def test_the_sweep_page_lists_the_rows_solved_late_or_never(steps: list[tuple[str, Path]]) -> None:
    from osmosis_local_runner.api import run_eval
    from osmosis_local_runner.viewer.sweep_page import sweep_page

    # echo (everything failed) at step 50, first: every row is first solved later
    run_eval(CONFIG, name="early", model="mock/echo", limit=8, n=1, series="other", step=50)
    for name in ("step-100", "step-200"):
        step = int(name.split("-")[1])
        run_eval(
            CONFIG,
            name=f"o-{step}",
            model="mock/calculator",
            limit=8,
            n=1,
            series="other",
            step=step,
        )
    runs = steps[0][1].parent.parent
    found = [(n, runs / n / "results.json") for n in ("o-100", "early", "o-200")]
    page = sweep_page(sweep(found))
    late = page.split('data-testid="late-rows"', 1)[1]
    assert late.count("<tr><td>") == 8 and "o-100" in late  # all 8 rows, solved at 100
    assert 'href="/runs/early"' in page and ">step</text>" in page  # linked, axes named
    mean_curve = page.split('data-testid="curve-mean"', 1)[1].split("</figure>", 1)[0]
    assert mean_curve.count('class="error-bar"') == 3  # each step's 95 % interval


def test_runs_not_of_one_series_by_recorded_steps_are_never_joined(
    steps: list[tuple[str, Path]], quickstart_project: Path
) -> None:
    from osmosis_local_runner.api import run_eval

    run_eval(CONFIG, name="mellow-walrus-44", model="mock/calculator", limit=2)  # no series
    run_eval(CONFIG, name="deepseek-r1", model="mock/calculator", limit=2, series="x", step=1)
    run_eval(CONFIG, name="again-100", model="mock/calculator", limit=2, series="grpo", step=100)
    runs = quickstart_project / ".osmosis" / "evals"
    loose = [*steps[:1], ("mellow-walrus-44", runs / "mellow-walrus-44" / "results.json")]
    with pytest.raises(InvalidInputError, match="records no series and step"):
        sweep(loose)
    with pytest.raises(InvalidInputError, match="several series"):
        sweep([*steps[:1], ("deepseek-r1", runs / "deepseek-r1" / "results.json")])
    with pytest.raises(InvalidInputError, match="both step 100"):
        sweep([*steps, ("again-100", runs / "again-100" / "results.json")])
