"""A loopback OpenAI-compatible endpoint for tests and benchmarks (aiohttp, 127.0.0.1).

Runs in a background thread with its own event loop. It answers
``POST /v1/chat/completions`` like a calculator — a tool-using one when the request
offers tools (a tool call first, then the tool's result) —, records requests, and
can be told to fail (status storms, Retry-After), to be slow, or to hang.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from osmosis_client.llm.mock import calculate
from tests.e2e.model_double import completion
from tests.e2e.trainer_double import calculator_reply


@dataclass
class StubState:
    latency: float = 0.0
    failures: deque[tuple[int, dict[str, str]]] = field(default_factory=deque)
    requests: list[dict[str, Any]] = field(default_factory=list)
    #: each request's body exactly as it arrived
    bodies: list[bytes] = field(default_factory=list)
    #: what ``GET /v1/models`` lists (vLLM lists each model's root and parent)
    models: list[dict[str, Any]] = field(default_factory=list)
    model_lists: int = 0
    headers: list[dict[str, str]] = field(default_factory=list)
    in_flight: int = 0
    max_in_flight: int = 0
    record: bool = True
    required_key: str | None = None
    hang: bool = False
    replies: deque[str] = field(default_factory=deque)
    fail_after: tuple[int, int] | None = None  # (requests answered normally, status after)
    #: extra latency for requests whose last user message is one of these
    slow_prompts: dict[str, float] = field(default_factory=dict)
    #: answers instead of the calculator: (request body) → assistant message
    responder: Callable[[dict[str, Any]], dict[str, Any]] | None = None
    #: the answers' ``usage`` instead of 7 + 3 tokens (``None``: no usage at all — a
    #: hostile or minimal server); unset: the default
    usage: Any = "default"


class StubOpenAI:
    def __init__(self, *, latency: float = 0.0, record: bool = True) -> None:
        self.state = StubState(latency=latency, record=record)
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._runner: web.AppRunner | None = None
        self._closed = False
        self.port = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def fail_next(self, status: int, count: int = 1, retry_after: str | None = None) -> None:
        headers = {"Retry-After": retry_after} if retry_after else {}
        for _ in range(count):
            self.state.failures.append((status, headers))

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        s = self.state
        raw = await request.read()
        body = json.loads(raw)
        if s.record:
            s.requests.append(body)
            s.bodies.append(raw)
            s.headers.append(dict(request.headers))
        if s.required_key and request.headers.get("Authorization") != f"Bearer {s.required_key}":
            return web.json_response({"error": {"message": "invalid api key"}}, status=401)
        if s.fail_after is not None and len(s.requests) > s.fail_after[0]:
            return web.json_response(
                {"error": {"message": "provider down"}}, status=s.fail_after[1]
            )
        if s.failures:
            status, headers = s.failures.popleft()
            return web.json_response(
                {"error": {"message": f"injected {status}"}}, status=status, headers=headers
            )
        s.in_flight += 1
        s.max_in_flight = max(s.max_in_flight, s.in_flight)
        try:
            if s.hang:
                await self._release.wait()  # until the stub shuts down
            if s.latency:
                await asyncio.sleep(s.latency)
            users = [m for m in body.get("messages") or [] if m.get("role") == "user"]
            delay = s.slow_prompts.get(str(users[-1].get("content"))) if users else None
            if delay:
                await asyncio.sleep(delay)
        finally:
            s.in_flight -= 1
        messages = body.get("messages") or [{}]
        question = str(messages[-1].get("content", ""))
        message: dict[str, Any]
        if s.responder is not None:
            message = s.responder(body)
        elif body.get("tools") and not s.replies:
            message = calculator_reply(messages)
        else:
            content = s.replies.popleft() if s.replies else (calculate(question) or question)
            message = {"role": "assistant", "content": content}
        answer = completion(body.get("model"), message, "stub")
        if s.usage is None:
            del answer["usage"]
        elif s.usage != "default":
            answer["usage"] = s.usage
        return web.Response(
            text=json.dumps(answer),
            content_type="application/json",
            headers={"x-request-id": f"req-{len(s.requests)}", "x-secret-echo": "never-kept"},
        )

    async def _models(self, request: web.Request) -> web.Response:
        """``GET /v1/models``: what ``state.models`` lists (none: an unlisting server)."""
        self.state.model_lists += 1
        return web.json_response({"object": "list", "data": list(self.state.models)})

    async def _messages(self, request: web.Request) -> web.Response:
        """The Anthropic Messages API, as a calculator (written from Anthropic's docs)."""
        s = self.state
        body = await request.json()
        if s.record:
            s.requests.append(body)
            s.headers.append(dict(request.headers))
        if "max_tokens" not in body or request.headers.get("anthropic-version") is None:
            return web.json_response({"type": "error", "error": {"message": "bad"}}, status=400)
        turns = body.get("messages") or []
        last = turns[-1] if turns else {}
        blocks = last.get("content") if isinstance(last.get("content"), list) else []
        results = [b for b in blocks if isinstance(b, dict) and b.get("type") == "tool_result"]
        if results:
            content = [{"type": "text", "text": str(results[-1].get("content"))}]
            stop = "end_turn"
        else:
            text = "".join(b.get("text", "") for b in blocks if b.get("type") == "text")
            if isinstance(last.get("content"), str):
                text = last["content"]
            content = [{"type": "text", "text": calculate(text) or text}]
            stop = "end_turn"
        return web.json_response(
            {
                "id": "msg_stub",
                "type": "message",
                "role": "assistant",
                "model": body.get("model"),
                "content": content,
                "stop_reason": stop,
                "usage": {"input_tokens": 11, "output_tokens": 2},
            }
        )

    def _serve(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._release = asyncio.Event()
        app = web.Application()
        app.router.add_post("/v1/chat/completions", self._handle)
        app.router.add_post("/v1/messages", self._messages)
        app.router.add_get("/v1/models", self._models)
        self._runner = web.AppRunner(app, access_log=None)
        self._loop.run_until_complete(self._runner.setup())
        site = web.TCPSite(self._runner, "127.0.0.1", self.port or 0)
        self._loop.run_until_complete(site.start())
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self._ready.set()
        self._loop.run_forever()

    def __enter__(self) -> StubOpenAI:
        self._thread.start()
        self._ready.wait(10)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._closed:  # a test may stop it early (a replica dying mid-run)
            return
        self._closed = True

        async def shutdown() -> None:
            self._release.set()
            if self._runner is not None:
                await self._runner.cleanup()

        asyncio.run_coroutine_threadsafe(shutdown(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)


def main() -> None:  # pragma: no cover - used by bench/ as a separate process
    import argparse
    import sys
    import time

    parser = argparse.ArgumentParser(description="loopback OpenAI-compatible stub")
    parser.add_argument("--latency", type=float, default=0.0)
    args = parser.parse_args()
    with StubOpenAI(latency=args.latency, record=False) as stub:
        sys.stdout.write(f"{stub.url}\n")
        sys.stdout.flush()
        while True:
            time.sleep(3600)


if __name__ == "__main__":  # pragma: no cover
    main()


@contextlib.contextmanager
def serve_app(app: web.Application) -> Iterator[str]:
    """Any aiohttp application on loopback (a thread and loop of its own) while the block
    runs: its base URL."""
    loop = asyncio.new_event_loop()
    ready = threading.Event()
    found: dict[str, Any] = {}

    def serve() -> None:
        asyncio.set_event_loop(loop)
        runner = web.AppRunner(app, access_log=None)
        loop.run_until_complete(runner.setup())
        site = web.TCPSite(runner, "127.0.0.1", 0)
        loop.run_until_complete(site.start())
        found["port"] = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        found["runner"] = runner
        ready.set()
        loop.run_forever()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    assert ready.wait(10), "the app did not start"
    try:
        yield f"http://127.0.0.1:{found['port']}"
    finally:
        asyncio.run_coroutine_threadsafe(found["runner"].cleanup(), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
