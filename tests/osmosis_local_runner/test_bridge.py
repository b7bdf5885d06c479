"""The LLM bridge: auth, routing, refusals, pass-through, JSON and SSE answers, errors,
token counting — checked with aiohttp as a client, a strict SSE parser, and the
OpenAI client library."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Sequence
from typing import Any

import aiohttp
import pytest

from osmosis_client.errors import EndpointUnreachableError, ProviderRequestError
from osmosis_client.llm import mock
from osmosis_local_runner.server.bridge import Bridge, as_chunk
from tests.e2e.rollout_server_double import parse_sse


class Model:
    """A recording model: the mock calculator, or an error, or a slow answer."""

    def __init__(self, *, error: Exception | None = None, delay: float = 0.0) -> None:
        self.error = error
        self.delay = delay
        self.calls: list[tuple[list[Any], dict[str, Any]]] = []
        self.cancelled = False

    async def complete(self, messages: Sequence[Any], params: dict[str, Any]) -> dict[str, Any]:
        self.calls.append((list(messages), dict(params)))
        try:
            if self.delay:
                await asyncio.sleep(self.delay)
        except asyncio.CancelledError:
            self.cancelled = True
            raise
        if self.error is not None:
            raise self.error
        return await mock.complete("tool-calculator", {"messages": messages, **params})


async def with_bridge(
    test: Any, *, model: Model | None = None, ping: float = 15.0
) -> tuple[Bridge, Model]:
    bridge = Bridge(ping_interval=ping)
    await bridge.start()
    model = model or Model()
    bridge.register("r-1", model.complete)
    try:
        async with aiohttp.ClientSession() as session:
            await test(bridge, session)
    finally:
        await bridge.stop()
    return bridge, model


def url(bridge: Bridge, rollout_id: str = "r-1") -> str:
    return bridge.url_for(rollout_id) + "/chat/completions"


def auth(bridge: Bridge) -> dict[str, str]:
    return {"Authorization": f"Bearer {bridge.token}"}


QUESTION = [{"role": "user", "content": "What is 2 + 3?"}]


def test_answers_json_echoes_the_model_and_counts_tokens() -> None:
    async def test(bridge: Bridge, session: aiohttp.ClientSession) -> None:
        body = {"model": "osmosis-rollout", "messages": QUESTION, "temperature": 0.2, "seed": 7}
        async with session.post(url(bridge), json=body, headers=auth(bridge)) as r:
            assert r.status == 200
            reply = await r.json()
        assert reply["model"] == "osmosis-rollout"  # echoed, whatever answered
        assert reply["choices"][0]["message"]["content"] == "5"
        route = bridge.routes["r-1"]
        assert route.tokens == reply["usage"]["total_tokens"] > 0 and route.calls == 1

    _, model = asyncio.run(with_bridge(test))
    messages, params = model.calls[0]
    assert messages == QUESTION
    assert params == {"temperature": 0.2, "seed": 7}  # model/messages/stream never forwarded


def test_refuses_bad_tokens_unknown_rollouts_n_and_redirects() -> None:
    async def test(bridge: Bridge, session: aiohttp.ClientSession) -> None:
        body = {"model": "x", "messages": QUESTION}
        cases = [
            (url(bridge), {}, body, 401),
            (url(bridge), {"Authorization": "Bearer wrong"}, body, 401),
            (url(bridge), {"Authorization": bridge.token}, body, 401),  # no scheme
            (url(bridge, "r-2"), auth(bridge), body, 404),
            (url(bridge), auth(bridge), {**body, "n": 2}, 400),
            (url(bridge), auth(bridge), {**body, "api_base": "http://evil"}, 400),
            (url(bridge), auth(bridge), {**body, "extra_headers": {"X": "1"}}, 400),
            (url(bridge), auth(bridge), {"model": "x", "messages": []}, 400),
        ]
        for target, headers, payload, status in cases:
            async with session.post(target, json=payload, headers=headers) as r:
                assert r.status == status, payload
                error = (await r.json())["error"]
                assert set(error) == {"message", "type", "code"}
        async with session.post(url(bridge), data=b"{not json", headers=auth(bridge)) as r:
            assert r.status == 400

    _, model = asyncio.run(with_bridge(test))
    assert model.calls == []  # nothing refused reached the model


def test_n_equal_to_one_and_tools_pass() -> None:
    tools = [
        {
            "type": "function",
            "function": {
                "name": "add",
                "parameters": {
                    "type": "object",
                    "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
                    "additionalProperties": False,
                },
                "strict": True,
            },
        }
    ]
    parts = [{"role": "user", "content": [{"type": "text", "text": "What is 2 + 3?"}]}]

    async def test(bridge: Bridge, session: aiohttp.ClientSession) -> None:
        body = {"model": "m", "messages": parts, "n": 1, "tools": tools, "tool_choice": "auto"}
        async with session.post(url(bridge), json=body, headers=auth(bridge)) as r:
            assert r.status == 200
            reply = await r.json()
        call = reply["choices"][0]["message"]["tool_calls"][0]
        assert call["function"]["name"] == "add"

    _, model = asyncio.run(with_bridge(test))
    messages, params = model.calls[0]
    assert messages == parts and params == {"tools": tools, "tool_choice": "auto"}


async def _stream(bridge: Bridge, session: aiohttp.ClientSession, **extra: Any) -> bytes:
    body = {"model": "osmosis-rollout", "messages": QUESTION, "stream": True, **extra}
    async with session.post(url(bridge), json=body, headers=auth(bridge)) as r:
        assert r.status == 200
        assert r.headers["Content-Type"].startswith("text/event-stream")
        return await r.read()


def test_streams_one_chunk_with_usage_then_done() -> None:
    async def test(bridge: Bridge, session: aiohttp.ClientSession) -> None:
        raw = await _stream(bridge, session, stream_options={"include_usage": True})
        assert raw.startswith(b": ping\n\n") and raw.endswith(b"data: [DONE]\n\n")
        message = parse_sse(raw)  # strict: fails on anything but comments, data, [DONE]
        assert message["content"] == "5"
        data = [b for b in raw.split(b"\n\n") if b.startswith(b"data: {")]
        (chunk,) = [json.loads(b[len(b"data: ") :]) for b in data]
        assert chunk["model"] == "osmosis-rollout"
        assert chunk["choices"][0]["finish_reason"] == "stop"
        assert chunk["usage"]["total_tokens"] == bridge.routes["r-1"].tokens

    asyncio.run(with_bridge(test))


def test_streams_pings_while_the_model_works() -> None:
    async def test(bridge: Bridge, session: aiohttp.ClientSession) -> None:
        raw = await _stream(bridge, session)
        assert raw.count(b": ping\n\n") >= 3
        assert parse_sse(raw)["content"] == "5"

    asyncio.run(with_bridge(test, model=Model(delay=0.25), ping=0.05))


def test_streamed_tool_calls_carry_their_index() -> None:
    chunk = as_chunk(
        {
            "choices": [
                {
                    "message": {
                        "role": "assistant",
                        "content": None,
                        "tool_calls": [
                            {"id": "a", "type": "function", "function": {"name": "f"}},
                            {"id": "b", "type": "function", "function": {"name": "g"}},
                        ],
                        "reasoning_content": "thinking",
                    }
                }
            ],
            "usage": {"total_tokens": 3},
        },
        "m",
    )
    delta = chunk["choices"][0]["delta"]
    assert [c["index"] for c in delta["tool_calls"]] == [0, 1]
    assert delta["content"] is None and delta["reasoning_content"] == "thinking"
    assert chunk["choices"][0]["finish_reason"] == "tool_calls"
    assert chunk["object"] == "chat.completion.chunk" and chunk["usage"] == {"total_tokens": 3}


@pytest.mark.parametrize(
    ("error", "status"),
    [
        (ProviderRequestError("bad request upstream", status_code=400), 400),
        (ProviderRequestError("upstream 500", status_code=500), 502),
        (EndpointUnreachableError("cannot connect to the model"), 502),
    ],
)
def test_model_errors_become_openai_errors(error: Exception, status: int) -> None:
    async def test(bridge: Bridge, session: aiohttp.ClientSession) -> None:
        body = {"model": "m", "messages": QUESTION}
        async with session.post(url(bridge), json=body, headers=auth(bridge)) as r:
            assert r.status == status
            assert (await r.json())["error"]["message"] == str(error.args[0])
        raw = await _stream(bridge, session)
        blocks = raw.split(b"\n\n")
        assert blocks[-3].startswith(b"event: error\ndata: {")
        assert blocks[-2] == b"data: [DONE]"
        with pytest.raises(RuntimeError, match="model error in stream"):
            parse_sse(raw)
        assert bridge.routes["r-1"].tokens == 0

    asyncio.run(with_bridge(test, model=Model(error=error)))


def test_a_client_that_goes_away_cancels_the_model_call() -> None:
    async def test(bridge: Bridge, session: aiohttp.ClientSession) -> None:
        body = {"model": "m", "messages": QUESTION}
        with pytest.raises(asyncio.TimeoutError):
            async with session.post(
                url(bridge),
                json=body,
                headers=auth(bridge),
                timeout=aiohttp.ClientTimeout(total=0.2),
            ) as r:
                await r.read()
        for _ in range(3000):  # a generous bound: progress, not speed
            if model.cancelled:
                break
            await asyncio.sleep(0.02)

    model = Model(delay=30)
    asyncio.run(with_bridge(test, model=model))
    assert model.cancelled


def test_the_openai_client_library_reads_both_answers() -> None:
    openai = pytest.importorskip("openai")

    async def test(bridge: Bridge, session: aiohttp.ClientSession) -> None:
        client = openai.AsyncOpenAI(base_url=bridge.url_for("r-1"), api_key=bridge.token)
        reply = await client.chat.completions.create(model="osmosis-rollout", messages=QUESTION)
        assert reply.choices[0].message.content == "5" and reply.model == "osmosis-rollout"
        stream: AsyncIterator[Any] = await client.chat.completions.create(
            model="osmosis-rollout",
            messages=QUESTION,
            stream=True,
            stream_options={"include_usage": True},
        )
        chunks = [chunk async for chunk in stream]
        assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == "5"
        assert chunks[-1].usage is not None and chunks[-1].usage.total_tokens > 0
        with pytest.raises(openai.AuthenticationError):
            bad = openai.AsyncOpenAI(base_url=bridge.url_for("r-1"), api_key="nope")
            await bad.chat.completions.create(model="m", messages=QUESTION)
        await client.close()

    asyncio.run(with_bridge(test))


def test_a_nested_json_body_is_a_400_without_a_traceback(
    caplog: pytest.LogCaptureFixture, capfd: pytest.CaptureFixture[str]
) -> None:
    async def test(bridge: Bridge, session: aiohttp.ClientSession) -> None:
        headers = {**auth(bridge), "Content-Type": "application/json"}
        async with session.post(url(bridge), data=b"[" * 100_000, headers=headers) as r:
            assert r.status == 400
            assert (await r.json())["error"]["message"] == "the body is nested too deeply"

    with caplog.at_level("DEBUG"):
        asyncio.run(with_bridge(test))
    ours = [r for r in caplog.records if r.name.startswith(("aiohttp", "osmosis"))]
    assert not any(r.exc_info for r in ours)
    assert "Error handling request" not in caplog.text + capfd.readouterr().err


def test_a_model_answer_that_cannot_be_reencoded_is_a_500_not_a_crash(
    caplog: pytest.LogCaptureFixture,
) -> None:
    deep: Any = []
    for _ in range(5000):
        deep = [deep]

    class Deep(Model):
        async def complete(self, messages: Sequence[Any], params: dict[str, Any]) -> dict[str, Any]:
            answer = await super().complete(messages, params)
            answer["choices"][0]["message"]["annotations"] = deep
            return answer

    async def test(bridge: Bridge, session: aiohttp.ClientSession) -> None:
        body = {"messages": QUESTION}
        async with session.post(url(bridge), json=body, headers=auth(bridge)) as r:
            assert r.status == 500
            assert (await r.json())["error"]["type"] == "internal_error"
        async with session.post(
            url(bridge), json={**body, "stream": True}, headers=auth(bridge)
        ) as r:
            text = (await r.read()).decode()
        assert "event: error" in text and "internal error" in text and text.endswith("[DONE]\n\n")

    with caplog.at_level("DEBUG"):
        asyncio.run(with_bridge(test, model=Deep()))
    ours = [r for r in caplog.records if r.name.startswith(("aiohttp", "osmosis"))]
    assert not any(r.exc_info for r in ours) and "Error handling request" not in caplog.text


def test_a_request_sent_in_small_chunked_pieces_is_read_whole() -> None:
    """A rollout's HTTP client may send its body chunked, in small delayed writes."""

    async def test(bridge: Bridge, session: aiohttp.ClientSession) -> None:
        body = json.dumps({"model": "m", "messages": QUESTION * 50}).encode()
        head = (
            f"POST /v1/rollouts/r-1/chat/completions HTTP/1.1\r\nHost: x\r\n"
            f"Authorization: Bearer {bridge.token}\r\nContent-Type: application/json\r\n"
            "Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
        ).encode()
        reader, writer = await asyncio.open_connection("127.0.0.1", bridge.port)
        writer.write(head)
        for start in range(0, len(body), 13):
            piece = body[start : start + 13]
            writer.write(b"%x\r\n%s\r\n" % (len(piece), piece))
            await writer.drain()
            await asyncio.sleep(0.0005)
        writer.write(b"0\r\n\r\n")
        await writer.drain()
        answer = await asyncio.wait_for(reader.read(), 30.0)
        writer.close()
        assert answer.startswith(b"HTTP/1.1 200")
        assert b'"content":"5"' in answer.replace(b" ", b"")

    asyncio.run(with_bridge(test))
