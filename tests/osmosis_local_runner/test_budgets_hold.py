"""Budgets that hold (issue 51): however fast the answers, a run passes its budget by at
most the attempts in flight when it was reached; the budget covers every invocation
(kept by a resume); an answer without usage is never counted as free unless the user
says so; usage outside any sane range is recorded as invalid, never summed; the
document says why a run stopped."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from osmosis_client.llm.prices import Price
from osmosis_client.llm.usage import call_usage
from osmosis_local_runner import load_run, run_eval
from osmosis_local_runner.errors import RunAborted
from osmosis_local_runner.results.documents.documents import ResultsFile
from osmosis_local_runner.results.statistics.usage import usage_lines
from osmosis_local_runner.run.session.journal import journal_path
from tests.osmosis_local_runner.test_reasoning_runs import MOCK, ROWS, Think, exact
from tests.stub_openai import StubOpenAI

PRICES = '[models."mock/thinking-calculator"]\ninput = 1.0\noutput = 4.0\ncache_read = 0.1\n'
STUB_PRICES = '[models."stub-model"]\ninput = 1.0\noutput = 1.0\n'


@pytest.fixture
def prices(tmp_path: Path) -> Path:
    path = tmp_path / "prices.toml"
    path.write_text(PRICES)
    return path


def _journal_costs(results: Path) -> list[float]:
    lines = journal_path(results).read_text().splitlines()[1:]
    return [json.loads(line)["usage"]["cost_usd"] for line in lines]


def _reached_at(costs: list[float], budget: float) -> int:
    """How many attempts had finished when their cost first reached the budget."""
    total = 0.0
    for i, cost in enumerate(costs, 1):
        total += cost
        if total >= budget:
            return i
    raise AssertionError("the budget was never reached")


@pytest.mark.parametrize("batch", [1, 4, 16])
def test_instant_answers_pass_the_budget_by_at_most_the_attempts_in_flight(
    tmp_path: Path, prices: Path, batch: int
) -> None:
    budget = 0.0006
    with pytest.raises(RunAborted) as stopped:
        run_eval(
            workflow=Think,
            dataset=ROWS * 8,
            eval_fns=[exact],
            model=MOCK,
            n=3,
            batch_size=batch,
            prices=prices,
            max_cost=budget,
            name="b",
            root=tmp_path,
        )
    assert stopped.value.code == "BUDGET"
    results = tmp_path / ".osmosis" / "evals" / "b" / "results.json"
    costs = _journal_costs(results)
    assert len(costs) <= _reached_at(costs, budget) + batch - 1  # only those in flight
    summary = json.loads(results.read_text())["summary"]
    assert summary["status"] == "stopped" and summary["stopped_reason"] == "budget"
    assert json.loads(results.read_text())["config"]["max_cost"] == budget


def test_the_budget_covers_every_invocation_and_a_resume_keeps_it(
    tmp_path: Path, prices: Path
) -> None:
    kwargs: dict[str, Any] = dict(
        workflow=Think,
        dataset=ROWS,
        eval_fns=[exact],
        model=MOCK,
        n=2,
        batch_size=2,
        prices=prices,
        name="b",
        root=tmp_path,
    )
    with pytest.raises(RunAborted):
        run_eval(**kwargs, max_cost=0.0004)
    results = tmp_path / ".osmosis" / "evals" / "b" / "results.json"
    before = journal_path(results).read_text()
    for _ in range(2):  # resumed with the budget it kept: nothing more is spent
        with pytest.raises(RunAborted) as again:
            run_eval(**kwargs, resume=True)
        assert again.value.code == "BUDGET"
        assert journal_path(results).read_text() == before
    done = run_eval(**kwargs, resume=True, max_cost=1.0)  # a higher budget runs the rest
    assert done.status == "finished" and done.summary.total_runs == 16


def test_a_budget_reached_by_the_last_attempt_is_a_finished_run(
    tmp_path: Path, prices: Path
) -> None:
    whole = run_eval(
        workflow=Think,
        dataset=ROWS[:3],
        eval_fns=[exact],
        model=MOCK,
        batch_size=1,
        prices=prices,
        output=tmp_path / "whole.json",
    )
    cost = whole.summary.usage.cost_usd if whole.summary.usage else None
    assert cost
    last = _journal_costs(whole.path)[-1]
    done = run_eval(
        workflow=Think,
        dataset=ROWS[:3],
        eval_fns=[exact],
        model=MOCK,
        batch_size=1,
        prices=prices,
        max_cost=cost - last / 2,
        output=tmp_path / "tight.json",
    )
    assert done.status == "finished" and "stopped_reason" not in done.to_dict()["summary"]


@pytest.fixture
def stub() -> Any:
    with StubOpenAI() as server:
        yield server


def _stub_run(stub: Any, tmp_path: Path, **more: Any) -> Any:
    prices = tmp_path / "stub-prices.toml"
    prices.write_text(STUB_PRICES)
    return run_eval(
        workflow=Think,
        dataset=ROWS[:4],
        eval_fns=[exact],
        model="stub-model",
        base_url=stub.url,
        prices=prices,
        **more,
    )


def test_answers_without_usage_are_unknown_and_a_budget_refuses_to_go_on_blind(
    stub: Any, tmp_path: Path
) -> None:
    stub.state.usage = None
    with pytest.raises(RunAborted) as blind:
        _stub_run(stub, tmp_path, max_cost=1.0, batch_size=1, output=tmp_path / "a.json")
    assert blind.value.code == "USAGE_UNKNOWN" and "stub-model" in blind.value.message
    assert len(stub.state.requests) == 1  # no second attempt started
    assert json.loads((tmp_path / "a.json").read_text())["summary"]["stopped_reason"] == (
        "usage_unknown"
    )
    free = _stub_run(stub, tmp_path, max_cost=1.0, unknown_usage="free", output=tmp_path / "b.json")
    usage = free.summary.usage
    assert free.status == "finished" and usage is not None and usage.cost_usd == 0
    raw = json.loads(free.path.read_text())["summary"]["usage"]
    assert raw["unreported_calls"] == 4
    unbudgeted = _stub_run(stub, tmp_path, output=tmp_path / "c.json")
    raw = json.loads(unbudgeted.path.read_text())["summary"]["usage"]
    assert raw["cost_usd"] is None and raw["unreported_calls"] == 4
    assert "cost: unknown (4 call(s) reported no usage)" in "\n".join(usage_lines(raw))


@pytest.mark.parametrize(
    "usage",
    [
        {"prompt_tokens": 10**400, "completion_tokens": 3},  # beyond a float's range
        {"prompt_tokens": -7, "completion_tokens": -3},  # negative
        {"prompt_tokens": 7, "completion_tokens": 3, "cost": 1e308},  # absurd cost
        {"prompt_tokens": 7.5, "completion_tokens": 3},  # not a whole number
    ],
)
def test_usage_outside_any_sane_range_is_invalid_never_summed(
    stub: Any, tmp_path: Path, usage: dict[str, Any]
) -> None:
    stub.state.usage = usage
    result = _stub_run(stub, tmp_path, n=2, output=tmp_path / "r.json")
    assert result.status == "finished"
    raw = json.loads(result.path.read_text())["summary"]["usage"]
    assert raw["invalid_calls"] == 8 and raw["input_tokens"] == 0 and raw["cost_usd"] is None
    ResultsFile(result.path)  # the run's own tools read what it wrote
    assert load_run(result.path).summary.total_runs == 8
    assert "8 call(s) reported usage outside any sane range" in "\n".join(usage_lines(raw))
    with pytest.raises(RunAborted) as stopped:  # and a budget cannot be kept on it
        _stub_run(stub, tmp_path, max_cost=1.0, output=tmp_path / "s.json")
    assert stopped.value.code == "USAGE_UNKNOWN"


def test_a_call_usage_is_read_at_the_edge() -> None:
    assert call_usage({"usage": {"prompt_tokens": 5, "completion_tokens": 2}}).total_tokens == 7
    assert call_usage({}).unreported == 1 and call_usage({"usage": {}}).unreported == 1
    assert call_usage({"usage": {"prompt_tokens": True}}).invalid == 1
    assert call_usage({"usage": {"prompt_tokens": 5, "cost": -1}}).invalid == 1
    assert call_usage({"usage": {"prompt_tokens": 5, "cost": 0.5}}).reported_cost == 0.5


@pytest.mark.parametrize("value", [-1.0, float("inf"), float("nan"), "1"])
def test_a_price_is_finite_and_never_negative_from_any_source(value: Any) -> None:
    from osmosis_client.platform.model_models import BaseModelDetail
    from osmosis_client.platform.resources.models import platform_price

    with pytest.raises(ValueError):
        Price(value, 1.0)
    with pytest.raises(ValueError):
        Price(1.0, 1.0, cache_read=value)
    if isinstance(value, float):
        detail = BaseModelDetail.model_validate(
            {
                "id": "m",
                "model_name": "m",
                "inference_input_usd_per_million_tokens": value,
                "inference_output_usd_per_million_tokens": 1.0,
            }
        )
        assert platform_price(detail) is None  # never a credit
