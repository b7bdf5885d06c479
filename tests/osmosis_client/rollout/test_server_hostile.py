"""The 0.2 rollout server (`osmosis serve`) facing hostile clients and trainers, in-process:
back-pressure, slow clients, malformed requests, the idempotency rule, redirects and
answers that arrive in pieces."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any

import aiohttp
import pytest

from osmosis_client._serving import SlowClientGuard
from osmosis_client.rollout import RolloutContext, RolloutResult
from osmosis_client.rollout.agent_loop.server import RolloutServer
from tests.e2e.trainer_double import Trainer, init_body
from tests.osmosis_client.rollout.test_server import Calculator, wait_for_completions
from tests.realwire import Proxy, Wire


class Blocked(Calculator):
    """Rollouts that wait until released (so they stay running or queued)."""

    def __init__(self) -> None:
        self.release = asyncio.Event()

    async def run(self, ctx: RolloutContext) -> RolloutResult:
        await self.release.wait()
        return ctx.complete([])


def serving(loop_: Any, test: Callable[[RolloutServer, str], Awaitable[Any]], **kwargs: Any) -> Any:
    async def main() -> Any:
        server = RolloutServer(loop_, **kwargs)
        port = await server.start("127.0.0.1", 0)
        try:
            return await test(server, f"http://127.0.0.1:{port}")
        finally:
            if isinstance(loop_, Blocked):
                loop_.release.set()
            await server.stop()

    return asyncio.run(main())


async def post(url: str, body: Any, **headers: str) -> tuple[int, Any, dict[str, str]]:
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    async with (
        aiohttp.ClientSession() as session,
        session.post(
            url, data=data, headers={"Content-Type": "application/json", **headers}
        ) as response,
    ):
        return response.status, await response.json(content_type=None), dict(response.headers)


# ------------------------------------------------------------------ back-pressure


def test_inits_beyond_the_queue_cap_get_429_with_retry_after() -> None:
    async def test(server: RolloutServer, url: str) -> list[tuple[int, Any, dict[str, str]]]:
        return [
            await post(f"{url}/v1/rollout/init", init_body(f"r-{i}", "http://127.0.0.1:9"))
            for i in range(6)
        ]

    answers = serving(Blocked(), test, max_concurrent=2, max_queued=2)
    assert [status for status, _, _ in answers] == [202, 202, 202, 202, 429, 429]
    assert answers[4][2]["Retry-After"] == "1"
    assert "busy" in answers[4][1]["detail"]


def test_a_repeat_is_answered_even_when_the_queue_is_full() -> None:
    async def test(server: RolloutServer, url: str) -> int:
        await post(f"{url}/v1/rollout/init", init_body("r-0", "http://127.0.0.1:9"))
        status, _, _ = await post(f"{url}/v1/rollout/init", init_body("r-0", "http://127.0.0.1:9"))
        return status

    assert serving(Blocked(), test, max_concurrent=1, max_queued=0) == 202


# ------------------------------------------------------------------ slow clients


async def trickle(url: str, parts: list[bytes], every: float, bound: float) -> tuple[bool, float]:
    """Send ``parts`` one by one; (closed by the server before the end, seconds taken)."""
    host, port = url.removeprefix("http://").split(":")
    loop = asyncio.get_running_loop()
    started = loop.time()
    reader, writer = await asyncio.open_connection(host, int(port))
    try:
        for part in parts:
            writer.write(part)
            try:
                await writer.drain()
            except ConnectionError:
                return True, loop.time() - started
            try:
                data = await asyncio.wait_for(reader.read(65536), every)
            except asyncio.TimeoutError:
                continue
            if data == b"" or b"408" in data.split(b"\r\n", 1)[0]:
                return True, loop.time() - started
            if loop.time() - started > bound:
                break
        return False, loop.time() - started
    finally:
        writer.close()


def test_a_client_trickling_its_headers_is_cut_off() -> None:
    guard = SlowClientGuard(header_timeout=0.5, sweep_every=0.05)
    parts = [b"POST /v1/rollout/init HTTP/1.1\r\n"] + [b"X-Slow: 1\r\n"] * 400

    async def test(server: RolloutServer, url: str) -> tuple[bool, float]:
        return await trickle(url, parts, every=0.1, bound=40.0)

    closed, _ = serving(Calculator(), test, guard=guard)
    assert closed and guard.closed_slow >= 1  # long before the 400 lines were sent


def test_a_client_trickling_its_body_gets_408() -> None:
    guard = SlowClientGuard(header_timeout=0.5, body_timeout=0.5, sweep_every=0.05)
    head = (
        b"POST /v1/rollout/init HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        b"Content-Length: 1000\r\n\r\n"
    )
    parts = [head] + [b" "] * 400

    async def test(server: RolloutServer, url: str) -> tuple[bool, float]:
        return await trickle(url, parts, every=0.1, bound=40.0)

    closed, _ = serving(Calculator(), test, guard=guard)
    assert closed and guard.closed_slow == 1


def test_a_connection_that_never_speaks_is_closed() -> None:
    guard = SlowClientGuard(header_timeout=0.3, sweep_every=0.05)

    async def test(server: RolloutServer, url: str) -> bytes:
        host, port = url.removeprefix("http://").split(":")
        reader, writer = await asyncio.open_connection(host, int(port))
        try:
            return await asyncio.wait_for(reader.read(), 60.0)  # EOF once the server closes
        finally:
            writer.close()

    assert serving(Calculator(), test, guard=guard) == b""


def test_requests_arriving_in_tiny_pieces_within_the_bound_are_served() -> None:
    """Slow is not the same as broken: a request in 7-byte pieces arrives and is served."""

    async def test(server: RolloutServer, url: str) -> tuple[int, int]:
        with (
            Trainer() as trainer,
            Proxy(url, Wire(piece=7, delay=0.0005, request_piece=7)) as proxy,
        ):
            status, body, _ = await post(
                f"{proxy.url}/v1/rollout/init", init_body("tiny", trainer.url)
            )
            await asyncio.to_thread(wait_for_completions, trainer, 1)
            return status, len(body["tools"])

    assert serving(Calculator(), test) == (202, 4)


# ------------------------------------------------------------------ malformed requests


def test_undecodable_authorization_and_nested_json_are_4xx_without_tracebacks(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def test(server: RolloutServer, url: str) -> list[int]:
        host, port = url.removeprefix("http://").split(":")
        statuses = []
        for body, auth in (
            (json.dumps(init_body("a", "http://127.0.0.1:9")).encode(), b"Bearer \xff\xfe"),
            (b"[" * 100_000, b"Bearer k-1"),
            (b'{"rollout_id": ' * 5000, b"Bearer k-1"),
        ):
            reader, writer = await asyncio.open_connection(host, int(port))
            writer.write(
                b"POST /v1/rollout/init HTTP/1.1\r\nHost: x\r\nAuthorization: "
                + auth
                + b"\r\nContent-Type: application/json\r\nContent-Length: "
                + str(len(body)).encode()
                + b"\r\nConnection: close\r\n\r\n"
                + body
            )
            await writer.drain()
            answer = await asyncio.wait_for(reader.read(), 30.0)
            writer.close()
            statuses.append(int(answer.split(b" ", 2)[1]))
        return statuses

    with caplog.at_level(logging.DEBUG):
        statuses = serving(Calculator(), test, api_key="k-1")
    assert statuses == [401, 422, 422]
    assert "Traceback" not in caplog.text and "Error handling request" not in caplog.text


# ------------------------------------------------------------------ idempotency


def test_the_idempotency_rule() -> None:
    async def test(server: RolloutServer, url: str) -> list[tuple[int, Any]]:
        init = f"{url}/v1/rollout/init"
        trainer = "http://127.0.0.1:9"
        answers = []
        for body in (
            init_body("r-1", trainer),  # new
            init_body("r-1", trainer),  # a repeat: same id, no key → the same 202
            init_body("r-2", trainer, idempotency_key="r-1"),  # the key r-1 is taken
            init_body("r-1", trainer, idempotency_key="k-9"),  # r-1 runs under another key
            init_body("r-3", trainer, idempotency_key="k-3"),  # new
            init_body("r-3", trainer, idempotency_key="k-3"),  # a repeat
        ):
            status, answer, _ = await post(init, body)
            answers.append((status, answer))
        assert server.stats.active == 2  # r-1 and r-3 only
        return answers

    answers = serving(Blocked(), test)
    assert [status for status, _ in answers] == [202, 202, 409, 409, 202, 202]
    assert answers[1][1]["rollout_id"] == "r-1" and len(answers[1][1]["tools"]) == 4
    assert "already started rollout 'r-1'" in answers[2][1]["detail"]
    assert "another idempotency_key" in answers[3][1]["detail"]


# ------------------------------------------------------------------ the trainer's side


def test_model_calls_never_follow_a_redirect_to_another_host() -> None:
    """A trainer answering 307 to elsewhere gets the rollout failed, not the key sent on."""
    with Trainer() as elsewhere:

        async def test(server: RolloutServer, url: str) -> dict[str, Any]:
            import threading
            from http.server import BaseHTTPRequestHandler

            from tests.loopback_http import LoopbackHTTPServer

            completed: dict[str, Any] = {}

            class Handler(BaseHTTPRequestHandler):
                def log_message(self, *args: Any) -> None:
                    pass

                def do_POST(self) -> None:
                    length = int(self.headers.get("Content-Length") or 0)
                    body = json.loads(self.rfile.read(length) or b"{}")
                    if self.path.endswith("/chat/completions"):
                        self.send_response(307)
                        self.send_header("Location", f"{elsewhere.url}/v1/chat/completions")
                        self.send_header("Content-Length", "0")
                        self.end_headers()
                        return
                    completed[body["rollout_id"]] = body
                    self.send_response(200)
                    self.send_header("Content-Length", "2")
                    self.end_headers()
                    self.wfile.write(b"{}")

            redirecting = LoopbackHTTPServer(("127.0.0.1", 0), Handler)
            threading.Thread(target=redirecting.serve_forever, daemon=True).start()
            try:
                trainer_url = f"http://127.0.0.1:{redirecting.server_address[1]}"
                await post(f"{url}/v1/rollout/init", init_body("redir", trainer_url))
                for _ in range(6000):
                    if "redir" in completed:
                        break
                    await asyncio.sleep(0.01)
                return completed
            finally:
                redirecting.shutdown()
                redirecting.server_close()

        completed = serving(Calculator(), test)
        assert elsewhere.state.chat_calls == []  # the key never reached the other host
    assert completed["redir"]["status"] == "ERROR"
    assert "redirect, not followed" in completed["redir"]["error_message"]


def test_trainer_answers_in_chunked_gzipped_pieces_are_read_whole() -> None:
    async def test(server: RolloutServer, url: str) -> dict[str, Any]:
        with (
            Trainer() as trainer,
            Proxy(trainer.url, Wire(piece=9, delay=0.0005, chunked=True, encoding="gzip")) as proxy,
        ):
            await post(f"{url}/v1/rollout/init", init_body("wire", proxy.url))
            await asyncio.to_thread(wait_for_completions, trainer, 1)
            return trainer.state.completed["wire"]

    completed = serving(Calculator(), test)
    assert completed["status"] == "COMPLETED"
    assert completed["final_messages"][-1]["content"] == "42"
