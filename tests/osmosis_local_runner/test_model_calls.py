"""Transcript depth (issue 36): every model call of an attempt kept with its timing —
messages sent, parameters and the raw answer as JSON text — and shown by the report's
data; never with --no-transcripts; never breaking a results line's layout."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from osmosis_client.rollout import AgentWorkflow, AgentWorkflowContext
from osmosis_local_runner.results.documents.documents import ResultsFile
from osmosis_local_runner.results.documents.sources import sources_of
from osmosis_local_runner.results.reports.report_data import build_data
from tests.conftest import QUICKSTART
from tests.osmosis_local_runner.test_runner import make_spec, run


class TwoTurns(AgentWorkflow):
    async def run(self, ctx: AgentWorkflowContext) -> None:
        first = await ctx.chat(ctx.prompt)
        follow = [*ctx.prompt, first, {"role": "user", "content": "Sure?"}]
        await ctx.chat(follow, temperature=0.25)


class Rewrites(AgentWorkflow):
    """Its first call sends a conversation the final one does not start with."""

    async def run(self, ctx: AgentWorkflowContext) -> None:
        await ctx.chat([{"role": "user", "content": "warm-up, forgotten later"}])
        await ctx.chat(ctx.prompt)


def _calls(doc: dict[str, Any]) -> list[list[dict[str, Any]]]:
    return [r.get("model_calls") for row in doc["rows"] for r in row["runs"]]


def test_each_call_is_kept_with_its_timing_and_raw_answer(tmp_path: Path) -> None:
    doc = run(make_spec(tmp_path, TwoTurns(), limit=2))
    for calls, row in zip(_calls(doc), doc["rows"], strict=True):
        first, second = calls
        assert (first["sent"], second["sent"]) == (1, 3)  # the transcript's first messages
        assert "request" not in first and json.loads(second["request"]) == {"temperature": 0.25}
        assert 0 <= first["at_ms"] <= second["at_ms"] and first["duration_ms"] >= 0
        answer = json.loads(first["response"])  # the raw chat-completions body
        assert answer["choices"][0]["message"] == row["runs"][0]["messages"][1]
        assert second["at_ms"] + second["duration_ms"] <= row["runs"][0]["duration_ms"]
        # the grading, after the last call, within the attempt (its timeline shows it)
        grading = row["runs"][0]["grading"]
        assert second["at_ms"] + second["duration_ms"] <= grading["at_ms"]
        assert grading["at_ms"] + grading["duration_ms"] <= row["runs"][0]["duration_ms"]


def test_a_conversation_not_kept_in_the_transcript_is_kept_with_its_call(tmp_path: Path) -> None:
    doc = run(make_spec(tmp_path, Rewrites(), limit=1))
    ((first, second),) = _calls(doc)
    request = json.loads(first["request"])
    assert request["messages"] == [{"role": "user", "content": "warm-up, forgotten later"}]
    assert "request" not in second


def test_no_transcripts_keeps_no_calls(tmp_path: Path) -> None:
    doc = run(make_spec(tmp_path, TwoTurns(), limit=2, transcripts=False))
    assert _calls(doc) == [None, None]


def test_an_answer_holding_our_layout_markers_never_breaks_a_line(tmp_path: Path) -> None:
    class Echo(AgentWorkflow):
        async def run(self, ctx: AgentWorkflowContext) -> None:
            await ctx.chat([*ctx.prompt], note=',"messages":[{"x": 1}]}]} ')

    spec = make_spec(tmp_path, Echo(), limit=3)
    run(spec)
    doc = ResultsFile(spec.output)
    rows = list(doc.checked_rows(transcripts=False))
    assert len(rows) == 3 and all(run["scores"] for _, _, runs, _ in rows for run in runs)


def test_the_report_shows_each_attempts_calls(tmp_path: Path) -> None:
    spec = make_spec(tmp_path, TwoTurns(), limit=1)
    run(spec)
    data = build_data(sources_of([spec.output]))
    attempt = data["rows"][0]["cells"][0]["attempts"][0]
    assert [c["sent"] for c in attempt["calls"]] == [1, 3]
    assert attempt["grading"]["duration_ms"] >= 0
    assert json.loads(attempt["calls"][0]["response"])["choices"]


# ------------------------------------------------------------ a grader's explanation


def test_a_score_with_its_explanation_is_kept_and_shown(tmp_path: Path) -> None:
    from osmosis_client.rewards.rubric import RubricResult
    from osmosis_local_runner.run.execute.eval_fns import EvalFn

    async def judged(ctx: Any) -> dict[str, Any]:
        return {"score": 0.5, "explanation": "right number, no working shown"}

    def rubric(solution_str: str, ground_truth: str, extra_info: Any = None) -> RubricResult:
        return RubricResult(1.0, "matches", raw={}, model="judge", attempts=1)

    fns = [EvalFn("grader", judged, "grader", True), EvalFn("rubric", rubric, "simple", False)]
    spec = make_spec(tmp_path, TwoTurns(), limit=1, eval_fns=fns)
    doc = run(spec)
    attempt = doc["rows"][0]["runs"][0]
    assert attempt["scores"] == {"grader": 0.5, "rubric": 1.0}
    assert attempt["explanations"] == {
        "grader": "right number, no working shown",
        "rubric": "matches",
    }
    data = build_data(sources_of([spec.output]))
    shown = data["rows"][0]["cells"][0]["attempts"][0]["explanations"]
    assert shown["rubric"] == "matches"


def test_a_score_that_is_not_a_number_still_fails_the_grader(tmp_path: Path) -> None:
    from osmosis_local_runner.run.execute.eval_fns import EvalFn

    async def broken(ctx: Any) -> dict[str, Any]:
        return {"score": "high", "explanation": "?"}

    doc = run(
        make_spec(
            tmp_path, TwoTurns(), limit=1, eval_fns=[EvalFn("grader", broken, "grader", True)]
        )
    )
    attempt = doc["rows"][0]["runs"][0]
    assert attempt["success"] is False and "score must be a number" in attempt["error"]
    assert "explanations" not in attempt


def test_rescoring_keeps_the_new_explanations_only(tmp_path: Path, monkeypatch: Any) -> None:
    from osmosis_local_runner.run.execute.eval_fns import EvalFn
    from osmosis_local_runner.run.regrade.rescore import rescore

    async def judged(ctx: Any) -> dict[str, Any]:
        return {"score": 0.5, "explanation": "the first judge"}

    spec = make_spec(
        tmp_path, TwoTurns(), limit=2, eval_fns=[EvalFn("grader", judged, "grader", True)]
    )
    run(spec)
    (tmp_path / "plain.py").write_text(
        "def exact(solution_str, ground_truth, extra_info=None):\n    return 1.0\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    result = rescore(spec.output, ["plain:exact"], tmp_path / "again.json")
    runs = [r for row in result.document["rows"] for r in row["runs"]]
    assert all("explanations" not in r and r["scores"] == {"plain:exact": 1.0} for r in runs)
    assert all(r.get("model_calls") for r in runs)  # the rest of the run is kept


def test_an_attempts_env_is_the_runs_with_its_calls_recorded() -> None:
    import dataclasses

    from osmosis_local_runner.run.execute.calls import CallLog
    from osmosis_local_runner.run.kinds import RunEnv

    async def chat(messages: Any, params: Any) -> Any:
        raise AssertionError("not called")

    run_env = RunEnv(
        chat=chat,
        complete=chat,
        model="m",
        base_url="http://x",
        api_key="k",
        sampling={"temperature": 0.1},
        workflow_config={},
        agent_timeout=3.0,
    )
    log = CallLog(run_env, 0.0)
    mine = log.env()
    fields = [f.name for f in dataclasses.fields(RunEnv) if f.name not in ("chat", "complete")]
    assert all(getattr(mine, f) == getattr(run_env, f) for f in fields)
    assert mine.chat == log.chat and mine.complete == log.complete
    assert run_env.chat is chat  # the run's own env is untouched


def test_a_calls_retries_are_kept_with_why_each_try_failed(tmp_path: Path) -> None:
    """Issue 46: "1 model call · 7.507s" hid three tries. A call's failed tries are kept
    (``retries``: why each failed) and the report says how many there were."""
    from osmosis_local_runner.api import run_eval
    from tests.stub_openai import StubOpenAI

    data = tmp_path / "rows.jsonl"
    data.write_text('{"user_prompt": "What is 1 + 1?", "ground_truth": "2"}\n')
    config = tmp_path / "configs" / "eval" / "e.toml"
    config.parent.mkdir(parents=True)
    shutil.copytree(QUICKSTART / "rollouts", tmp_path / "rollouts")
    config.write_text((QUICKSTART / "configs" / "eval" / "quickstart.toml").read_text())
    with StubOpenAI() as stub:
        # the first try fails, the second answers (a run's first calls retry once: they
        # check the endpoint before the run trusts it)
        stub.fail_next(503, count=1, retry_after="0")
        run_eval(
            config, model="m", base_url=stub.url, dataset=data, n=1, output=tmp_path / "out.json"
        )
    doc = json.loads((tmp_path / "out.json").read_text())
    (calls,) = _calls(doc)
    assert calls[0]["retries"] == ["HTTP 503"]
    assert doc["summary"]["total_runs"] == 1 and doc["summary"]["errored_runs"] == 0
    page = build_data(sources_of([tmp_path / "out.json"]))
    kept = page["rows"][0]["cells"][0]["attempts"][0]["calls"][0]
    assert kept["retries"] == ["HTTP 503"]  # what the page shows as "2 tries"
