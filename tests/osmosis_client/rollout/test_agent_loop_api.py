"""The 0.2 agent-loop API: names, schemas, tool helpers, the context, validation."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from osmosis_client.rollout import (
    CompletionsResult,
    OpenAIFunctionParametersSchema,
    OpenAIFunctionPropertySchema,
    OpenAIFunctionSchema,
    OpenAIFunctionToolSchema,
    RolloutAgentLoop,
    RolloutContext,
    RolloutRequest,
    RolloutResult,
    RolloutStatus,
    ToolArgumentError,
    ToolExecutionError,
    create_app,
    create_tool_error_result,
    create_tool_result,
    execute_tool_calls,
    get_tool_call_info,
    parse_tool_arguments,
    serialize_tool_result,
)
from osmosis_client.rollout.agent_loop.schemas import tool_to_dict
from osmosis_client.rollout.agent_loop.validate import validate_agent_loop


def request(**kw: Any) -> RolloutRequest:
    return RolloutRequest.model_validate(
        {"rollout_id": "r", "server_url": "http://t", "messages": [], **kw}
    )


def test_request_defaults_and_unknown_fields() -> None:
    r = request(unknown="ignored", api_key="secret")
    assert (r.max_turns, r.max_tokens_total, r.completion_params, r.metadata) == (10, 8192, {}, {})
    assert "secret" not in repr(r)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("rollout_id", ""),
        ("rollout_id", "   "),
        ("rollout_id", "x" * 257),
        ("server_url", "ftp://host"),
        ("server_url", "http://"),
        ("metadata", {"blob": "x" * (1 << 20)}),
    ],
)
def test_request_validation(field: str, value: Any) -> None:
    with pytest.raises(ValidationError):
        request(**{field: value})


def test_tool_schemas_drop_null_fields_and_dicts_pass_through() -> None:
    tool = OpenAIFunctionToolSchema(
        type="function",
        function=OpenAIFunctionSchema(
            name="add",
            description="Add.",
            parameters=OpenAIFunctionParametersSchema(
                type="object",
                properties={"a": OpenAIFunctionPropertySchema(type="number")},
                required=["a"],
            ),
        ),
    )
    sent = tool_to_dict(tool)
    assert sent == {
        "type": "function",
        "function": {
            "name": "add",
            "description": "Add.",
            "parameters": {
                "type": "object",
                "properties": {"a": {"type": "number"}},
                "required": ["a"],
            },
            "strict": False,
        },
    }
    nested = {
        "type": "function",
        "function": {
            "name": "n",
            "parameters": {
                "type": "object",
                "properties": {"xs": {"type": "array", "items": {"type": "object"}}},
            },
        },
    }
    assert tool_to_dict(nested) is nested
    with pytest.raises(TypeError):
        tool_to_dict(["not a tool"])


def test_tool_helpers() -> None:
    assert create_tool_result("c1", {"x": 1}) == {
        "role": "tool",
        "content": '{"x": 1}',
        "tool_call_id": "c1",
    }
    assert create_tool_error_result("c2", "boom")["content"] == "Error: boom"
    assert serialize_tool_result("plain") == "plain"
    assert parse_tool_arguments('{"a": 1}') == {"a": 1}
    assert parse_tool_arguments({"a": 2}) == {"a": 2}
    assert parse_tool_arguments("") == {}
    with pytest.raises(ToolArgumentError):
        parse_tool_arguments("[1, 2]")
    with pytest.raises(ToolArgumentError):
        parse_tool_arguments("{nope")
    call = {"id": "c3", "function": {"name": "add", "arguments": '{"a": 1, "b": 2}'}}
    assert get_tool_call_info(call) == ("c3", "add", {"a": 1, "b": 2})
    assert get_tool_call_info({"function": {"name": "x"}})[0] == "unknown"
    with pytest.raises(ToolArgumentError) as info:
        get_tool_call_info({"id": "c4", "function": {"name": "x", "arguments": "bad"}})
    assert (info.value.tool_call_id, info.value.tool_name) == ("c4", "x")
    assert isinstance(info.value, ToolExecutionError)

    async def executor(c: dict[str, Any]) -> int:
        await asyncio.sleep(0.01 * (3 - c["n"]))  # later calls finish first
        return int(c["n"])

    results = asyncio.run(execute_tool_calls([{"n": 1}, {"n": 2}, {"n": 3}], executor))
    assert results == [1, 2, 3]


def test_a_concrete_loop_without_a_name_fails_at_class_creation() -> None:
    with pytest.raises(TypeError, match="non-empty class attribute `name`"):

        class Nameless(RolloutAgentLoop):
            def get_tools(self, request: RolloutRequest) -> list[Any]:
                return []

            async def run(self, ctx: RolloutContext) -> RolloutResult:
                return ctx.complete([])

    class Abstract(RolloutAgentLoop):  # still abstract: no name needed yet
        pass


class EchoLLM:
    def __init__(self) -> None:
        self.calls: list[tuple[list[dict[str, Any]], dict[str, Any]]] = []

    async def chat_completions(
        self, messages: list[dict[str, Any]], **params: Any
    ) -> CompletionsResult:
        self.calls.append((messages, params))
        return CompletionsResult(
            message={"role": "assistant", "content": "hi", "tool_calls": [{"id": "t"}]},
            usage={"prompt_tokens": 5, "completion_tokens": 2},
        )


def test_context_chat_metrics_results_and_debug_events(tmp_path: Path) -> None:
    llm = EchoLLM()
    ctx = RolloutContext(request(), [], llm, debug_dir=tmp_path / "debug")
    result = asyncio.run(ctx.chat([{"role": "user", "content": "x"}], temperature=0.5))
    assert llm.calls == [([{"role": "user", "content": "x"}], {"temperature": 0.5})]
    assert result.has_tool_calls and result.content == "hi" and result.tool_calls == [{"id": "t"}]
    ctx.record_tool_call(latency_ms=3.5)
    ctx.log_event("turn", n=1)
    done = ctx.complete([{"role": "assistant", "content": "hi"}], reward=0.5)
    assert done.status is RolloutStatus.COMPLETED and done.finish_reason == "stop"
    m = done.metrics
    assert (m.num_llm_calls, m.num_tool_calls, m.prompt_tokens, m.response_tokens) == (1, 1, 5, 2)
    assert m.tool_latency_ms == 3.5 and m.max_context_tokens == 7 and done.reward == 0.5
    failed = ctx.error("nope")
    assert failed.status is RolloutStatus.ERROR and failed.finish_reason == "error"
    assert failed.final_messages == [] and failed.error_message == "nope"
    lines = (tmp_path / "debug" / "r.jsonl").read_text().splitlines()
    assert json.loads(lines[0]) == {"event": "turn", "rollout_id": "r", "n": 1}
    quiet = RolloutContext(request(), [], llm)
    quiet.log_event("ignored")
    assert not quiet.debug_enabled


def test_create_app_is_cheap_and_starts_nothing() -> None:
    class Loop(RolloutAgentLoop):
        name = "loop"
        made = 0

        def __init__(self) -> None:
            Loop.made += 1

        def get_tools(self, request: RolloutRequest) -> list[Any]:
            return []

        async def run(self, ctx: RolloutContext) -> RolloutResult:
            return ctx.complete([])

    app = create_app(Loop, max_concurrent_rollouts=7)
    assert Loop.made == 1 and app.max_concurrent_rollouts == 7
    assert isinstance(app.agent_loop, Loop)


def test_validation_report() -> None:
    class Good(RolloutAgentLoop):
        name = "good"

        def get_tools(self, request: RolloutRequest) -> list[Any]:
            assert request.rollout_id == "validation-test-rollout"
            assert request.metadata == {"_validation": True}
            return [
                {
                    "type": "function",
                    "function": {"name": "a", "description": "d", "parameters": {"type": "object"}},
                },
                {"type": "function", "function": {"name": "b", "parameters": {"type": "array"}}},
            ]

        async def run(self, ctx: RolloutContext) -> RolloutResult:
            raise AssertionError("never run")

    report = validate_agent_loop(Good())
    assert report.ok and report.tools == ["a", "b"]
    assert any("tool b: no description" in w for w in report.warnings)
    assert any('"type": "object"' in w for w in report.warnings)
