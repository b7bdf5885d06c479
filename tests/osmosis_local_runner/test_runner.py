"""Runner semantics: limit, sampling, n, sliding window, timeouts, isolation, stop, resume."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from osmosis_client.errors import InvalidInputError, OsmosisError
from osmosis_client.llm.providers import resolve_target
from osmosis_client.rollout import AgentWorkflow, AgentWorkflowContext, GraderContext
from osmosis_local_runner.run.execute.eval_fns import EvalFn
from osmosis_local_runner.run.execute.runner import Runner
from osmosis_local_runner.run.request.spec import RunSpec
from osmosis_local_runner.run.session.journal import journal_path


def dataset(tmp_path: Path, rows: int = 10) -> Path:
    path = tmp_path / "data.jsonl"
    path.write_text(
        "".join(
            json.dumps({"user_prompt": f"What is {i} + {i}?", "ground_truth": str(2 * i), "i": i})
            + "\n"
            for i in range(rows)
        )
    )
    return path


class Calc(AgentWorkflow):
    def __init__(self) -> None:
        self.calls: list[tuple[int, int]] = []

    async def run(self, ctx: AgentWorkflowContext) -> None:
        self.calls.append((ctx.row_index, ctx.run_index))
        await ctx.chat(ctx.prompt, seed=ctx.run_index)


async def exact(ctx: GraderContext) -> float:
    return 1.0 if ctx.solution_str == ctx.ground_truth else 0.0


GRADER = EvalFn("grader", exact, "grader", True)


def make_spec(tmp_path: Path, workflow: Any, **kw: Any) -> RunSpec:
    opts: dict[str, Any] = {
        "model": _target(kw.pop("model", "mock/calculator")),
        "dataset": kw.pop("data", None) or dataset(tmp_path),
        "workflow": workflow,
        "eval_fns": [GRADER],
        "output": tmp_path / "out" / "results.json",
        **kw,
    }
    return RunSpec(**opts)


def _target(model: Any) -> Any:
    return resolve_target(model, env={}) if isinstance(model, str) else model


def run(spec: RunSpec, **kw: Any) -> dict[str, Any]:
    return asyncio.run(Runner(spec, **kw).run()).document


def attempts(doc: dict[str, Any]) -> list[tuple[int, int]]:
    return [(row["row_index"], r["run_index"]) for row in doc["rows"] for r in row["runs"]]


def test_limit_and_n(tmp_path: Path) -> None:
    workflow = Calc()
    doc = run(make_spec(tmp_path, workflow, limit=3, n=2, batch_size=4))
    assert attempts(doc) == [(0, 0), (0, 1), (1, 0), (1, 1), (2, 0), (2, 1)]
    assert sorted(workflow.calls) == attempts(doc)
    summary = doc["summary"]
    assert summary["status"] == "finished"
    assert (summary["total_rows"], summary["total_runs"], summary["errored_runs"]) == (3, 6, 0)
    assert summary["eval_fns"]["grader"]["mean"] == 1.0
    assert summary["eval_fns"]["grader"]["pass_at_1"] == 1.0
    assert summary["total_tokens"] > 0
    assert doc["rows"][0]["runs"][0]["tokens"] > 0
    saved = json.loads((tmp_path / "out" / "results.json").read_text())
    assert saved == doc


def test_sample_is_reproducible_and_recorded(tmp_path: Path) -> None:
    data = dataset(tmp_path, 40)
    a = run(make_spec(tmp_path / "a", Calc(), data=data, sample=True, seed=5))
    b = run(make_spec(tmp_path / "b", Calc(), data=data, sample=True, seed=5))
    c = run(make_spec(tmp_path / "c", Calc(), data=data, sample=True, seed=6))
    rows = lambda d: [r["row_index"] for r in d["rows"]]  # noqa: E731
    assert rows(a) == rows(b) != rows(c)
    assert len(rows(a)) == 4
    assert a["config"]["seed"] == 5 and a["config"]["sampled"] is True


def test_window_never_exceeds_batch_size_and_reaches_it(tmp_path: Path) -> None:
    state = {"now": 0, "max": 0}

    class Gated(AgentWorkflow):
        async def run(self, ctx: AgentWorkflowContext) -> list[dict[str, Any]]:
            state["now"] += 1
            state["max"] = max(state["max"], state["now"])
            for _ in range(3):  # let the others start: no real time passes
                await asyncio.sleep(0)
            state["now"] -= 1
            return [{"role": "assistant", "content": "0"}]

    runner = Runner(make_spec(tmp_path, Gated(), data=dataset(tmp_path, 30), batch_size=4))
    result = asyncio.run(runner.run())
    assert state["max"] == 4
    assert result.stats.max_in_flight == 4


def test_slow_attempt_does_not_hold_the_window(tmp_path: Path) -> None:
    finished: list[int] = []
    release = {}

    class OneSlow(AgentWorkflow):
        async def run(self, ctx: AgentWorkflowContext) -> list[dict[str, Any]]:
            if ctx.row_index == 0:
                release["event"] = asyncio.Event()
                await release["event"].wait()
            finished.append(ctx.row_index)
            if len(finished) == 9:
                release["event"].set()  # everything else got through meanwhile
            return [{"role": "assistant", "content": "x"}]

    run(make_spec(tmp_path, OneSlow(), batch_size=2))
    assert finished[-1] == 0
    assert sorted(finished) == list(range(10))


def test_workflow_and_grader_timeouts_mark_only_that_attempt(tmp_path: Path) -> None:
    class SlowOnRowOne(AgentWorkflow):
        async def run(self, ctx: AgentWorkflowContext) -> list[dict[str, Any]]:
            if ctx.row_index == 1:
                await asyncio.sleep(30)
            return [{"role": "assistant", "content": str(2 * ctx.metadata["i"])}]

    async def slow_grader(ctx: GraderContext) -> float:
        if ctx.row_index == 2:
            await asyncio.sleep(30)
        return 1.0

    spec = make_spec(
        tmp_path,
        SlowOnRowOne(),
        limit=4,
        batch_size=4,
        agent_workflow_timeout_s=0.05,
        grader_timeout_s=0.05,
    )
    spec.eval_fns = [EvalFn("grader", slow_grader, "grader", True)]
    doc = run(spec)
    runs = {row["row_index"]: row["runs"][0] for row in doc["rows"]}
    assert runs[1]["success"] is False and "workflow timed out" in runs[1]["error"]
    assert runs[2]["success"] is False and "grader timed out" in runs[2]["error"]
    assert runs[0]["success"] and runs[3]["success"]
    assert runs[1]["scores"] == {"grader": 0.0}
    assert doc["summary"]["errored_runs"] == 2
    assert doc["summary"]["eval_fns"]["grader"]["pass_at_1"] == 0.5


def test_errors_in_user_code_are_isolated(tmp_path: Path) -> None:
    class Flaky(AgentWorkflow):
        def run(self, ctx: AgentWorkflowContext) -> Any:  # sync is accepted too
            if ctx.row_index == 3:
                raise RuntimeError("boom on row 3")
            if ctx.row_index == 4:
                return "not a list"
            return [{"role": "assistant", "content": str(2 * ctx.metadata["i"])}]

    def grader(ctx: GraderContext) -> float:
        if ctx.row_index == 5:
            raise KeyError("missing")
        if ctx.row_index == 6:
            return float("nan")
        if ctx.row_index == 7:
            ctx.set_reward(0.25)
            return None  # type: ignore[return-value]
        return 1.0

    spec = make_spec(tmp_path, Flaky(), batch_size=3)
    spec.eval_fns = [EvalFn("grader", grader, "grader", False)]
    doc = run(spec)
    runs = {row["row_index"]: row["runs"][0] for row in doc["rows"]}
    assert runs[3]["error"] == "workflow: RuntimeError: boom on row 3"
    assert "must return a list" in runs[4]["error"]
    assert runs[5]["error"].startswith("grader: KeyError")
    assert "finite" in runs[6]["error"]
    assert runs[7]["scores"] == {"grader": 0.25} and runs[7]["success"]
    assert doc["summary"]["errored_runs"] == 4
    assert doc["summary"]["status"] == "finished"


def test_a_nan_in_a_conversation_is_written_as_null_and_the_attempt_kept(
    tmp_path: Path,
) -> None:
    """JSON has no NaN: a tool result holding one is written as null (strict JSON), and
    the attempt is graded as any other rather than failed for its transcript."""

    class WithNaN(AgentWorkflow):
        def run(self, ctx: AgentWorkflowContext) -> Any:
            return [
                {"role": "tool", "content": "measured", "data": {"value": float("nan")}},
                {"role": "assistant", "content": str(2 * ctx.metadata["i"])},
            ]

    spec = make_spec(tmp_path, WithNaN(), limit=2, batch_size=2)
    doc = run(spec)
    text = spec.output.read_text()
    json.loads(text, parse_constant=lambda name: pytest.fail(f"{name} in the document"))
    first = doc["rows"][0]["runs"][0]
    assert first["success"] is True and first["error"] is None
    assert first["messages"][0]["data"] == {"value": None}


def test_eval_fns_simple_and_full_modes(tmp_path: Path) -> None:
    seen: dict[str, Any] = {}

    def simple(
        solution_str: str, ground_truth: str, extra_info: dict[str, Any] | None = None
    ) -> float:
        seen["extra"] = extra_info
        return 1.0 if solution_str == ground_truth else 0.0

    async def full(
        messages: list[dict[str, Any]], ground_truth: str, metadata: dict[str, Any]
    ) -> float:
        seen["roles"] = [m["role"] for m in messages]
        raise ValueError("full mode fails")

    spec = make_spec(tmp_path, Calc(), limit=1)
    spec.eval_fns = [
        EvalFn("m:simple", simple, "simple", False),
        EvalFn("m:full", full, "full", True),
    ]
    doc = run(spec)
    run0 = doc["rows"][0]["runs"][0]
    # cli.md: a raising eval fn scores 0 and lands in fn_errors; the others keep their
    # scores and `success` reflects the rollout only
    assert run0["scores"] == {"m:simple": 1.0, "m:full": 0.0}
    assert run0["success"] is True and run0["error"] is None
    assert run0["fn_errors"] == {"m:full": "ValueError: full mode fails"}
    assert seen["extra"] == {"user_prompt": "What is 0 + 0?", "ground_truth": "0", "i": 0}
    assert seen["roles"] == ["user", "assistant"]
    stats = doc["summary"]["eval_fns"]
    assert stats["m:simple"]["mean"] == 1.0 and stats["m:simple"]["pass_at_1"] == 1.0
    assert stats["m:full"]["mean"] == 0.0 and stats["m:full"]["pass_at_1"] == 0.0


def test_interrupt_keeps_finished_and_marks_stopped(tmp_path: Path) -> None:
    holder: dict[str, Runner] = {}

    class StopsAfterFive(AgentWorkflow):
        async def run(self, ctx: AgentWorkflowContext) -> list[dict[str, Any]]:
            if ctx.row_index == 5:
                holder["runner"].interrupt()
                await asyncio.sleep(30)  # in flight: must be cancelled
            return [{"role": "assistant", "content": str(2 * ctx.metadata["i"])}]

    runner = Runner(make_spec(tmp_path, StopsAfterFive(), batch_size=1))
    holder["runner"] = runner
    doc = asyncio.run(runner.run()).document
    assert doc["summary"]["status"] == "stopped"
    assert attempts(doc) == [(i, 0) for i in range(5)]
    assert (
        json.loads((tmp_path / "out" / "results.json").read_text())["summary"]["status"]
        == "stopped"
    )


def test_resume_redoes_only_unfinished(tmp_path: Path) -> None:
    holder: dict[str, Any] = {}

    class Interrupting(Calc):
        async def run(self, ctx: AgentWorkflowContext) -> None:
            if len(self.calls) == 7 and holder.get("stop"):
                holder["runner"].interrupt()
                await asyncio.sleep(30)
            await super().run(ctx)

    first = Interrupting()
    holder["stop"] = True
    runner = Runner(make_spec(tmp_path, first, n=2, batch_size=1))
    holder["runner"] = runner
    partial = asyncio.run(runner.run()).document
    done_first = set(attempts(partial))
    assert len(done_first) == 7

    second = Calc()
    full = run(make_spec(tmp_path, second, n=2, batch_size=3, resume=True))
    assert full["summary"]["status"] == "finished"
    assert sorted(attempts(full)) == [(r, k) for r in range(10) for k in range(2)]
    assert not done_first & set(second.calls)  # nothing finished was redone
    assert len(second.calls) == 13
    lines = journal_path(tmp_path / "out" / "results.json").read_text().splitlines()[1:]
    keys = [(json.loads(x)["row_index"], json.loads(x)["run_index"]) for x in lines]
    assert len(keys) == len(set(keys)) == 20


def test_resume_refuses_changed_settings(tmp_path: Path) -> None:
    run(make_spec(tmp_path, Calc(), n=2, limit=2))
    with pytest.raises(InvalidInputError) as info:
        run(make_spec(tmp_path, Calc(), n=3, limit=2, pass_threshold=0.5, resume=True))
    assert "n: 2 → 3" in info.value.message
    assert "pass_threshold: 1.0 → 0.5" in info.value.message


def test_a_rerun_replaces_a_finished_run_but_never_an_unfinished_one(tmp_path: Path) -> None:
    run(make_spec(tmp_path, Calc(), limit=1))
    again = run(make_spec(tmp_path, Calc(), limit=2))  # the same -o: replaced, as 0.2 did
    assert again["summary"]["total_rows"] == 2
    results = tmp_path / "out" / "results.json"
    assert len(journal_path(results).read_text().splitlines()) == 1 + 2  # fingerprint + 2
    results.unlink()  # as if killed: a journal and no finished document
    with pytest.raises(InvalidInputError) as info:
        run(make_spec(tmp_path, Calc(), limit=1))
    assert "exists from an earlier run" in info.value.message
    assert info.value.code == "RESULTS_EXIST"


def test_progress_reports_counts(tmp_path: Path) -> None:
    seen: list[tuple[int, int]] = []
    record: Callable[[Any], None] = lambda p: seen.append((p.done, p.total))  # noqa: E731
    run(make_spec(tmp_path, Calc(), limit=4, n=2), on_progress=record)
    assert seen[-1] == (8, 8)
    assert [d for d, _ in seen] == list(range(1, 9))


def test_a_baseline_model_is_recorded_and_never_halves_the_live_pass_rate(tmp_path: Path) -> None:
    seen: list[float | None] = []
    spec = make_spec(tmp_path, Calc(), limit=3, baseline=resolve_target("mock/calculator", env={}))
    doc = run(spec, on_progress=lambda p: seen.append(p.pass_rate(GRADER.name)))
    assert doc["config"]["baseline_model"] == "mock/calculator"
    assert seen[-1] == 1.0  # every attempt of the run's model passed (not 3 of 6)
    summary = doc["summary"]
    assert summary["total_runs"] == 6 and summary["stopped_early"] is False  # both models
    assert summary["eval_fns"][GRADER.name]["mean"] == 1.0
    tags = sorted(run["model_tag"] for row in doc["rows"] for run in row["runs"])
    assert tags == ["baseline"] * 3 + ["primary"] * 3


def test_a_baseline_runs_document_reads_back_with_the_primary_tag_as_none(tmp_path: Path) -> None:
    from osmosis_local_runner.results.documents.documents import ResultsFile

    spec = make_spec(tmp_path, Calc(), limit=2, baseline=resolve_target("mock/calculator", env={}))
    run(spec)
    rows = list(ResultsFile(spec.output).rows())
    tags = sorted(str(r.model_tag) for row in rows for r in row.runs)
    assert tags == ["None", "None", "baseline", "baseline"]  # "primary" read back as None
    assert [r.model_tag for r in rows[0].scored()] == [None]


def test_each_row_keeps_its_prompt_expected_answer_and_columns(tmp_path: Path) -> None:
    from osmosis_local_runner.results.documents.documents import ResultsFile

    data = tmp_path / "rows.jsonl"
    data.write_text(
        json.dumps({"user_prompt": "What is 1 + 1?", "ground_truth": "2", "difficulty": "easy"})
        + "\n"
        + json.dumps({"user_prompt": "Hard?", "label": 7, "metadata": {"topic": "x", "w": 1.5}})
        + "\n"
    )
    doc = run(make_spec(tmp_path, Calc(), data=data, n=2))
    first, second = doc["rows"]
    assert (first["prompt"], first["expected"], first["metadata"]) == (
        "What is 1 + 1?",
        "2",
        {"difficulty": "easy"},
    )
    assert second["expected"] == "7"  # the 0.3 SDK's label column, as text
    assert second["metadata"] == {"label": 7, "topic": "x", "w": 1.5}
    results = tmp_path / "out" / "results.json"
    assert json.loads(results.read_text()) == doc  # the streamed file says the same
    lines = [json.loads(x) for x in journal_path(results).read_text().splitlines()[1:]]
    assert {line["row"]["expected"] for line in lines} == {"2", "7"}  # resume keeps them
    rows = list(ResultsFile(results).rows())
    assert rows[0].expected == "2" and rows[0].metadata == {"difficulty": "easy"}
    assert rows[1].prompt() == "Hard?"
    assert all(r.row_facts == rows[0].runs[0].row_facts for r in rows[0].runs)


def test_rows_of_a_resumed_run_keep_their_facts(tmp_path: Path) -> None:
    holder: dict[str, Any] = {}

    class Interrupting(Calc):
        async def run(self, ctx: AgentWorkflowContext) -> None:
            if len(self.calls) == 3:
                holder["runner"].interrupt()
                await asyncio.sleep(30)
            await super().run(ctx)

    runner = Runner(make_spec(tmp_path, Interrupting(), limit=6, batch_size=1))
    holder["runner"] = runner
    asyncio.run(runner.run())
    full = run(make_spec(tmp_path, Calc(), limit=6, batch_size=1, resume=True))
    assert [row["expected"] for row in full["rows"]] == [str(2 * i) for i in range(6)]
    assert [row["metadata"] for row in full["rows"]] == [{"i": i} for i in range(6)]


def test_the_first_wave_checks_the_endpoint_without_a_request_of_its_own(
    tmp_path: Path,
) -> None:
    """Issue 33: a probe request took a window slot, so 640 attempts at batch 64 needed an
    11th wave; the first wave's own calls now check the endpoint."""
    from tests.stub_openai import StubOpenAI

    with StubOpenAI(latency=0.05) as stub:
        target = resolve_target("served", base_url=stub.url, env={})
        spec = make_spec(tmp_path, Calc(), limit=10, batch_size=5, model=target, probe=True)
        doc = run(spec)
        assert doc["summary"]["total_runs"] == 10
        assert len(stub.state.requests) == 10  # the attempts, and nothing else
        assert stub.state.max_in_flight == 5  # the window, never more
    # an endpoint that refuses the key: the first wave's failure abandons the run
    with StubOpenAI() as stub:
        stub.state.required_key = "right"
        target = resolve_target("served", base_url=stub.url, env={})
        spec = make_spec(
            tmp_path,
            Calc(),
            limit=10,
            batch_size=5,
            model=target,
            probe=True,
            output=tmp_path / "refused.json",
        )
        with pytest.raises(OsmosisError) as refused:
            run(spec)
        assert refused.value.code == "PROVIDER_AUTH"
        assert not (tmp_path / "refused.json").exists()  # nothing kept
