"""Reasoning models in a run (issue 44): reasoning kept apart and given back across a
rollout that rebuilds its messages, every call's tokens by kind counted per attempt and
per run (a judge apart), truncation, cost from a price table, a cost budget that stops
the run and resumes it once, a per-attempt token budget, effort as a suite axis, and
usage compared — through the library and the CLI."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from osmosis_client.errors import InvalidInputError
from osmosis_client.rollout import AgentWorkflow
from osmosis_local_runner import compare_runs, load_run, run_eval
from osmosis_local_runner.errors import RunAborted
from osmosis_local_runner.run.session.journal import journal_path
from tests.osmosis_local_runner.test_one_run_path import cli
from tests.reasoning_peer import ReasoningPeer

ROWS = [
    {"user_prompt": f"What is {i} * {i + 1}?", "ground_truth": str(i * (i + 1))}
    for i in range(1, 9)
]
MOCK = "mock/thinking-calculator"
PRICES = """
[models."mock/thinking-calculator"]
input = 1.0
output = 4.0
cache_read = 0.1
[models."mock/judge"]
input = 0.5
output = 0.5
"""


class Think(AgentWorkflow):
    async def run(self, ctx: Any) -> Any:
        return [*ctx.prompt, await ctx.chat(ctx.prompt)]


def exact(solution_str: str, ground_truth: str, extra_info: Any = None) -> float:
    return 1.0 if solution_str.strip() == ground_truth else 0.0


@pytest.fixture
def prices(tmp_path: Path) -> Path:
    path = tmp_path / "prices.toml"
    path.write_text(PRICES)
    return path


def _runs(result: Any) -> list[dict[str, Any]]:
    return [run for row in result.to_dict()["rows"] for run in row["runs"]]


def test_a_run_counts_tokens_by_kind_truncation_and_cost(tmp_path: Path, prices: Path) -> None:
    result = run_eval(
        workflow=Think,
        dataset=ROWS,
        eval_fns=[exact],
        model=MOCK,
        n=2,
        prices=prices,
        output=tmp_path / "r.json",
    )
    usage = result.summary.usage
    assert usage is not None and usage.attempts == 16 and usage.calls == 16
    runs = _runs(result)
    # totals are sums of calls (never averages of averages)
    for kind in ("input_tokens", "output_tokens", "reasoning_tokens", "cache_read_tokens"):
        assert getattr(usage, kind) == sum(r["usage"].get(kind, 0) for r in runs) > 0
    assert usage.reasoning_tokens < usage.output_tokens  # reasoning is inside the output
    expected = sum(
        (
            (r["usage"]["input_tokens"] - r["usage"]["cache_read_tokens"]) * 1.0
            + r["usage"]["cache_read_tokens"] * 0.1
            + r["usage"]["output_tokens"] * 4.0
        )
        / 1e6
        for r in runs
    )
    assert usage.cost_usd == pytest.approx(expected)
    assert usage.truncated == 0 and set(usage.per_attempt) >= {"output_tokens", "cost_usd"}
    spread = usage.per_attempt["output_tokens"]
    assert min(r["usage"]["output_tokens"] for r in runs) <= spread.p50 <= spread.p95
    # the answer alone is graded and shown; the reasoning is in the transcript beside it
    first = runs[0]
    assert first["messages"][-1]["reasoning_content"].startswith("Let me work it out")
    assert first["answer"] == first["messages"][-1]["content"]
    assert "<think>" not in first["answer"] and first["usage"]["finish_reason"] == "stop"


def test_a_cut_answer_is_a_truncated_attempt_and_eval_fns_may_see_the_reasoning(
    tmp_path: Path,
) -> None:
    cut = run_eval(
        workflow=Think,
        dataset=ROWS[:3],
        eval_fns=[exact],
        model=MOCK,
        max_tokens=8,
        output=tmp_path / "cut.json",
    )
    assert cut.summary.usage is not None and cut.summary.usage.truncated == 3
    assert cut.summary.usage.truncation_rate == 1.0
    assert all(
        r["usage"]["truncated"] is True and r["usage"]["finish_reason"] == "length"
        for r in _runs(cut)
    )
    seen: list[str] = []

    def look(solution_str: str, ground_truth: str, extra_info: Any = None) -> float:
        seen.append(solution_str)
        return 0.0

    run_eval(
        workflow=Think,
        dataset=ROWS[:1],
        eval_fns=[look],
        model=MOCK,
        raw_answers=True,
        output=tmp_path / "raw.json",
    )
    assert seen[0].startswith("<think>Let me work it out") and "</think>\n\n" in seen[0]


def test_a_judge_is_counted_apart_from_the_model_under_test(tmp_path: Path, prices: Path) -> None:
    from osmosis_client.rewards import aevaluate_rubric

    async def judged(solution_str: str, ground_truth: str, extra_info: Any = None) -> float:
        found = await aevaluate_rubric(
            "Is it right?", solution_str, {"provider": "mock", "model": "judge"}
        )
        return float(found)

    result = run_eval(
        workflow=Think,
        dataset=ROWS[:2],
        eval_fns=[judged],
        model=MOCK,
        prices=prices,
        output=tmp_path / "j.json",
    )
    usage = result.summary.usage
    assert usage is not None and set(usage.by_model) == {MOCK, "mock/judge"}
    assert usage.calls == 4 and usage.by_model["mock/judge"]["calls"] == 2
    assert usage.cost_usd == pytest.approx(sum(m["cost_usd"] for m in usage.by_model.values()))


def test_a_cost_budget_stops_the_run_and_a_resume_runs_each_attempt_once(
    tmp_path: Path, prices: Path
) -> None:
    with pytest.raises(RunAborted) as stopped:
        run_eval(
            workflow=Think,
            dataset=ROWS,
            eval_fns=[exact],
            model=MOCK,
            n=2,
            batch_size=1,
            prices=prices,
            max_cost=0.0005,
            name="budget",
            root=tmp_path,
        )
    assert stopped.value.code == "BUDGET"
    partial = load_run("budget", root=tmp_path)
    assert partial.status == "stopped" and 0 < partial.summary.total_runs < 16
    assert partial.summary.usage is not None
    assert (partial.summary.usage.cost_usd or 0) >= 0.0005
    # the budget is kept: the rest runs with a higher one
    done = run_eval(
        workflow=Think,
        dataset=ROWS,
        eval_fns=[exact],
        model=MOCK,
        n=2,
        batch_size=1,
        prices=prices,
        name="budget",
        resume=True,
        max_cost=1.0,
        root=tmp_path,
    )
    assert done.status == "finished" and done.summary.total_runs == 16
    journal = journal_path(done.path).read_text().splitlines()[1:]
    keys = [(json.loads(line)["row_index"], json.loads(line)["run_index"]) for line in journal]
    assert len(keys) == len(set(keys)) == 16  # each attempt ran once


def test_a_budget_without_a_price_is_refused_before_anything_runs(tmp_path: Path) -> None:
    with pytest.raises(InvalidInputError) as refused:
        run_eval(
            workflow=Think,
            dataset=ROWS,
            eval_fns=[exact],
            model=MOCK,
            max_cost=1.0,
            output=tmp_path / "r.json",
        )
    assert refused.value.code == "NO_PRICE" and MOCK in refused.value.message
    assert not (tmp_path / "r.json").exists()


class Loop(AgentWorkflow):
    """Asks three times, rebuilding the conversation from the text alone."""

    async def run(self, ctx: Any) -> Any:
        messages = list(ctx.prompt)
        for _ in range(3):
            answer = await ctx.chat(messages)
            messages += [
                {"role": "assistant", "content": answer.get("content")},
                {"role": "user", "content": "Again: " + ctx.prompt[-1]["content"]},
            ]
        return messages


def test_a_token_budget_ends_an_attempt_that_runs_on(tmp_path: Path) -> None:
    result = run_eval(
        workflow=Loop,
        dataset=ROWS[:2],
        eval_fns=[exact],
        model=MOCK,
        max_attempt_tokens=60,
        output=tmp_path / "r.json",
    )
    for run in _runs(result):
        assert run["usage"]["truncated"] is True
        assert run["usage"]["finish_reason"] == "token_budget"
        assert "max_attempt_tokens" in run["error"]
        assert run["usage"]["input_tokens"] + run["usage"]["output_tokens"] >= 60


class Rebuilds(AgentWorkflow):
    """A tool loop that keeps only each answer's text and calls (as agent frameworks do)."""

    async def run(self, ctx: Any) -> Any:
        tools = [
            {
                "type": "function",
                "function": {
                    "name": name,
                    "parameters": {
                        "type": "object",
                        "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
                    },
                },
            }
            for name in ("add", "subtract", "multiply", "divide")
        ]
        messages = list(ctx.prompt)
        ops = {"multiply": lambda a, b: a * b, "add": lambda a, b: a + b}
        for _ in range(3):
            reply = await ctx.chat(messages, tools=tools)
            kept = {"role": "assistant", "content": reply.get("content")}
            if reply.get("tool_calls"):
                kept["tool_calls"] = reply["tool_calls"]
            messages.append(kept)
            if not reply.get("tool_calls"):
                break
            for call in reply["tool_calls"]:
                args = json.loads(call["function"]["arguments"])
                value = ops[call["function"]["name"]](args["a"], args["b"])
                messages.append({"role": "tool", "tool_call_id": call["id"], "content": str(value)})
        return messages


def last_number(solution_str: str, ground_truth: str, extra_info: Any = None) -> float:
    return 1.0 if solution_str.rstrip(".").endswith(ground_truth) else 0.0


@pytest.mark.parametrize(
    ("wire", "flavor"),
    [
        ("anthropic_messages", "anthropic"),
        ("openai_responses", "openai"),
        ("openai_chat_completions", "deepseek"),
    ],
)
def test_a_rollout_that_rebuilds_its_messages_still_gives_the_provider_its_reasoning(
    tmp_path: Path, wire: str, flavor: str
) -> None:
    with ReasoningPeer(flavor) as peer:
        registry = tmp_path / "endpoints.toml"
        registry.write_text(
            f'[[endpoint]]\nendpoint_id = "peer"\nmodel = "reasoner"\nurl = "{peer.url}"\n'
            f'api_client_type = "{wire}"\n'
        )
        result = run_eval(
            workflow=Rebuilds,
            dataset=ROWS[:3],
            eval_fns=[last_number],
            model="peer",
            endpoints=registry,
            reasoning_effort="high",
            output=tmp_path / "r.json",
        )
    assert peer.refused == [], peer.refused
    assert result.summary.eval_fns["last_number"].mean == 1.0
    run = _runs(result)[0]
    tool_turn = run["messages"][1]
    assert "tool_calls" in tool_turn and run["usage"]["calls"] == 2
    # the transcript keeps what the rollout kept; the calls' usage is in model_calls
    assert all("usage" in call for call in run["model_calls"])


def test_effort_is_an_axis_and_compare_shows_reasoning_grow(tmp_path: Path) -> None:
    low = run_eval(
        workflow=Think,
        dataset=ROWS,
        eval_fns=[exact],
        model=MOCK,
        reasoning_effort="low",
        output=tmp_path / "low.json",
    )
    high = run_eval(
        workflow=Think,
        dataset=ROWS,
        eval_fns=[exact],
        model=MOCK,
        reasoning_effort="high",
        output=tmp_path / "high.json",
    )
    assert low.config["sampling"]["reasoning_effort"] == "low"  # recorded in the run
    comparison = compare_runs(low, high).to_dict()["usage"]
    grown = comparison["reasoning_tokens"]
    assert grown["diff"] > 0 and grown["ci_low"] > 0 and grown["pairs"] == len(ROWS)
    assert comparison["truncation_rate"]["diff"] == 0.0


def test_the_cli_shows_usage_and_stops_at_its_budget(
    quickstart_project: Path, prices: Path
) -> None:
    import os

    os.chdir(quickstart_project)
    code, out, err = cli(
        "eval",
        "run",
        "configs/eval/quickstart.toml",
        "--model",
        MOCK,
        "--reasoning-effort",
        "high",
        "--prices",
        str(prices),
        "--limit",
        "4",
        "-o",
        "a.json",
    )
    assert code in (0, 1), err
    assert "reasoning)" in out and "cost: $" in out and "truncated: 0 of 12" in out
    document = json.loads(Path("a.json").read_text())
    assert document["summary"]["usage"]["reasoning_tokens"] > 0
    code, out, err = cli(
        "eval",
        "run",
        "configs/eval/quickstart.toml",
        "--model",
        MOCK,
        "--prices",
        str(prices),
        "--max-cost",
        "0.0002",
        "--batch-size",
        "1",
        "-o",
        "b.json",
    )
    assert code == 1 and "max_cost" in err and "resume" in err.lower()
    assert json.loads(Path("b.json").read_text())["summary"]["status"] == "stopped"
    code, _, err = cli(
        "eval",
        "run",
        "configs/eval/quickstart.toml",
        "--model",
        MOCK,
        "--max-cost",
        "1",
        "-o",
        "c.json",
    )
    assert code == 2 and "no price is known for mock/thinking-calculator" in err
