"""Reasoning models, each on its own wire, against a loopback peer built from the
documented shapes (tests/reasoning_peer.py): the answer kept apart from the reasoning,
the reasoning given back in a tool loop as each provider requires — also when the
rollout rebuilds its messages from the text alone (``Replay``) — tokens by kind, finish
reasons, streaming and not."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from osmosis_client.errors import InvalidInputError, ProviderRequestError
from osmosis_client.llm.client import ModelClient
from osmosis_client.llm.providers import ModelTarget, resolve_target
from osmosis_client.llm.reasoning import Replay, reasoning_text
from osmosis_client.llm.usage import call_usage
from tests.reasoning_peer import ReasoningPeer

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": name,
            "description": f"{name} a and b",
            "parameters": {
                "type": "object",
                "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
            },
        },
    }
    for name in ("add", "subtract", "multiply", "divide")
]
OPS = {
    "add": float.__add__,
    "subtract": float.__sub__,
    "multiply": float.__mul__,
    "divide": float.__truediv__,
}
#: (wire, the peer's flavor)
SHAPES = [
    ("openai_responses", "openai"),
    ("openai_responses", "vllm"),
    ("anthropic_messages", "anthropic"),
    ("openai_chat_completions", "vllm"),
    ("openai_chat_completions", "sglang"),
    ("openai_chat_completions", "deepseek"),
    ("openai_chat_completions", "openrouter"),
    ("openai_chat_completions", "openai"),
    ("openai_chat_completions", "raw"),
    ("openai_chat_completions", "raw-open"),
]
#: shapes whose peer refuses a tool continuation without the reasoning it was answered with
STRICT = {
    ("openai_responses", "openai"),
    ("anthropic_messages", "anthropic"),
    ("openai_chat_completions", "deepseek"),
    ("openai_chat_completions", "openrouter"),
}


@pytest.fixture
def peer(request: pytest.FixtureRequest) -> Iterator[ReasoningPeer]:
    with ReasoningPeer(getattr(request, "param", "openai")) as found:
        yield found


def target(peer: ReasoningPeer, wire: str, provider: str | None = None) -> ModelTarget:
    return ModelTarget(
        "peer/reasoner", "reasoner", provider, peer.url, None, None, api_client_type=wire
    )


def params(wire: str, **more: Any) -> dict[str, Any]:
    found: dict[str, Any] = {"tools": TOOLS, **more}
    if wire != "openai_chat_completions":
        # thinking on (Anthropic), a summary asked for (the Responses API)
        found.setdefault("reasoning_effort", "high")
    return found


async def tool_loop(
    client: ModelClient,
    question: str,
    extra: dict[str, Any],
    *,
    rebuild: bool = False,
    replay: Replay | None = None,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """A rollout: asks, runs the tool it is asked to, asks again. ``rebuild``: it keeps
    only the text and the calls of each answer (as many agent frameworks do)."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": question}]
    answers = []
    for _ in range(4):
        sent = replay.restore(messages) if replay is not None else messages
        answer = await client.complete(list(sent), extra)
        answers.append(answer)
        message = answer["choices"][0]["message"]
        if replay is not None:
            replay.remember(message)
        kept = message
        if rebuild:
            kept = {"role": "assistant", "content": message.get("content")}
            if message.get("tool_calls"):
                kept["tool_calls"] = message["tool_calls"]
        messages.append(kept)
        calls = message.get("tool_calls") or []
        if not calls:
            break
        for call in calls:
            args = json.loads(call["function"]["arguments"])
            result = OPS[call["function"]["name"]](float(args["a"]), float(args["b"]))
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": f"{result:g}"})
    return messages, answers


def run(coro: Any) -> Any:
    return asyncio.run(coro)


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
@pytest.mark.parametrize(("wire", "flavor"), SHAPES, ids=[f"{w}-{f}" for w, f in SHAPES])
def test_a_tool_loop_keeps_reasoning_apart_and_gives_it_back(
    wire: str, flavor: str, stream: bool
) -> None:
    with ReasoningPeer(flavor) as peer:

        async def go() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
            async with ModelClient(target(peer, wire)) as client:
                return await tool_loop(client, "What is 6 * 7?", params(wire, stream=stream))

        messages, answers = run(go())
    assert peer.refused == []
    assert messages[-1]["content"] == "The answer is 42."  # the answer alone
    first = answers[0]["choices"][0]
    assert first["finish_reason"] == "tool_calls"
    assert first["message"]["tool_calls"][0]["function"]["name"] == "multiply"
    thought = reasoning_text(first["message"])
    if flavor == "openai" and wire == "openai_chat_completions":
        assert thought is None  # OpenAI's chat API gives no reasoning text
    else:
        assert thought == "I should use the multiply tool on 6 and 7."
        assert reasoning_text(answers[-1]["choices"][0]["message"]) == "The tool returned 42."
    usage = call_usage(answers[-1])
    assert usage.input_tokens > 0 and usage.output_tokens > 0 and usage.calls == 1
    if flavor not in ("vllm", "sglang", "raw", "raw-open"):  # those report no breakdown
        assert usage.reasoning_tokens > 0
    if wire != "openai_chat_completions" or flavor in ("openai", "deepseek"):
        assert usage.cache_read_tokens > 0  # the second turn hit the cache
    if (wire, flavor) in STRICT:
        second = peer.requests[1][1]
        assert json.dumps(second).count("I should use the multiply tool") >= 1  # given back


@pytest.mark.parametrize(("wire", "flavor"), sorted(STRICT))
def test_a_rollout_that_rebuilds_its_messages_gets_its_reasoning_back_from_replay(
    wire: str, flavor: str
) -> None:
    with ReasoningPeer(flavor) as peer:

        async def go(replay: Replay | None) -> Any:
            async with ModelClient(target(peer, wire)) as client:
                return await tool_loop(
                    client, "What is 6 * 7?", params(wire), rebuild=True, replay=replay
                )

        messages, _ = run(go(Replay()))
        assert messages[-1]["content"] == "The answer is 42." and peer.refused == []
        # the control: without it, the provider refuses the continuation
        with pytest.raises(ProviderRequestError) as refused:
            run(go(None))
    assert refused.value.status_code == 400 and len(peer.refused) == 1


def test_anthropic_thinking_blocks_come_back_unchanged_redacted_ones_too() -> None:
    with ReasoningPeer("anthropic") as peer:

        async def go() -> Any:
            async with ModelClient(target(peer, "anthropic_messages")) as client:
                return await tool_loop(
                    client, "What is 6 * 7? (redact)", params("anthropic_messages")
                )

        messages, answers = run(go())
    assert peer.refused == [] and messages[-1]["content"] == "The answer is 42."
    blocks = answers[0]["choices"][0]["message"]["thinking_blocks"]
    assert [b["type"] for b in blocks] == ["thinking", "redacted_thinking"]
    body = peer.bodies("/messages")[1]
    assert body["messages"][1]["content"][:2] == blocks  # first in the turn, as received
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 4096}
    assert body["max_tokens"] == 4096 + 4096  # room for the answer beside the budget


def test_responses_requests_are_stateless_and_keep_chat_semantics() -> None:
    with ReasoningPeer("openai") as peer:

        async def go() -> Any:
            official = target(peer, "openai_responses")
            async with ModelClient(official) as client:
                return await tool_loop(
                    client,
                    "What is 6 * 7?",
                    params(
                        "openai_responses",
                        max_tokens=500,
                        seed=3,
                        stop=["x"],
                        reasoning_effort="low",
                        tool_choice={"type": "function", "function": {"name": "multiply"}},
                    ),
                )

        run(go())
    first, second = peer.bodies("/responses")[:2]
    assert first["store"] is False and first["include"] == ["reasoning.encrypted_content"]
    assert first["max_output_tokens"] == 500 and first["reasoning"]["effort"] == "low"
    assert "seed" not in first and "stop" not in first and "max_tokens" not in first
    assert first["tools"][0]["strict"] is False and "function" not in first["tools"][0]
    assert first["tool_choice"] == {"type": "function", "name": "multiply"}
    kinds = [item.get("type", "message") for item in second["input"]]
    assert kinds == ["message", "reasoning", "function_call", "function_call_output"]
    assert second["input"][1]["encrypted_content"].startswith("enc:")


@pytest.mark.parametrize(
    "wire", ["openai_responses", "anthropic_messages", "openai_chat_completions"]
)
@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_a_cut_answer_is_length_not_an_error(wire: str, stream: bool) -> None:
    flavor = {"anthropic_messages": "anthropic"}.get(wire, "openai")
    with ReasoningPeer(flavor) as peer:

        async def go() -> Any:
            async with ModelClient(target(peer, wire)) as client:
                extra = {"max_tokens": 8, "stream": stream}
                return await client.complete([{"role": "user", "content": "What is 2 + 2?"}], extra)

        answer = run(go())
    choice = answer["choices"][0]
    assert choice["finish_reason"] == "length"
    assert not choice["message"].get("content")
    assert call_usage(answer).truncated == 1


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_responses_refusal_filter_and_failure_are_each_mapped(stream: bool) -> None:
    with ReasoningPeer("openai") as peer:

        async def ask(question: str) -> Any:
            async with ModelClient(target(peer, "openai_responses")) as client:
                return await client.complete(
                    [{"role": "user", "content": question}], {"stream": stream}
                )

        refused = run(ask("What is 2 + 2? forbidden"))["choices"][0]
        filtered = run(ask("What is 2 + 2? filtered"))["choices"][0]
        with pytest.raises(ProviderRequestError) as failed:
            run(ask("What is 2 + 2? explode"))
    assert refused["message"]["refusal"] == "I can't help with that."
    assert refused["message"]["content"] is None
    assert filtered["finish_reason"] == "content_filter"
    assert (
        failed.value.code == "PROVIDER_RESPONSE_FAILED" and "server_error" in failed.value.message
    )


def test_anthropic_refusal_keeps_its_own_stop_reason() -> None:
    with ReasoningPeer("anthropic") as peer:

        async def go() -> Any:
            async with ModelClient(target(peer, "anthropic_messages")) as client:
                return await client.complete(
                    [{"role": "user", "content": "What is 1 + 1? forbidden"}]
                )

        choice = run(go())["choices"][0]
    assert (
        choice["finish_reason"] == "content_filter" and choice["native_finish_reason"] == "refusal"
    )
    assert choice["message"]["refusal"] == "I can't help with that."


def test_effort_maps_per_provider() -> None:
    with ReasoningPeer("vllm") as peer:

        async def ask(provider: str | None, effort: str) -> None:
            async with ModelClient(target(peer, "openai_chat_completions", provider)) as client:
                await client.complete(
                    [{"role": "user", "content": "What is 1 + 1?"}], {"reasoning_effort": effort}
                )

        for provider, effort in [
            (None, "none"),
            (None, "high"),
            (None, "xhigh"),
            ("openrouter", "high"),
            ("openrouter", "none"),
            ("deepseek", "none"),
            ("openai", "minimal"),
        ]:
            run(ask(provider, effort))
        bodies = peer.bodies("/chat/completions")
    own_off, own_high, own_xhigh, router, router_off, deep_off, openai = bodies
    assert own_off["chat_template_kwargs"] == {"enable_thinking": False}
    assert "reasoning_effort" not in own_off  # vLLM's request model takes low/medium/high
    assert own_high["chat_template_kwargs"] == {"enable_thinking": True}
    assert own_high["reasoning_effort"] == "high" and "reasoning_effort" not in own_xhigh
    assert router["reasoning"] == {"effort": "high"} and "reasoning_effort" not in router
    assert router_off["reasoning"] == {"enabled": False}
    assert deep_off["thinking"] == {"type": "disabled"} and "reasoning_effort" not in deep_off
    assert openai["reasoning_effort"] == "minimal"


def test_anthropic_effort_is_a_budget_or_adaptive_and_refused_without_room() -> None:
    from osmosis_client.llm.anthropic import thinking_for

    assert thinking_for("claude-sonnet-4-5", "medium", None) == {
        "thinking": {"type": "enabled", "budget_tokens": 2048},
        "max_tokens": 2048 + 4096,
    }
    assert thinking_for("claude-opus-4-7", "minimal", 9000) == {
        "thinking": {"type": "adaptive"},
        "output_config": {"effort": "low"},
    }
    assert thinking_for("claude-sonnet-4-5", "none", None) == {}
    with pytest.raises(InvalidInputError, match="no room"):
        thinking_for("claude-sonnet-4-5", "high", 1000)


def test_thinking_a_server_writes_inside_the_text_is_moved_beside_it_unless_told_not_to() -> None:
    with ReasoningPeer("raw") as peer:

        async def ask(split: bool) -> dict[str, Any]:
            spec = ModelTarget("peer/raw", "raw", None, peer.url, None, None, think_tags=split)
            async with ModelClient(spec) as client:
                answer = await client.complete([{"role": "user", "content": "What is 3 + 4?"}])
            message: dict[str, Any] = answer["choices"][0]["message"]
            return message

        split, kept = run(ask(True)), run(ask(False))
    assert split["content"] == "The answer is 7." and split["reasoning_content"] == "3 + 4 is 7."
    assert kept["content"].startswith("<think>") and "reasoning_content" not in kept


def test_our_own_fields_never_reach_a_chat_server_and_reasoning_only_on_tool_turns() -> None:
    anthropic_turn = {
        "role": "assistant",
        "content": "Hi.",
        "reasoning_content": "hm",
        "thinking_blocks": [{"type": "thinking", "thinking": "hm", "signature": "s"}],
    }
    with ReasoningPeer("openai") as peer:  # refuses unknown message fields, as OpenAI does

        async def go() -> Any:
            async with ModelClient(target(peer, "openai_chat_completions")) as client:
                return await client.complete(
                    [
                        {"role": "user", "content": "Hi"},
                        anthropic_turn,
                        {"role": "user", "content": "What is 1 + 2?"},
                    ]
                )

        run(go())
    assert peer.refused == []
    sent = peer.bodies("/chat/completions")[0]["messages"][1]
    assert sent == {"role": "assistant", "content": "Hi."}


def test_official_openai_models_take_the_responses_api_as_the_published_cli_does() -> None:
    env = {"OPENAI_API_KEY": "sk-x", "ANTHROPIC_API_KEY": "sk-a"}
    assert resolve_target("openai/gpt-5-mini", env=env).api_client_type == "openai_responses"
    proxied = resolve_target("openai/gpt-5-mini", env={**env, "OPENAI_BASE_URL": "http://p/v1"})
    assert proxied.api_client_type == "openai_chat_completions"
    assert resolve_target("anthropic/claude-x", env=env).api_client_type == "anthropic_messages"
    assert resolve_target("m", base_url="http://h/v1").api_client_type == "openai_chat_completions"


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
@pytest.mark.parametrize(
    ("wire", "flavor"),
    [
        ("openai_responses", "openai"),
        ("anthropic_messages", "anthropic"),
        ("openai_chat_completions", "openrouter"),
    ],
)
def test_a_tool_loop_over_a_real_wire_keeps_and_gives_back_reasoning(
    tmp_path: Path, wire: str, flavor: str, stream: bool
) -> None:
    """In 97-byte pieces, chunked, gzipped, over TLS with a private CA (tests/realwire.py
    in front of the peer): streams cut mid-event still assemble, signatures intact."""
    from tests.realwire import Proxy, Wire, private_ca

    server_tls, pem = private_ca(tmp_path)
    with ReasoningPeer(flavor) as peer:
        cut = Wire(piece=97, delay=0.0005, chunked=True, encoding="gzip")
        with Proxy(peer.url, cut, tls=server_tls) as proxy:
            remote = ModelTarget(
                "peer/reasoner", "reasoner", None, proxy.url, None, None, api_client_type=wire
            )

            async def go() -> Any:
                async with ModelClient(remote, ca_bundle=pem) as client:
                    return await tool_loop(
                        client,
                        "What is 6 * 7?",
                        params(wire, stream=stream),
                        rebuild=True,
                        replay=Replay(),
                    )

            messages, answers = run(go())
    assert peer.refused == [] and messages[-1]["content"] == "The answer is 42."
    assert reasoning_text(answers[0]["choices"][0]["message"]) == (
        "I should use the multiply tool on 6 and 7."
    )


# ------------------------------------------------------------ errors streamed mid-way


def _assemblers() -> list[Any]:
    from osmosis_client.llm.anthropic import MessagesAssembler
    from osmosis_client.llm.responses_stream import ResponsesAssembler
    from osmosis_client.llm.streaming import ChunkAssembler

    return [ChunkAssembler("e"), ResponsesAssembler("e"), MessagesAssembler("e")]


@pytest.mark.parametrize(
    ("data", "event"),
    [
        ('{"error": {"message": "overloaded"}}', "message"),  # chat (vLLM, OpenRouter)
        ('{"type": "error", "message": "overloaded"}', "message"),  # Responses
        ('{"type": "error", "error": {"type": "x", "message": "overloaded"}}', "error"),
        ('"overloaded"', "error"),  # an error event whose data is not an object
    ],
)
def test_an_error_streamed_mid_way_fails_the_call_with_its_message_on_every_wire(
    data: str, event: str
) -> None:
    from osmosis_client.llm.streaming import Event

    for assembler in _assemblers():
        with pytest.raises(ProviderRequestError, match="mid-stream: overloaded"):
            assembler.add(Event(data, event))


def test_a_null_error_member_or_a_non_object_is_not_an_error_and_garbage_is_named() -> None:
    from osmosis_client.llm.streaming import Event

    for assembler in _assemblers():
        assembler.add(Event('{"id": "x", "error": null, "choices": []}'))
        assembler.add(Event("[1, 2]"))
        assembler.add(Event("   "))
        with pytest.raises(ProviderRequestError, match="not JSON"):
            assembler.add(Event("{half"))


def test_openrouter_reasoning_streamed_in_many_pieces_is_assembled_whole() -> None:
    """Issue 51: 320,000 pieces of one reasoning block (joined once, at the end — they
    were joined piece by piece, in quadratic time), a signature arriving last, and a
    hostile ``index`` that is not a key (a list) kept apart rather than crashing."""
    from osmosis_client.llm.streaming import ChunkAssembler, Event

    def chunk(details: list[dict[str, Any]]) -> Event:
        delta = {"reasoning_details": details}
        return Event(json.dumps({"id": "c", "choices": [{"index": 0, "delta": delta}]}))

    assembler = ChunkAssembler("e")
    piece = {"type": "reasoning.text", "index": 0, "text": "ab"}
    for _ in range(1_000):
        assembler.add(chunk([piece] * 320))
    assembler.add(chunk([{"type": "reasoning.text", "index": 0, "signature": "sig"}]))
    assembler.add(chunk([{"type": "reasoning.text", "index": [1], "text": "odd"}]))
    message = assembler.result()["choices"][0]["message"]
    first, odd = message["reasoning_details"]
    assert first["text"] == "ab" * 320_000 and first["signature"] == "sig"
    assert odd["text"] == "odd"
