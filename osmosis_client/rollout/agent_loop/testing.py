"""0.2's ``osmosis_ai.rollout.testing``: a mock trainer for testing agent loops without a
real one, as the SDK's "Testing Your Agent" guide uses it:

    tracker = RolloutCompletionTracker()
    trainer = TestClient(create_mock_trainer_app(tracker=tracker))
    patch_httpx_for_mock_trainer(trainer, monkeypatch)   # the rollout server's calls go to it
    with TestClient(app) as client:                       # app = create_app(MyLoop())
        client.post("/v1/rollout/init", json={..., "server_url": "http://trainer"})
    assert tracker.wait(timeout=5.0) and tracker.responses[0]["status"] == "COMPLETED"

The mock trainer is a plain ASGI application (no FastAPI needed to build it; any ASGI
test client drives it). ``patch_httpx_for_mock_trainer`` routes what a rollout server
sends its trainer — model turns and the completion callback — to that client: our
server's calls (which go through aiohttp, not httpx) and ``httpx.AsyncClient.post`` both.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, MutableMapping
from dataclasses import dataclass, field
from typing import Any

ToolCalls = list[dict[str, Any]]
TRAINER_PATHS = ("/v1/chat/completions", "/v1/rollout/completed")


def fake_token_ids(text: str) -> list[int]:
    """One fake token id per character (deterministic)."""
    return list(range(len(text)))


def fake_prompt_token_ids(messages: list[dict[str, Any]]) -> list[int]:
    """Ten fake prompt tokens per message (at least ten)."""
    return list(range(10 * max(1, len(messages))))


@dataclass
class RolloutCompletionTracker:
    """The completion callbacks the mock trainer received (thread-safe)."""

    event: threading.Event = field(default_factory=threading.Event)
    responses: list[dict[str, Any]] = field(default_factory=list)

    def record(self, response: dict[str, Any]) -> None:
        self.responses.append(response)
        self.event.set()

    def clear(self) -> None:
        self.responses.clear()
        self.event.clear()

    def wait(self, timeout: float = 5.0) -> bool:
        """True once a completion arrived, False after ``timeout`` seconds."""
        return self.event.wait(timeout=timeout)


_CALCULATOR_WORDS = ("calculate", "add", "sum", "plus", "subtract", "multiply", "divide")


def _should_use_tools(last_message: dict[str, Any]) -> bool:
    """A user turn about arithmetic gets a tool call (0.2's heuristic)."""
    content = last_message.get("content")
    return (
        last_message.get("role") == "user"
        and isinstance(content, str)
        and any(word in content.lower() for word in _CALCULATOR_WORDS)
    )


def _completion(
    body: dict[str, Any], generator: Callable[[dict[str, Any]], ToolCalls | None] | None
) -> dict[str, Any]:
    messages = list(body.get("messages") or [])
    last = messages[-1] if messages else {"role": "user", "content": ""}
    if generator is not None:
        tool_calls = generator(last)
    elif _should_use_tools(last):
        add = {"name": "add", "arguments": '{"a": 5, "b": 3}'}
        tool_calls = [{"id": "call_mock_add", "type": "function", "function": add}]
    else:
        tool_calls = None
    if tool_calls:
        message: dict[str, Any] = {
            "role": "assistant",
            "content": "I'll help you with that calculation.",
            "tool_calls": tool_calls,
        }
    elif last.get("role") == "tool":
        message = {"role": "assistant", "content": "The calculation is complete."}
    else:
        message = {"role": "assistant", "content": "OK."}
    answer_ids = fake_token_ids(str(message.get("content") or ""))
    prompt_ids = fake_prompt_token_ids(messages)
    return {
        "id": body.get("rollout_id") or "mock",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.get("model") or "mock-model",
        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
        "usage": {
            "prompt_tokens": len(prompt_ids),
            "completion_tokens": len(answer_ids),
            "total_tokens": len(prompt_ids) + len(answer_ids),
        },
        "token_ids": answer_ids,
        "logprobs": [0.0] * len(answer_ids),
        "prompt_token_ids": prompt_ids,
    }


def create_mock_trainer_app(
    tracker: RolloutCompletionTracker | None = None,
    tool_call_generator: Callable[[dict[str, Any]], ToolCalls | None] | None = None,
) -> Callable[..., Any]:
    """An ASGI mock trainer: ``POST /v1/chat/completions`` (deterministic answers: a
    tool call for arithmetic, or what ``tool_call_generator(last_message)`` returns),
    ``POST /v1/rollout/completed`` (recorded in ``tracker``), ``GET
    /v1/rollout/completed/{rollout_id}``, ``GET /health``."""
    completed: dict[str, dict[str, Any]] = {}

    def handle(method: str, path: str, body: Any) -> tuple[int, Any]:
        if method == "GET" and path == "/health":
            return 200, {"status": "healthy", "service": "mock-trainer"}
        if method == "GET" and path.startswith("/v1/rollout/completed/"):
            return 200, completed.get(path.rsplit("/", 1)[1], {})
        if not isinstance(body, dict):
            return 422, {"detail": "the body must be a JSON object"}
        if method == "POST" and path == "/v1/chat/completions":
            return 200, _completion(body, tool_call_generator)
        if method == "POST" and path == "/v1/rollout/completed":
            payload = {k: v for k, v in body.items() if v is not None}
            completed[str(body.get("rollout_id"))] = payload
            if tracker is not None:
                tracker.record(payload)
            return 200, {"status": "ok"}
        return 404, {"detail": "Not Found"}

    async def app(scope: MutableMapping[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            if scope["type"] == "lifespan":
                while (await receive())["type"] != "lifespan.shutdown":
                    await send({"type": "lifespan.startup.complete"})
                await send({"type": "lifespan.shutdown.complete"})
            return
        raw = b""
        while True:
            message = await receive()
            raw += message.get("body", b"")
            if not message.get("more_body"):
                break
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        status, answer = handle(scope["method"], scope["path"], body)
        data = json.dumps(answer).encode()
        head = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(data))]
        await send({"type": "http.response.start", "status": status, "headers": head})
        await send({"type": "http.response.body", "body": data})

    return app


def patch_httpx_for_mock_trainer(client: Any, monkeypatch: Any) -> None:
    """Send what a rollout server posts to its trainer (model turns, the completion
    callback) to ``client`` — a test client of :func:`create_mock_trainer_app` — for the
    rest of the test: this package's server, and ``httpx.AsyncClient.post`` as 0.2 did."""
    from osmosis_client.rollout.agent_loop import trainer

    def route(url: str, data: bytes, headers: dict[str, str]) -> tuple[int, bytes] | None:
        path = next((p for p in TRAINER_PATHS if p in url), None)
        if path is None:
            return None
        response = client.post(path, content=data, headers=headers)
        return int(response.status_code), bytes(response.content)

    monkeypatch.setattr(trainer, "ROUTE", route)
    try:
        import httpx
    except ImportError:  # pragma: no cover - httpx is a dependency
        return
    original = httpx.AsyncClient.post

    async def post(self: Any, url: Any, **kwargs: Any) -> Any:
        path = next((p for p in TRAINER_PATHS if p in str(url)), None)
        if path is None:
            return await original(self, url, **kwargs)
        answer = client.post(path, **kwargs)
        return httpx.Response(
            answer.status_code, content=answer.content, request=httpx.Request("POST", str(url))
        )

    monkeypatch.setattr(httpx.AsyncClient, "post", post)


__all__ = [
    "RolloutCompletionTracker",
    "create_mock_trainer_app",
    "fake_prompt_token_ids",
    "fake_token_ids",
    "patch_httpx_for_mock_trainer",
]
