"""An independent OpenAI-compatible model endpoint (stdlib only; imports nothing from
osmosis-client), written from the OpenAI chat-completions reference.

``POST /v1/chat/completions`` answers like a calculator: with tools offered, a tool
call for "a op b" and then the tool's result; without, the number. ``pad`` makes each
answer's content that many characters longer (filler before the answer, so a grader
reading the last number still passes). ``"stream": true`` is answered as server-sent
events: the content in 5-character deltas, tool-call arguments in 3-character
fragments, a usage chunk when ``stream_options.include_usage``, then ``[DONE]``.
Put a ``tests.realwire.Proxy`` in front of it to see it the way a real network does.
"""

from __future__ import annotations

import json
import re
import threading
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.e2e.trainer_double import calculator_reply
from tests.loopback_http import LoopbackHTTPServer

_BINARY = re.compile(r"(-?\d+(?:\.\d+)?)\s*([-+*/])\s*(-?\d+(?:\.\d+)?)")
FILLER = "Let me work this out step by step — é, ü, 漢字, ✓ included. "


def answer(question: str) -> str:
    match = _BINARY.search(question)
    if match is None:
        return "I don't know."
    a, op, b = float(match.group(1)), match.group(2), float(match.group(3))
    value = {"+": a + b, "-": a - b, "*": a * b, "/": a / b if b else float("nan")}[op]
    return str(int(value)) if value == int(value) else str(value)


def completion(model: Any, message: dict[str, Any], id_: str = "chatcmpl-double") -> dict[str, Any]:
    """A whole ``chat.completion`` carrying ``message`` (7 + 3 tokens)."""
    return {
        "id": id_,
        "object": "chat.completion",
        "created": 1,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": "tool_calls" if message.get("tool_calls") else "stop",
            }
        ],
        "usage": {"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10},
    }


class ModelDouble:
    def __init__(self, *, pad: int = 0) -> None:
        self.pad = pad
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        double = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                double.requests.append(body)
                double.headers.append(dict(self.headers))
                message = double.reply(body.get("messages") or [], bool(body.get("tools")))
                if body.get("stream") is True:
                    self._stream(body, message)
                    return
                data = json.dumps(
                    completion(body.get("model"), message), ensure_ascii=False
                ).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _stream(self, body: dict[str, Any], message: dict[str, Any]) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream; charset=utf-8")
                self.send_header("Connection", "close")
                self.end_headers()
                self.close_connection = True
                head = {
                    "id": "chatcmpl-double",
                    "object": "chat.completion.chunk",
                    "created": 1,
                    "model": body.get("model"),
                }

                def event(choices: list[Any], **extra: Any) -> None:
                    chunk = {**head, "choices": choices, **extra}
                    self.wfile.write(f"data: {json.dumps(chunk, ensure_ascii=False)}\n\n".encode())
                    self.wfile.flush()

                event([{"index": 0, "delta": {"role": "assistant", "content": ""}}])
                content = message.get("content") or ""
                for start in range(0, len(content), 5):
                    event([{"index": 0, "delta": {"content": content[start : start + 5]}}])
                for i, call in enumerate(message.get("tool_calls") or []):
                    fn = call["function"]
                    event(
                        [
                            {
                                "index": 0,
                                "delta": {
                                    "tool_calls": [
                                        {
                                            "index": i,
                                            "id": call["id"],
                                            "type": "function",
                                            "function": {"name": fn["name"], "arguments": ""},
                                        }
                                    ]
                                },
                            }
                        ]
                    )
                    args = fn["arguments"]
                    for start in range(0, len(args), 3):
                        event(
                            [
                                {
                                    "index": 0,
                                    "delta": {
                                        "tool_calls": [
                                            {
                                                "index": i,
                                                "function": {"arguments": args[start : start + 3]},
                                            }
                                        ]
                                    },
                                }
                            ]
                        )
                finish = "tool_calls" if message.get("tool_calls") else "stop"
                event([{"index": 0, "delta": {}, "finish_reason": finish}])
                if (body.get("stream_options") or {}).get("include_usage"):
                    event(
                        [], usage={"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10}
                    )
                self.wfile.write(b"data: [DONE]\n\n")
                self.wfile.flush()

        self._server = LoopbackHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def reply(self, messages: list[dict[str, Any]], tools: bool) -> dict[str, Any]:
        if tools:
            return calculator_reply(messages)
        user = next((m for m in reversed(messages) if m.get("role") == "user"), {})
        text = answer(str(user.get("content", "")))
        filler = (FILLER * (self.pad // len(FILLER) + 1))[: self.pad]
        return {"role": "assistant", "content": filler + text}

    def __enter__(self) -> ModelDouble:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
