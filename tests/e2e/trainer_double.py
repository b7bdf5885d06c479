"""An independent loopback trainer for 0.2 rollout servers (rollout-protocol.md part A).

Standard library only — it imports nothing from osmosis-client, so a test that
passes against it checks the wire protocol, not our own reading of it. It answers
the server's model calls as a deterministic calculator model (a tool call first,
then the tool's result), records every model call and completion callback, and can
fail on purpose.
"""

from __future__ import annotations

import json
import re
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.loopback_http import LoopbackHTTPServer

_BINARY = re.compile(r"(-?\d+(?:\.\d+)?)\s*([-+*/])\s*(-?\d+(?:\.\d+)?)")
_TOOL_OF = {"+": "add", "-": "subtract", "*": "multiply", "/": "divide"}


@dataclass
class TrainerState:
    chat_calls: list[dict[str, Any]] = field(default_factory=list)
    chat_auth: list[str | None] = field(default_factory=list)
    completed: dict[str, dict[str, Any]] = field(default_factory=dict)
    completed_auth: list[str | None] = field(default_factory=list)
    chat_failures: int = 0  # answer this many model calls with 500 first
    chat_status: int | None = None  # answer every model call with this status
    completion_failures: int = 0


def calculator_reply(messages: list[dict[str, Any]]) -> dict[str, Any]:
    """The model's answer: call the tool for "a op b", then repeat the tool's result."""
    if messages and messages[-1].get("role") == "tool":
        return {"role": "assistant", "content": str(messages[-1].get("content"))}
    user = next((m for m in reversed(messages) if m.get("role") == "user"), {})
    match = _BINARY.search(str(user.get("content", "")))
    if match is None:
        return {"role": "assistant", "content": "I don't know."}
    a, op, b = match.groups()
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": f"call_{len(messages)}",
                "type": "function",
                "function": {"name": _TOOL_OF[op], "arguments": json.dumps({"a": a, "b": b})},
            }
        ],
    }


class Trainer:
    def __init__(self) -> None:
        self.state = TrainerState()
        self.lock = threading.Lock()
        self.changed = threading.Condition(self.lock)
        trainer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _reply(self, status: int, body: Any) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                auth = self.headers.get("Authorization")
                if self.path == "/v1/chat/completions":
                    self._chat(body, auth)
                elif self.path == "/v1/rollout/completed":
                    self._completed(body, auth)
                else:
                    self._reply(404, {"detail": "Not Found"})

            def _chat(self, body: dict[str, Any], auth: str | None) -> None:
                with trainer.changed:
                    s = trainer.state
                    s.chat_calls.append(body)
                    s.chat_auth.append(auth)
                    if s.chat_status is not None:
                        status: int | None = s.chat_status
                    elif s.chat_failures > 0:
                        s.chat_failures -= 1
                        status = 500
                    else:
                        status = None
                    trainer.changed.notify_all()
                if status is not None:
                    self._reply(status, {"error": {"message": "trainer failure"}})
                    return
                message = calculator_reply(body.get("messages") or [])
                self._reply(
                    200,
                    {
                        "choices": [
                            {
                                "message": message,
                                "finish_reason": "tool_calls"
                                if "tool_calls" in message
                                else "stop",
                            }
                        ],
                        "usage": {"prompt_tokens": 10, "completion_tokens": 3, "total_tokens": 13},
                    },
                )

            def _completed(self, body: dict[str, Any], auth: str | None) -> None:
                with trainer.changed:
                    s = trainer.state
                    if s.completion_failures > 0:
                        s.completion_failures -= 1
                        fail = True
                    else:
                        fail = False
                        s.completed[body["rollout_id"]] = body
                        s.completed_auth.append(auth)
                    trainer.changed.notify_all()
                self._reply(500 if fail else 200, {"ok": not fail})

        self.server = LoopbackHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> Trainer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def wait_completed(self, rollout_id: str, timeout: float = 20.0) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        with self.changed:
            while rollout_id not in self.state.completed:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"no completion callback for {rollout_id}")
                self.changed.wait(left)
            return self.state.completed[rollout_id]


def post(url: str, body: Any, headers: dict[str, str] | None = None) -> tuple[int, Any]:
    """A POST as a trainer makes it: (status, decoded JSON body)."""
    data = json.dumps(body).encode() if not isinstance(body, bytes) else body
    request = urllib.request.Request(
        url, data=data, headers={"Content-Type": "application/json", **(headers or {})}
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read() or b"null")
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read() or b"null")


def get(url: str, headers: dict[str, str] | None = None) -> tuple[int, Any]:
    request = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read() or b"null")
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read() or b"null")


def init_body(
    rollout_id: str, trainer_url: str, question: str = "What is 6 * 7?", **extra: Any
) -> dict[str, Any]:
    return {
        "rollout_id": rollout_id,
        "server_url": trainer_url,
        "messages": [
            {"role": "system", "content": "You are a calculator."},
            {"role": "user", "content": question},
        ],
        "completion_params": {"temperature": 0.2},
        "api_key": "trainer-secret",
        **extra,
    }
