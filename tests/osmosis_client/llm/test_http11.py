"""The model client's HTTP/1.1 layer against scripted servers (asyncio streams, standard
library only): the cases real servers produce that the wire tests' proxy does not —
kept-alive connections dropped while idle, interim answers, bodies ended by a close,
``Connection: close``, silence, garbage, a cap on connections, credentials in the URL."""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from osmosis_client.llm.http11 import BadResponse, Http11Client, Target

ANSWER = json.dumps({"ok": True}).encode()
Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter, int], Awaitable[None]]


async def read_request(reader: asyncio.StreamReader) -> tuple[str, dict[str, str], bytes]:
    head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1").split("\r\n")
    headers = {}
    for line in head[1:]:
        if line:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
    body = await reader.readexactly(int(headers.get("content-length", "0")))
    return head[0], headers, body


def whole(body: bytes = ANSWER, extra: str = "") -> bytes:
    return f"HTTP/1.1 200 OK\r\nContent-Length: {len(body)}\r\n{extra}\r\n".encode() + body


async def serve(handler: Handler, run: Callable[[str], Awaitable[Any]]) -> tuple[Any, list[int]]:
    """Run ``run(url)`` against a server calling ``handler(reader, writer, n)`` for its
    n-th connection; returns run's result and the requests served per connection."""
    served: list[int] = []

    async def on_connect(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        served.append(0)
        try:
            await handler(reader, writer, len(served))
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(on_connect, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    async with server:
        result = await run(f"http://127.0.0.1:{port}/v1/chat/completions")
    return result, served


async def post(client: Http11Client, url: str, headers: dict[str, str] | None = None) -> Any:
    response = await client.post(Target.parse(url), b"{}", headers or {})
    try:
        body = b"".join([piece async for piece in response.content.iter_any()])
        return response.status, body
    finally:
        response.release()


def client(**kwargs: Any) -> Http11Client:
    return Http11Client(limit=kwargs.pop("limit", 4), ssl_context=None, timeout=5.0, **kwargs)


def sequential(count: int) -> Callable[[str], Awaitable[list[Any]]]:
    """``count`` requests one after another on one client."""

    async def run(url: str) -> list[Any]:
        http = client()
        try:
            return [await post(http, url) for _ in range(count)]
        finally:
            await http.close()

    return run


def test_a_connection_the_server_dropped_while_idle_is_replaced_without_an_error() -> None:
    async def handler(reader: Any, writer: Any, n: int) -> None:
        await read_request(reader)
        writer.write(whole())  # keep-alive promised, then the server closes it anyway
        await writer.drain()

    async def run(url: str) -> list[Any]:
        http = client()
        try:
            first = await post(http, url)
            await asyncio.sleep(0.05)  # the close arrives while the connection is idle
            return [first, await post(http, url)]
        finally:
            await http.close()

    answers, served = asyncio.run(serve(handler, run))
    assert answers == [(200, ANSWER)] * 2 and served == [0, 0] and len(served) == 2


def test_a_close_racing_the_next_request_is_retried_once_on_a_new_connection() -> None:
    async def handler(reader: Any, writer: Any, n: int) -> None:
        await read_request(reader)
        writer.write(whole())
        await writer.drain()
        if n == 1:
            await read_request(reader)  # the second request arrives… and is dropped unanswered

    run = sequential(2)

    answers, served = asyncio.run(serve(handler, run))
    assert answers == [(200, ANSWER)] * 2 and len(served) == 2


def test_interim_answers_are_skipped_and_a_body_may_end_with_the_connection() -> None:
    async def handler(reader: Any, writer: Any, n: int) -> None:
        await read_request(reader)
        writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
        await writer.drain()
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n")
        for piece in (ANSWER[:3], ANSWER[3:]):
            writer.write(piece)
            await writer.drain()
            await asyncio.sleep(0.01)

    run = sequential(2)

    answers, served = asyncio.run(serve(handler, run))
    assert answers == [(200, ANSWER)] * 2 and len(served) == 2  # never reused after a close


def test_connection_close_answers_are_not_reused() -> None:
    async def handler(reader: Any, writer: Any, n: int) -> None:
        while True:
            await read_request(reader)
            served_extra = "Connection: close\r\n" if n == 1 else ""
            writer.write(whole(extra=served_extra))
            await writer.drain()

    run = sequential(3)

    answers, served = asyncio.run(serve(handler, run))
    assert answers == [(200, ANSWER)] * 3 and len(served) == 2  # 1 closed, 2 reused


def test_a_silent_server_times_out_and_garbage_is_a_bad_response() -> None:
    async def handler(reader: Any, writer: Any, n: int) -> None:
        await read_request(reader)
        if n == 1:
            await asyncio.sleep(5)
        writer.write(b"SSH-2.0-OpenSSH_9.6\r\n\r\n")
        await writer.drain()

    async def run(url: str) -> list[type[BaseException]]:
        http = Http11Client(limit=2, ssl_context=None, timeout=0.3)
        caught = []
        for _ in range(2):
            with pytest.raises((TimeoutError, BadResponse)) as info:
                await post(http, url)
            caught.append(info.type)
        await http.close()
        return caught

    caught, _ = asyncio.run(serve(handler, run))
    assert caught == [TimeoutError, BadResponse]


def test_connections_are_capped_and_credentials_in_the_url_are_sent_as_basic_auth() -> None:
    seen: list[str] = []
    open_now = [0, 0]  # (open, most at once)

    async def handler(reader: Any, writer: Any, n: int) -> None:
        open_now[0] += 1
        open_now[1] = max(open_now)
        try:
            for _ in range(3):
                _, headers, _ = await read_request(reader)
                seen.append(headers.get("authorization", ""))
                await asyncio.sleep(0.01)
                writer.write(whole())
                await writer.drain()
        finally:
            open_now[0] -= 1

    async def run(url: str) -> list[Any]:
        http = client(limit=2)
        authed = url.replace("http://", "http://me:p%40ss@")
        try:
            return await asyncio.gather(*(post(http, authed) for _ in range(6)))
        finally:
            await http.close()

    answers, served = asyncio.run(serve(handler, run))
    assert answers == [(200, ANSWER)] * 6 and open_now[1] <= 2 and len(served) <= 2
    assert set(seen) == {"Basic " + base64.b64encode(b"me:p@ss").decode()}


def test_a_header_with_a_line_break_is_refused_before_anything_is_sent() -> None:
    async def handler(reader: Any, writer: Any, n: int) -> None:
        raise AssertionError("nothing should connect")  # pragma: no cover

    async def run(url: str) -> None:
        http = client()
        with pytest.raises(ValueError, match="line break"):
            await post(http, url, {"X-Evil": "a\r\nInjected: 1"})
        await http.close()

    _, served = asyncio.run(serve(handler, run))
    assert served == []


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://api.example.com/v1/x?a=1", (True, "api.example.com", 443, "/v1/x?a=1")),
        ("http://[::1]:8000/v1", (False, "::1", 8000, "/v1")),
        ("http://h", (False, "h", 80, "/")),
    ],
)
def test_targets_are_split_once(url: str, expected: tuple[Any, ...]) -> None:
    target = Target.parse(url)
    assert (target.tls, target.host, target.port, target.path) == expected
    assert target.host_header in ("api.example.com", "[::1]:8000", "h")
