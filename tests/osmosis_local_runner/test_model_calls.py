"""Transcript depth (issue 36): every model call of an attempt kept with its timing —
messages sent, parameters and the raw answer as JSON text — and shown by the report's
data; never with --no-transcripts; never breaking a results line's layout."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from osmosis_client.rollout import AgentWorkflow, AgentWorkflowContext
from osmosis_local_runner.results import rowlines
from osmosis_local_runner.results.documents import ResultsFile
from osmosis_local_runner.results.report_data import build_data
from osmosis_local_runner.results.sources import sources_of
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


def test_a_conversation_not_kept_in_the_transcript_is_kept_with_its_call(tmp_path: Path) -> None:
    doc = run(make_spec(tmp_path, Rewrites(), limit=1))
    (first, second), = _calls(doc)
    request = json.loads(first["request"])
    assert request["messages"] == [{"role": "user", "content": "warm-up, forgotten later"}]
    assert "request" not in second


def test_no_transcripts_keeps_no_calls(tmp_path: Path) -> None:
    doc = run(make_spec(tmp_path, TwoTurns(), limit=2, transcripts=False))
    assert _calls(doc) == [None, None]


def test_an_answer_holding_our_layout_markers_never_breaks_a_line(
    tmp_path: Path, monkeypatch: Any
) -> None:
    class Echo(AgentWorkflow):
        async def run(self, ctx: AgentWorkflowContext) -> None:
            await ctx.chat([*ctx.prompt], note=',"messages":[{"x": 1}]}]} ')

    spec = make_spec(tmp_path, Echo(), limit=3)
    run(spec)
    monkeypatch.setattr(rowlines, "fast_decoder", None)  # the cut-out path of the stdlib
    doc = ResultsFile(spec.output)
    rows = list(doc.checked_rows(transcripts=False))
    assert len(rows) == 3 and all(run["scores"] for _, _, runs, _ in rows for run in runs)


def test_the_report_shows_each_attempts_calls(tmp_path: Path) -> None:
    spec = make_spec(tmp_path, TwoTurns(), limit=1)
    run(spec)
    data = build_data(sources_of([spec.output]))
    attempt = data["rows"][0]["cells"][0]["attempts"][0]
    assert [c["sent"] for c in attempt["calls"]] == [1, 3]
    assert json.loads(attempt["calls"][0]["response"])["choices"]
