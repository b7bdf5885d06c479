"""The model client against an endpoint that behaves like a real server: answers in small
delayed pieces, chunked, compressed, over TLS with a private CA, streamed, dying
mid-answer (tests/realwire.py in front of the independent model double)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from osmosis_client._retry import RetryPolicy
from osmosis_client.errors import EndpointUnreachableError, ProviderRequestError
from osmosis_client.llm import answers as answers_module
from osmosis_client.llm.client import ModelClient
from osmosis_client.llm.providers import ModelSpec, ModelTarget
from tests.e2e.model_double import FILLER, ModelDouble
from tests.realwire import Proxy, Wire, private_ca

QUESTION = [{"role": "user", "content": "What is 17 + 39?"}]


def target(url: str) -> ModelTarget:
    return ModelSpec("Qwen/Qwen3-8B", base_url=url).resolve()


def call(url: str, messages: list[dict[str, Any]] = QUESTION, **kwargs: Any) -> dict[str, Any]:
    params = kwargs.pop("params", None)

    async def main() -> dict[str, Any]:
        async with ModelClient(target(url), **kwargs) as client:
            return await client.complete(messages, params)

    return asyncio.run(main())


@pytest.fixture
def model() -> Any:
    with ModelDouble(pad=3000) as double:
        yield double


def content_of(response: dict[str, Any]) -> str:
    return str(response["choices"][0]["message"]["content"])


def test_a_3kb_answer_in_1448_byte_pieces_2ms_apart_is_read_whole(model: ModelDouble) -> None:
    with Proxy(model.url, Wire(piece=1448, delay=0.002)) as proxy:
        response = call(proxy.url)
    text = content_of(response)
    assert len(text.encode()) > 3000 and text.endswith("56") and text.startswith(FILLER[:20])


@pytest.mark.parametrize("encoding", [None, "gzip", "deflate"])
def test_chunked_and_compressed_answers_are_decoded(
    model: ModelDouble, encoding: str | None
) -> None:
    with Proxy(model.url, Wire(piece=97, delay=0.001, chunked=True, encoding=encoding)) as proxy:
        response = call(proxy.url)
    assert content_of(response).endswith("56")
    assert response["usage"]["total_tokens"] == 10


def test_a_compressed_answer_with_a_length_is_decoded(model: ModelDouble) -> None:
    with Proxy(model.url, Wire(piece=300, delay=0.001, encoding="gzip")) as proxy:
        assert content_of(call(proxy.url)).endswith("56")


def test_keep_alive_connections_are_reused_across_whole_answers(model: ModelDouble) -> None:
    questions = [[{"role": "user", "content": f"What is {i} + 1?"}] for i in range(12)]

    async def main(url: str) -> list[str]:
        async with ModelClient(target(url), concurrency=1) as client:
            return [content_of(await client.complete(q)) for q in questions]

    with Proxy(model.url, Wire(piece=512, delay=0.001, chunked=True)) as proxy:
        answers = asyncio.run(main(proxy.url))
    assert [a.rsplit(" ", 1)[-1] for a in answers] == [str(i + 1) for i in range(12)]
    assert proxy.reused >= 10 and proxy.connections <= 2  # one connection, kept alive


def test_an_answer_cut_off_mid_body_is_retried(model: ModelDouble) -> None:
    policy = RetryPolicy(max_retries=2, base_delay=0.01, jitter=False)
    with Proxy(model.url, Wire(piece=700, delay=0.001)) as proxy:
        proxy.kill_next()
        response = call(proxy.url, retry_policy=policy)
    assert content_of(response).endswith("56")
    assert proxy.killed == 1 and proxy.requests == 2


def test_an_answer_over_the_cap_is_one_clear_error(
    model: ModelDouble, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(answers_module, "MAX_RESPONSE_BYTES", 2048)
    with (
        Proxy(model.url, Wire(piece=400, delay=0.001, chunked=True)) as proxy,
        pytest.raises(ProviderRequestError, match=r"sent more than \d+ MiB for one answer"),
    ):
        call(proxy.url)


# ------------------------------------------------------------------ streaming


@pytest.mark.parametrize("piece", [1, 7, 64])
def test_a_streamed_answer_split_mid_event_and_mid_character_is_assembled(
    model: ModelDouble, piece: int
) -> None:
    with Proxy(model.url, Wire(piece=piece, delay=0.0, encoding="gzip")) as proxy:
        response = call(proxy.url, params={"stream": True})
    text = content_of(response)
    assert text == model.reply(QUESTION, tools=False)["content"]  # é, 漢字, ✓ intact
    assert response["usage"]["total_tokens"] == 10
    assert model.requests[-1]["stream_options"] == {"include_usage": True}


def test_a_streamed_tool_call_is_merged_from_its_fragments(model: ModelDouble) -> None:
    tools = [{"type": "function", "function": {"name": "add", "parameters": {}}}]
    with Proxy(model.url, Wire(piece=5, delay=0.0)) as proxy:
        response = call(proxy.url, params={"stream": True, "tools": tools})
    message = response["choices"][0]["message"]
    assert message["content"] is None
    call_ = message["tool_calls"][0]
    assert call_["function"]["name"] == "add" and call_["id"].startswith("call_")
    assert json.loads(call_["function"]["arguments"]) == {"a": "17", "b": "39"}
    assert response["choices"][0]["finish_reason"] == "tool_calls"


# ------------------------------------------------------------------ TLS


def test_a_private_ca_is_refused_by_default_without_retries(
    model: ModelDouble, tmp_path: Path
) -> None:
    server_tls, _ = private_ca(tmp_path)
    with (
        Proxy(model.url, Wire(), tls=server_tls) as proxy,
        pytest.raises(EndpointUnreachableError) as caught,
    ):
        call(proxy.url)
    assert caught.value.code == "TLS_CERTIFICATE"
    assert "not trusted" in caught.value.message
    assert proxy.requests == 0  # never retried: a certificate does not fix itself


def test_a_private_ca_is_trusted_when_its_bundle_is_given(
    model: ModelDouble, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    server_tls, pem = private_ca(tmp_path)
    with Proxy(model.url, Wire(piece=512, chunked=True, encoding="gzip"), tls=server_tls) as proxy:
        assert content_of(call(proxy.url, ca_bundle=pem)).endswith("56")
        monkeypatch.setenv("OSMOSIS_CA_BUNDLE", str(pem))
        assert content_of(call(proxy.url)).endswith("56")


def test_a_connection_left_mid_answer_is_never_reused_for_the_next(model: ModelDouble) -> None:
    """A streamed answer is left at [DONE] (its last chunk unread) and one is cut off by the
    cap: the calls after each still get whole, correct answers (no leftover bytes read as
    the start of the next answer)."""

    async def main(url: str) -> list[str]:
        answers = []
        async with ModelClient(target(url), concurrency=1) as client:
            for i in range(6):
                params = {"stream": True} if i % 2 == 0 else None
                question = [{"role": "user", "content": f"What is {i} + 10?"}]
                answers.append(content_of(await client.complete(question, params)))
        return answers

    with Proxy(model.url, Wire(piece=64, delay=0.0, chunked=True)) as proxy:
        answers = asyncio.run(main(proxy.url))
    assert [a.rsplit(" ", 1)[-1] for a in answers] == [str(i + 10) for i in range(6)]
