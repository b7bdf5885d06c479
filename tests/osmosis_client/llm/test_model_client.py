"""ModelClient against a loopback OpenAI-compatible stub."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest
from pydantic import SecretStr

from osmosis_client.errors import (
    EndpointUnreachableError,
    ModelNotFoundError,
    ProviderRequestError,
)
from osmosis_client.llm.client import ModelClient
from osmosis_client.llm.providers import ModelTarget, resolve_target
from tests.stub_openai import StubOpenAI


@pytest.fixture
def stub() -> Iterator[StubOpenAI]:
    with StubOpenAI() as server:
        yield server


def target(url: str, key: str | None = None) -> ModelTarget:
    return ModelTarget(
        "served-model",
        "served-model",
        None,
        url,
        SecretStr(key) if key else None,
        "MY_KEY" if key else None,
    )


def run(coro: Any) -> Any:
    return asyncio.run(coro)


class Sleeps:
    def __init__(self) -> None:
        self.calls: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.calls.append(seconds)


def test_chat_passes_params_and_records_usage(stub: StubOpenAI) -> None:
    async def go() -> tuple[dict[str, Any], int]:
        async with ModelClient(target(stub.url, "sk-x"), default_params={"temperature": 0.2}) as c:
            return await c.chat(
                [{"role": "user", "content": "What is 6*7?"}],
                {"tools": [{"type": "function"}], "seed": 3, "temperature": 0.0},
            )

    message, tokens = run(go())
    # offered tools, the stub answers with a tool call: the message comes back verbatim
    assert message["role"] == "assistant" and message["content"] is None
    assert message["tool_calls"][0]["function"]["name"] == "multiply"
    assert tokens == 10
    body = stub.state.requests[-1]
    assert body["model"] == "served-model"
    assert (
        body["seed"] == 3 and body["temperature"] == 0.0 and body["tools"] == [{"type": "function"}]
    )
    assert stub.state.headers[-1]["Authorization"] == "Bearer sk-x"


def test_no_key_no_authorization_header(stub: StubOpenAI) -> None:
    async def go() -> None:
        async with ModelClient(target(stub.url)) as c:
            await c.chat([{"role": "user", "content": "1+1"}])

    run(go())
    assert "Authorization" not in stub.state.headers[-1]


def test_5xx_storm_then_success_and_retry_after(stub: StubOpenAI) -> None:
    stub.fail_next(503, 2)
    stub.fail_next(429, 1, retry_after="2")
    sleeps = Sleeps()

    async def go() -> tuple[dict[str, Any], int]:
        async with ModelClient(target(stub.url), sleep=sleeps) as c:
            return await c.chat([{"role": "user", "content": "2+2"}])

    message, _ = run(go())
    assert message["content"] == "4"
    assert len(stub.state.requests) == 4
    assert len(sleeps.calls) == 3 and sleeps.calls[2] == 2.0


def test_retries_are_capped_at_five(stub: StubOpenAI) -> None:
    stub.fail_next(500, 10)
    sleeps = Sleeps()

    async def go() -> None:
        async with ModelClient(target(stub.url), sleep=sleeps) as c:
            await c.chat([{"role": "user", "content": "x"}])

    with pytest.raises(ProviderRequestError, match="500"):
        run(go())
    assert len(stub.state.requests) == 6
    assert len(sleeps.calls) == 5


def test_retries_are_capped_in_time(stub: StubOpenAI) -> None:
    stub.fail_next(503, 10, retry_after="25")
    sleeps = Sleeps()

    async def go() -> None:
        async with ModelClient(
            target(stub.url), sleep=sleeps, monotonic=lambda: 100.0 + sum(sleeps.calls)
        ) as c:
            await c.chat([{"role": "user", "content": "x"}])

    with pytest.raises(ProviderRequestError):
        run(go())
    assert sum(sleeps.calls) <= 60


@pytest.mark.parametrize(
    ("status", "error"),
    [
        (400, ProviderRequestError),
        (401, ProviderRequestError),
        (404, ModelNotFoundError),
        (422, ProviderRequestError),
    ],
)
def test_other_4xx_never_retried(stub: StubOpenAI, status: int, error: type[Exception]) -> None:
    stub.fail_next(status, 3)

    async def go() -> None:
        async with ModelClient(target(stub.url, "sk-secret-value"), sleep=Sleeps()) as c:
            await c.chat([{"role": "user", "content": "x"}])

    with pytest.raises(error) as info:
        run(go())
    assert len(stub.state.requests) == 1
    assert "sk-secret-value" not in str(info.value) + str(info.value.hint)


def test_unreachable_endpoint_probe_is_one_clear_error() -> None:
    async def go() -> None:
        async with ModelClient(target("http://127.0.0.1:9/v1"), sleep=Sleeps()) as c:
            await c.probe()

    with pytest.raises(EndpointUnreachableError, match="refused the connection"):
        run(go())


def test_mock_provider_is_offline_and_deterministic() -> None:
    async def go() -> list[Any]:
        async with ModelClient(resolve_target("mock/flaky-calculator", env={})) as c:
            return [
                await c.chat([{"role": "user", "content": "What is 12 * 3?"}], {"seed": s})
                for s in range(20)
            ]

    first, second = run(go()), run(go())
    assert first == second
    answers = {m["content"] for m, _ in first}
    assert answers == {"36", "37"}  # mostly right, sometimes off by one


def test_unknown_mock_model_fails_at_resolution() -> None:
    with pytest.raises(ModelNotFoundError) as info:
        resolve_target("mock/nope", env={})
    assert "mock/echo" in (info.value.hint or "")


def test_debug_logs_every_call_with_status_and_time_never_the_key(
    stub: StubOpenAI, caplog: pytest.LogCaptureFixture
) -> None:
    async def go() -> None:
        async with ModelClient(target(stub.url, "sk-secret-value")) as c:
            for _ in range(3):
                await c.chat([{"role": "user", "content": "hi"}])

    with caplog.at_level("DEBUG", logger="osmosis_client"):
        run(go())
    calls = [r.getMessage() for r in caplog.records if "/chat/completions -> " in r.getMessage()]
    assert len(calls) == 3  # successes too, not only failures
    assert all(c.startswith("POST ") and c.endswith(" ms)") and " -> 200 (" in c for c in calls)
    assert "sk-secret-value" not in caplog.text


def test_a_base_url_without_v1_suggests_it(stub: StubOpenAI) -> None:
    """Issue 34: `--base-url http://host:8000` against a server under /v1 said "model not
    found"; a 404 for the path (not the model) suggests …/v1."""
    bare = stub.url.removesuffix("/v1")

    async def go() -> None:
        async with ModelClient(target(bare, None)) as c:
            await c.chat([{"role": "user", "content": "hi"}])

    with pytest.raises(ModelNotFoundError) as caught:
        run(go())
    assert caught.value.code == "ENDPOINT_PATH"
    assert caught.value.data["suggested_base_url"] == f"{bare}/v1"
    assert "no chat-completions route" in caught.value.message
