"""The endpoint registry: loading and validation, resolution and overrides, header merge
order, replicas (round-robin spread, a replica dying mid-run), X-Session-ID, and the
Anthropic Messages client type — against loopback stubs."""

from __future__ import annotations

import asyncio
import json
import threading
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from osmosis_client.errors import ConfigError, InvalidInputError, MissingAPIKeyError
from osmosis_client.llm import anthropic
from osmosis_client.llm.client import SESSION_ID, ModelClient
from osmosis_client.llm.endpoints import load_registry, merge_headers, parse_header
from osmosis_client.llm.providers import resolve_target
from osmosis_client.rollout import AgentWorkflow, AgentWorkflowContext
from osmosis_local_runner.run.execute.runner import Runner
from tests.osmosis_local_runner.test_runner import make_spec
from tests.stub_openai import StubOpenAI


def registry_file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "endpoints.toml"
    path.write_text(text)
    return path


def test_rows_with_one_id_are_replicas(tmp_path: Path) -> None:
    registry = load_registry(
        registry_file(
            tmp_path,
            """
[[endpoint]]
endpoint_id = "qwen"
model = "Qwen/Qwen3-8B"
url = "http://gpu-1:8000/v1/"
key = "VLLM_KEY"
headers = { "X-Pool" = "a" }

[[endpoint]]
endpoint_id = "qwen"
model = "Qwen/Qwen3-8B"
url = "http://gpu-2:8000/v1"
key = "VLLM_KEY"

[[endpoint]]
endpoint_id = "claude"
model = "claude-sonnet-4-5"
url = "https://api.anthropic.com/v1"
key = "ANTHROPIC_API_KEY"
api_client_type = "anthropic_messages"
""",
        )
    )
    assert [e.url for e in registry.get("qwen")] == ["http://gpu-1:8000/v1", "http://gpu-2:8000/v1"]
    target = resolve_target("qwen", registry=registry, env={"VLLM_KEY": "k"})
    assert target.endpoint_id == "qwen" and target.model == "Qwen/Qwen3-8B"
    assert len(target.endpoints()) == 2 and target.endpoints()[0].headers == {"X-Pool": "a"}
    assert "2 replicas of qwen" in target.describe()
    # --base-url / --api-key-env override the rows
    override = resolve_target(
        "qwen", registry=registry, base_url="http://other/v1", api_key_env="MINE", env={"MINE": "m"}
    )
    (only,) = override.endpoints()
    assert only.base_url == "http://other/v1" and only.api_key is not None
    assert only.api_key.get_secret_value() == "m" and only.model == "Qwen/Qwen3-8B"
    # not in the registry: the literal model
    literal = resolve_target("mock/echo", registry=registry)
    assert literal.is_mock
    with pytest.raises(MissingAPIKeyError, match="VLLM_KEY"):
        resolve_target("qwen", registry=registry, env={})
    with pytest.raises(InvalidInputError, match="endpoint_id 'nope' is not in the endpoint"):
        resolve_target("x", registry=registry, endpoint_id="nope")


def test_registry_problems_are_all_reported_with_lines(tmp_path: Path) -> None:
    path = registry_file(
        tmp_path,
        """[[endpoint]]
endpoint_id = "a"
model = "m"
url = "ftp://x"
key = "sk-live-123456"

[[endpoint]]
endpoint_id = "b"
url = "http://x/v1"
api_client_type = "grpc"
headers = { "X" = "1" }
extra_headers = { "Y" = "2" }
colour = "blue"
""",
    )
    with pytest.raises(ConfigError) as caught:
        load_registry(path)
    problems = [str(p) for p in caught.value.problems]
    assert any(":1:" in p and "url: must be an http(s) URL" in p for p in problems)
    assert any("key: must be the NAME of an environment variable" in p for p in problems)
    assert any(":7:" in p and "model: is required" in p for p in problems)
    assert any("api_client_type: must be one of" in p for p in problems)
    assert any("set headers or extra_headers, not both" in p for p in problems)
    assert any("colour: unknown key" in p for p in problems)
    assert "sk-live" not in " ".join(problems)
    assert load_registry(tmp_path / "absent.toml").endpoints == {}
    with pytest.raises(InvalidInputError, match="does not exist"):
        load_registry(tmp_path / "absent.toml", required=True)


def test_header_parsing_and_merge_order() -> None:
    assert parse_header("X-Team:  rl ") == ("X-Team", "rl")
    for bad in ("no colon", "Bad Name: x", "X: a\r\nInjected: y"):
        with pytest.raises(InvalidInputError):
            parse_header(bad)
    merged = merge_headers(
        {"X-A": "row", "X-B": "row"},  # registry row
        {"x-a": "table"},  # headers table (names compare case-insensitively)
        {"X-B": "line"},  # header lines
        {"X-B": "flag"},  # --header
    )
    assert merged == {"x-a": "table", "X-B": "flag"}


class TwoCalls(AgentWorkflow):
    """Two model calls per attempt, to see the session id stay the same within one."""

    async def run(self, ctx: AgentWorkflowContext) -> None:
        await ctx.chat(ctx.prompt)
        await ctx.chat(ctx.prompt)


def test_replicas_share_the_load_and_one_dying_loses_no_attempt(tmp_path: Path) -> None:
    with StubOpenAI() as a, StubOpenAI() as b:
        path = registry_file(
            tmp_path,
            f"""
[[endpoint]]
endpoint_id = "pool"
model = "served"
url = "{a.url}"

[[endpoint]]
endpoint_id = "pool"
model = "served"
url = "{b.url}"
""",
        )
        registry = load_registry(path)
        spec = make_spec(tmp_path, TwoCalls(), data=_rows(tmp_path, 500), batch_size=16)
        spec.model = resolve_target("pool", registry=registry)
        result = asyncio.run(Runner(spec).run())
        assert result.summary["errored_runs"] == 0
        served = len(a.state.requests), len(b.state.requests)
        assert sum(served) == 1000  # 1,000 calls: the first wave checks the endpoint
        assert all(0.45 <= n / 1001 <= 0.55 for n in served), served
        # every attempt's two calls carried one session id of its own
        sessions = Counter(h.get("X-Session-ID") for h in [*a.state.headers, *b.state.headers])
        assert sessions.pop(None, 0) == 0  # every call belongs to an attempt
        assert len(sessions) == 500 and set(sessions.values()) == {2}

        a.state.requests.clear()
        b.state.requests.clear()
        runner_spec = make_spec(
            tmp_path / "second", TwoCalls(), data=_rows(tmp_path, 300), batch_size=8
        )
        runner_spec.model = resolve_target("pool", registry=registry)
        runner = Runner(runner_spec)

        def kill_b_at_100(progress: Any) -> None:
            if progress.done == 100:
                threading.Thread(target=b.__exit__, args=(None, None, None)).start()

        runner.on_progress = kill_b_at_100
        second = asyncio.run(runner.run())
    assert second.summary["errored_runs"] == 0 and second.summary["total_runs"] == 300
    assert len(a.state.requests) > len(b.state.requests)  # a took over


def _rows(tmp_path: Path, count: int) -> Path:
    path = tmp_path / f"rows-{count}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        "".join(
            json.dumps({"user_prompt": f"What is {i} + 1?", "ground_truth": str(i + 1)}) + "\n"
            for i in range(count)
        )
    )
    return path


def test_headers_reach_the_model_in_merge_order(tmp_path: Path) -> None:
    with StubOpenAI() as stub:
        path = registry_file(
            tmp_path,
            f"""
[[endpoint]]
endpoint_id = "m"
model = "served"
url = "{stub.url}"
headers = {{ "X-Row" = "row", "X-Override" = "row" }}
""",
        )
        target = resolve_target(
            "m",
            registry=load_registry(path),
            headers={"X-Override": "flag", "X-Session-ID": "fixed"},
        )

        async def call() -> None:
            async with ModelClient(target) as client:
                SESSION_ID.set("row3-run0")
                await client.complete([{"role": "user", "content": "What is 1 + 1?"}])

        asyncio.run(call())
        (headers,) = stub.state.headers
    assert headers["X-Row"] == "row" and headers["X-Override"] == "flag"
    assert headers["X-Session-ID"] == "fixed"  # given explicitly: not replaced


def test_anthropic_messages_endpoints_speak_chat_completions(tmp_path: Path) -> None:
    with StubOpenAI() as stub:
        path = registry_file(
            tmp_path,
            f"""
[[endpoint]]
endpoint_id = "claude"
model = "claude-sonnet-4-5"
url = "{stub.url}"
key = "ANTHROPIC_API_KEY"
api_client_type = "anthropic_messages"
""",
        )
        target = resolve_target(
            "claude", registry=load_registry(path), env={"ANTHROPIC_API_KEY": "sk-ant"}
        )

        async def call() -> dict[str, Any]:
            async with ModelClient(target) as client:
                return await client.complete(
                    [
                        {"role": "system", "content": "Answer with the number only."},
                        {"role": "user", "content": "What is 6 * 7?"},
                    ],
                    {"temperature": 0.0},
                )

        reply = asyncio.run(call())
        (body,) = stub.state.requests
        (headers,) = stub.state.headers
    assert reply["choices"][0]["message"] == {"role": "assistant", "content": "42"}
    assert reply["usage"] == {"prompt_tokens": 11, "completion_tokens": 2, "total_tokens": 13}
    assert body["system"] == "Answer with the number only."
    assert body["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "What is 6 * 7?"}]}
    ]
    assert body["max_tokens"] == anthropic.DEFAULT_MAX_TOKENS and body["temperature"] == 0.0
    assert headers["x-api-key"] == "sk-ant" and headers["anthropic-version"] == anthropic.VERSION
    assert "Authorization" not in headers


def test_anthropic_conversion_of_tools_and_tool_turns() -> None:
    body = anthropic.to_messages_request(
        {
            "model": "c",
            "messages": [
                {"role": "user", "content": "2+3?"},
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": "t1",
                            "type": "function",
                            "function": {"name": "add", "arguments": '{"a": 2, "b": 3}'},
                        }
                    ],
                },
                {"role": "tool", "tool_call_id": "t1", "content": "5"},
            ],
            "tools": [
                {"type": "function", "function": {"name": "add", "parameters": {"type": "object"}}}
            ],
            "tool_choice": "required",
            "stop": "END",
        }
    )
    assert body["messages"][1] == {
        "role": "assistant",
        "content": [{"type": "tool_use", "id": "t1", "name": "add", "input": {"a": 2, "b": 3}}],
    }
    assert body["messages"][2]["content"][0] == {
        "type": "tool_result",
        "tool_use_id": "t1",
        "content": "5",
    }
    assert body["tools"][0]["input_schema"] == {"type": "object"}
    assert body["tool_choice"] == {"type": "any"} and body["stop_sequences"] == ["END"]
    answer = anthropic.from_messages_response(
        {
            "content": [{"type": "tool_use", "id": "t2", "name": "add", "input": {"a": 1}}],
            "stop_reason": "tool_use",
            "usage": {"input_tokens": 3, "output_tokens": 4},
        },
        "c",
    )
    choice = answer["choices"][0]
    assert choice["finish_reason"] == "tool_calls" and choice["message"]["content"] is None
    assert json.loads(choice["message"]["tool_calls"][0]["function"]["arguments"]) == {"a": 1}


def test_a_header_value_with_a_line_break_is_refused_where_it_is_written(tmp_path: Path) -> None:
    """CR/LF in a header value used to load fine and then fail every attempt at run time."""
    path = registry_file(
        tmp_path,
        '[[endpoint]]\nendpoint_id = "a"\nmodel = "m"\nurl = "http://h:1/v1"\n'
        '[[endpoint]]\nendpoint_id = "b"\nmodel = "m"\nurl = "http://h:1/v1"\n'
        'headers = { "X-Team" = "rl\\r\\nX-Injected: 1", "X-Ok" = "fine" }\n'
        '[[endpoint]]\nendpoint_id = "c"\nmodel = "m"\nurl = "http://h:1/v1"\n'
        '[endpoint.headers]\n"X-Tab" = "a\\tb"\n"X-Null" = "a\\u0000b"\n',
    )
    with pytest.raises(ConfigError) as caught:
        load_registry(path)
    problems = caught.value.problems
    assert [(p.key, p.line) for p in problems] == [
        ("endpoint[1].headers.X-Team", 9),
        ("endpoint[2].headers.X-Null", 16),
    ]
    assert all(p.column is not None for p in problems)
    assert "line break or another control character" in problems[0].message


def test_header_lines_with_control_characters_are_refused() -> None:
    for line in ("X-A: b\rc", "X-A: b\x00", "X-A: b\nX-B: c"):
        with pytest.raises(InvalidInputError):
            parse_header(line)
    assert parse_header("X-A: b\tc") == ("X-A", "b\tc")
