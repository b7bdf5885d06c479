"""Dataframes across runs (issue 47): the run list, every attempt and every model call of
several runs as one frame each — pandas, or polars when asked and installed."""

from __future__ import annotations

from pathlib import Path

import pytest

from osmosis_client.errors import InvalidInputError
from osmosis_local_runner import attempts_df, calls_df, load_run, run_eval, runs_df


@pytest.fixture
def two_runs(quickstart_project: Path) -> list[str]:
    run_eval("configs/eval/quickstart.toml", name="step-100", model="mock/calculator", limit=3)
    run_eval("configs/eval/quickstart.toml", name="step-200", model="mock/echo", limit=3)
    return ["step-100", "step-200"]


def test_runs_df_is_the_run_list(two_runs: list[str]) -> None:
    frame = runs_df()
    assert sorted(frame["name"]) == two_runs
    row = frame.set_index("name").loc["step-100"]
    assert row["status"] == "finished" and row["attempts"] == 9 and row["mean"] == 1.0


def test_attempts_df_holds_every_attempt_of_every_run(two_runs: list[str]) -> None:
    frame = attempts_df(two_runs)
    assert len(frame) == 18 and set(frame["run"]) == set(two_runs)
    by_run = frame.groupby("run")["score:grader"].mean()
    assert by_run["step-100"] == 1.0 and by_run["step-200"] == 0.0
    assert frame["passed:grader"].sum() == 9
    first = frame.iloc[0]
    assert first["prompt"] and first["expected"] and first["output_tokens"] == 2
    assert first["finish_reason"] == "stop"
    # the run's own attempts, as its result gives them
    assert attempts_df(load_run("step-100")).equals(load_run("step-100").to_pandas())


def test_calls_df_has_each_model_call_with_its_timing(two_runs: list[str]) -> None:
    frame = calls_df(two_runs)
    assert len(frame) == 18  # one call an attempt (the calculator's workflow)
    assert (frame["tries"] == 1).all() and (frame["duration_ms"] >= 0).all()
    assert set(frame["input_tokens"]) == {15}
    assert list(frame.columns[:5]) == ["run", "row", "attempt", "model", "call"]


def test_polars_when_asked(two_runs: list[str]) -> None:
    polars = pytest.importorskip("polars", reason="polars is not installed (the polars extra)")
    frame = attempts_df(two_runs, engine="polars")
    assert isinstance(frame, polars.DataFrame) and frame.height == 18


def test_no_dataframe_library_is_one_clear_error(
    two_runs: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import builtins

    real = builtins.__import__

    def missing(name: str, *args: object, **kwargs: object) -> object:
        if name in ("pandas", "polars"):
            raise ImportError(name)
        return real(name, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(builtins, "__import__", missing)
    with pytest.raises(InvalidInputError, match="needs pandas or polars") as caught:
        attempts_df(two_runs)
    assert "osmosis-client[pandas]" in str(caught.value.hint)
