"""A reasoning model on loopback, speaking each provider's documented wire (standard
library only; imports nothing from osmosis-client), built from ../shared/model-apis.md:

- ``POST /v1/responses``: OpenAI's Responses API — reasoning items with a summary and
  ``encrypted_content`` (when ``include`` asks), function calls, ``incomplete``,
  ``failed``, refusals; streamed as ``response.*`` events (``event:`` lines, no
  ``[DONE]``; with ``flavor="vllm"`` raw reasoning text, ``data:`` only, then ``[DONE]``).
  A ``function_call_output`` whose call was answered with reasoning is refused (400) unless
  that reasoning item comes back, unchanged, before its call.
- ``POST /v1/messages``: Anthropic Messages — ``thinking`` blocks with signatures (and a
  ``redacted_thinking`` block when the prompt says "redact"), ``tool_use``, stop reasons,
  cache tokens; streamed as ``message_start`` … ``message_stop``. With thinking on, a
  tool result is refused (400) unless the assistant turn with the ``tool_use`` starts with
  its thinking blocks, signatures intact.
- ``POST /v1/chat/completions`` in the peer's ``flavor``: ``vllm`` (``reasoning``, no
  reasoning-token count), ``sglang`` (``reasoning_content``), ``deepseek``
  (``reasoning_content``, required back on tool-call turns, ``prompt_cache_hit_tokens``),
  ``openrouter`` (``reasoning`` + signed ``reasoning_details``, required back on
  tool-call turns, ``usage.cost``), ``openai`` (no reasoning text, a reasoning-token
  count), ``raw`` (no reasoning parser: ``<think>…</think>answer`` in the content) and
  ``raw-open`` (Qwen3.5's template: ``…</think>answer``).

The model is a calculator: "What is A op B?" — with tools offered it calls the tool,
then answers with the tool's result; without, it answers at once. A max-tokens limit
under 16 cuts the answer (only reasoning comes back); "forbidden" is refused; "filtered"
is stopped by a content filter; "explode" fails (Responses ``status: failed``).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.loopback_http import LoopbackHTTPServer

SECRET = b"peer-secret"
_QUESTION = re.compile(r"What is (-?\d+) *([-+*/]) *(-?\d+)")
_TOOLS = {"+": "add", "-": "subtract", "*": "multiply", "/": "divide"}
_OPS = {
    "add": lambda a, b: a + b,
    "subtract": lambda a, b: a - b,
    "multiply": lambda a, b: a * b,
    "divide": lambda a, b: a / b,
}


def sign(text: str) -> str:
    return hmac.new(SECRET, text.encode(), hashlib.sha256).hexdigest()


def _number(value: float) -> str:
    return str(int(value)) if value == int(value) else f"{value:g}"


class Turn:
    """What the calculator does next, from the conversation's plain facts."""

    def __init__(self, question: str, tools: bool, result: str | None, limit: int | None) -> None:
        self.question = question
        found = _QUESTION.search(question)
        self.a, self.op, self.b = (int(found[1]), found[2], int(found[3])) if found else (0, "+", 0)
        self.tool = _TOOLS[self.op]
        self.call = tools and result is None and found is not None
        self.result = result
        self.truncated = limit is not None and limit < 16
        self.refused = "forbidden" in question
        self.filtered = "filtered" in question
        self.failed = "explode" in question

    @property
    def thinking(self) -> str:
        if self.call:
            return f"I should use the {self.tool} tool on {self.a} and {self.b}."
        if self.result is not None:
            return f"The tool returned {self.result}."
        return f"{self.a} {self.op} {self.b} is {self.value}."

    @property
    def value(self) -> str:
        return self.result or _number(_OPS[self.tool](self.a, self.b))

    @property
    def answer(self) -> str:
        return f"The answer is {self.value}."


class ReasoningPeer:
    """The peer (see the module). ``requests``: ``(path, body)`` of every request."""

    def __init__(self, flavor: str = "openai") -> None:
        self.flavor = flavor
        self.requests: list[tuple[str, dict[str, Any]]] = []
        self.refused: list[str] = []  # why each 400 was answered
        self._calls = 0
        #: call id → (the reasoning item's id, its encrypted content) it was answered with
        self._issued: dict[str, tuple[str, str | None]] = {}
        peer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                return None

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                peer.requests.append((self.path, body))
                try:
                    if self.path.endswith("/responses"):
                        status, answer = peer._responses(body)
                    elif self.path.endswith("/messages"):
                        status, answer = peer._messages(body)
                    elif self.path.endswith("/chat/completions"):
                        status, answer = peer._chat(body)
                    else:
                        status, answer = 404, {"detail": "Not Found"}
                except _Refused as refusal:
                    peer.refused.append(refusal.message)
                    status, answer = 400, refusal.body
                if isinstance(answer, list):  # a stream: its events
                    self._events(answer)
                else:
                    self._json(status, answer)

            def _json(self, status: int, answer: Any) -> None:
                data = json.dumps(answer).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _events(self, events: list[bytes]) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                for event in events:  # each in two pieces: split mid-line
                    for piece in (event[: len(event) // 2], event[len(event) // 2 :]):
                        if piece:
                            self.wfile.write(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
                    self.wfile.flush()
                self.wfile.write(b"0\r\n\r\n")

        self.server = LoopbackHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def __enter__(self) -> ReasoningPeer:
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    def bodies(self, suffix: str) -> list[dict[str, Any]]:
        return [body for path, body in self.requests if path.endswith(suffix)]

    def _call_id(self) -> str:
        self._calls += 1
        return f"call_{self._calls}"

    # ------------------------------------------------------------ Responses API

    def _responses(self, body: dict[str, Any]) -> tuple[int, Any]:
        items = body.get("input") or []
        items = [{"role": "user", "content": items}] if isinstance(items, str) else items
        self._check_reasoning_replayed(items)
        question, result = "", None
        for item in items:
            if item.get("role") == "user":
                question, result = _text(item.get("content")), None
            elif item.get("type") == "function_call_output":
                result = str(item.get("output"))
        turn = Turn(question, bool(body.get("tools")), result, body.get("max_output_tokens"))
        encrypted = "reasoning.encrypted_content" in (body.get("include") or [])
        summary = (body.get("reasoning") or {}).get("summary") is not None
        rid = f"rs_{self._calls + 1}"
        reasoning: dict[str, Any] = {"type": "reasoning", "id": rid, "summary": []}
        if self.flavor == "vllm":  # raw text, never encrypted
            reasoning["content"] = [{"type": "reasoning_text", "text": turn.thinking}]
        else:
            if summary:
                reasoning["summary"] = [{"type": "summary_text", "text": turn.thinking}]
            if encrypted:
                reasoning["encrypted_content"] = f"enc:{rid}:{sign(rid + turn.thinking)}"
        output: list[dict[str, Any]] = [reasoning]
        status, incomplete, error = "completed", None, None
        if turn.failed:
            status, output = "failed", []
            error = {"code": "server_error", "message": "The model exploded."}
        elif turn.truncated:
            status, incomplete = "incomplete", {"reason": "max_output_tokens"}
        elif turn.filtered:
            status, incomplete = "incomplete", {"reason": "content_filter"}
        elif turn.refused:
            output.append(_message([{"type": "refusal", "refusal": "I can't help with that."}]))
        elif turn.call:
            call = self._call_id()
            self._issued[call] = (rid, reasoning.get("encrypted_content"))
            output.append(
                {
                    "type": "function_call",
                    "id": f"fc_{self._calls}",
                    "call_id": call,
                    "name": turn.tool,
                    "arguments": json.dumps({"a": turn.a, "b": turn.b}),
                    "status": "completed",
                }
            )
        else:
            output.append(
                _message([{"type": "output_text", "text": turn.answer, "annotations": []}])
            )
        sent = len(items)
        response = {
            "id": f"resp_{self._calls}",
            "object": "response",
            "created_at": 1746989954.0,
            "model": body.get("model"),
            "status": status,
            "error": error,
            "incomplete_details": incomplete,
            "output": output,
            "store": body.get("store", True),
            "usage": {
                "input_tokens": 50 + 10 * sent,
                "input_tokens_details": {"cached_tokens": 32 if sent > 1 else 0},
                "output_tokens": 40,
                "output_tokens_details": {"reasoning_tokens": 24},
                "total_tokens": 90 + 10 * sent,
            },
        }
        if not body.get("stream"):
            return 200, response
        return 200, self._responses_events(response)

    def _check_reasoning_replayed(self, items: list[dict[str, Any]]) -> None:
        for position, item in enumerate(items):
            if item.get("type") != "function_call" or item.get("call_id") not in self._issued:
                continue
            rid, encrypted = self._issued[item["call_id"]]
            before = items[position - 1] if position else {}
            ok = before.get("type") == "reasoning" and before.get("id") == rid
            if ok and encrypted is not None:
                ok = before.get("encrypted_content") == encrypted
            if not ok:
                raise _Refused(
                    f"Item for call '{item['call_id']}' of type 'function_call' was provided "
                    f"without its required 'reasoning' item: '{rid}'.",
                    openai=True,
                )

    def _responses_events(self, response: dict[str, Any]) -> list[bytes]:
        vllm = self.flavor == "vllm"
        events: list[dict[str, Any]] = [
            {
                "type": "response.created",
                "response": {**response, "output": [], "status": "in_progress"},
            }
        ]
        for index, item in enumerate(response["output"]):
            events.append(
                {
                    "type": "response.output_item.added",
                    "output_index": index,
                    "item": {**item, "encrypted_content": None},
                }
            )
            if item["type"] == "message":
                for part in item["content"]:
                    text = part.get("text") or ""
                    for piece in (text[:5], text[5:]):
                        events.append(
                            {
                                "type": "response.output_text.delta",
                                "item_id": item["id"],
                                "output_index": index,
                                "content_index": 0,
                                "delta": piece,
                            }
                        )
            events.append(
                {"type": "response.output_item.done", "output_index": index, "item": item}
            )
        terminal = {
            "completed": "response.completed",
            "incomplete": "response.incomplete",
            "failed": "response.failed",
        }[response["status"]]
        # a terminal response without its output: the items are the done events'
        events.append({"type": terminal, "response": {**response, "output": []}})
        frames = []
        for number, event in enumerate(events):
            event["sequence_number"] = number
            head = b"" if vllm else f"event: {event['type']}\n".encode()
            frames.append(head + b"data: " + json.dumps(event).encode() + b"\n\n")
        if vllm:
            frames.append(b"data: [DONE]\n\n")
        return frames

    # ------------------------------------------------------------ Anthropic Messages

    def _messages(self, body: dict[str, Any]) -> tuple[int, Any]:
        thinking_on = (body.get("thinking") or {}).get("type") in ("enabled", "adaptive")
        turns = body.get("messages") or []
        question, result = "", None
        for number, turn in enumerate(turns):
            blocks = turn.get("content")
            blocks = [{"type": "text", "text": blocks}] if isinstance(blocks, str) else blocks
            if turn.get("role") == "user":
                results = [b for b in blocks if b.get("type") == "tool_result"]
                if results:
                    result = _text(results[-1].get("content"))
                    if thinking_on:
                        self._check_thinking_kept(turns[number - 1], number - 1)
                else:
                    question, result = _text(blocks), None
        turn_ = Turn(question, bool(body.get("tools")), result, body.get("max_tokens"))
        content: list[dict[str, Any]] = []
        if thinking_on:
            content.append(
                {"type": "thinking", "thinking": turn_.thinking, "signature": sign(turn_.thinking)}
            )
            if "redact" in question:
                content.append({"type": "redacted_thinking", "data": f"opaque:{sign('r')}"})
        stop = "end_turn"
        if turn_.truncated:
            stop = "max_tokens"
        elif turn_.refused:
            stop = "refusal"
            content.append({"type": "text", "text": "I can't help with that."})
        elif turn_.call:
            content.append(
                {
                    "type": "tool_use",
                    "id": f"toolu_{self._call_id()}",
                    "name": turn_.tool,
                    "input": {"a": turn_.a, "b": turn_.b},
                }
            )
            stop = "tool_use"
        else:
            content.append({"type": "text", "text": turn_.answer})
        usage = {
            "input_tokens": 20,
            "cache_creation_input_tokens": 100 if len(turns) == 1 else 0,
            "cache_read_input_tokens": 0 if len(turns) == 1 else 100,
            "output_tokens": 60,
            "output_tokens_details": {"thinking_tokens": 45 if thinking_on else 0},
        }
        message = {
            "id": f"msg_{self._calls}",
            "type": "message",
            "role": "assistant",
            "model": body.get("model"),
            "content": content,
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": usage,
        }
        if not body.get("stream"):
            return 200, message
        return 200, _anthropic_events(message)

    def _check_thinking_kept(self, turn: dict[str, Any], number: int) -> None:
        blocks = turn.get("content") if isinstance(turn.get("content"), list) else []
        first = blocks[0] if blocks else {}
        kind = first.get("type")
        if kind not in ("thinking", "redacted_thinking"):
            raise _Refused(
                f"messages.{number}.content.0.type: Expected `thinking` or "
                f"`redacted_thinking`, but found `{kind}`. When `thinking` is enabled, a final "
                "`assistant` message must start with a thinking block"
            )
        for block in blocks:
            if block.get("type") == "thinking" and block.get("signature") != sign(
                str(block.get("thinking"))
            ):
                raise _Refused(f"messages.{number}: Invalid `signature` in `thinking` block")

    # ------------------------------------------------------------ chat completions

    def _chat(self, body: dict[str, Any]) -> tuple[int, Any]:
        messages = body.get("messages") or []
        self._check_chat_replay(messages)
        question, result = "", None
        for message in messages:
            if message.get("role") == "user":
                question, result = _text(message.get("content")), None
            elif message.get("role") == "tool":
                result = _text(message.get("content"))
        limit = body.get("max_completion_tokens") or body.get("max_tokens")
        turn = Turn(question, bool(body.get("tools")), result, limit)
        thinking_off = (body.get("chat_template_kwargs") or {}).get("enable_thinking") is False
        thinking = "" if thinking_off else turn.thinking
        message: dict[str, Any] = {"role": "assistant", "content": None}
        finish = "stop"
        if turn.truncated:
            finish = "length"
        elif turn.filtered:
            finish = "content_filter"
        elif turn.refused:
            message["refusal"] = "I can't help with that."
        elif turn.call:
            message["tool_calls"] = [
                {
                    "id": self._call_id(),
                    "type": "function",
                    "function": {
                        "name": turn.tool,
                        "arguments": json.dumps({"a": turn.a, "b": turn.b}),
                    },
                }
            ]
            finish = "tool_calls"
        else:
            message["content"] = turn.answer
        if thinking:
            self._reason(message, thinking)
        usage: dict[str, Any] = {
            "prompt_tokens": 30 + 10 * len(messages),
            "completion_tokens": 50,
            "total_tokens": 80 + 10 * len(messages),
        }
        if self.flavor == "openai":
            usage["prompt_tokens_details"] = {"cached_tokens": 16 if len(messages) > 2 else 0}
            usage["completion_tokens_details"] = {"reasoning_tokens": 35}
        elif self.flavor == "deepseek":
            usage["prompt_cache_hit_tokens"] = 20 if len(messages) > 2 else 0
            usage["prompt_cache_miss_tokens"] = (
                usage["prompt_tokens"] - usage["prompt_cache_hit_tokens"]
            )
            usage["completion_tokens_details"] = {"reasoning_tokens": 30}
        elif self.flavor == "openrouter":
            usage["completion_tokens_details"] = {"reasoning_tokens": 30}
            usage["cost"] = 0.00042
        answer = {
            "id": f"chatcmpl-{self._calls}",
            "object": "chat.completion",
            "created": 1,
            "model": body.get("model"),
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": usage,
        }
        if not body.get("stream"):
            return 200, answer
        return 200, _chat_events(
            answer, bool((body.get("stream_options") or {}).get("include_usage"))
        )

    def _reason(self, message: dict[str, Any], thinking: str) -> None:
        flavor = self.flavor
        if flavor == "vllm":
            message["reasoning"] = thinking
        elif flavor in ("sglang", "deepseek"):
            message["reasoning_content"] = thinking
        elif flavor == "openrouter":
            message["reasoning"] = thinking
            message["reasoning_details"] = [
                {
                    "type": "reasoning.text",
                    "text": thinking,
                    "signature": sign(thinking),
                    "format": "anthropic-claude-v1",
                    "index": 0,
                }
            ]
        elif flavor == "raw":
            message["content"] = f"<think>\n{thinking}\n</think>\n\n{message['content'] or ''}"
        elif flavor == "raw-open":
            message["content"] = f"{thinking}\n</think>\n\n{message['content'] or ''}"

    def _check_chat_replay(self, messages: list[dict[str, Any]]) -> None:
        for number, message in enumerate(messages):
            if message.get("role") != "assistant":
                continue
            calls = bool(message.get("tool_calls"))
            if (
                self.flavor == "deepseek"
                and calls
                and not isinstance(message.get("reasoning_content"), str)
            ):
                raise _Refused(
                    "The reasoning_content in the thinking mode must be passed back to the API.",
                    openai=True,
                )
            if self.flavor == "openrouter" and calls:
                details = message.get("reasoning_details") or []
                if not any(d.get("signature") == sign(str(d.get("text"))) for d in details):
                    raise _Refused(
                        f"messages.{number}: the reasoning_details of a tool-calling turn must "
                        "come back unchanged",
                        openai=True,
                    )
            if self.flavor == "openai" and any(
                k in message for k in ("reasoning_content", "thinking_blocks", "reasoning_items")
            ):
                raise _Refused(
                    f"Additional properties are not allowed in messages.{number}", openai=True
                )


class _Refused(Exception):
    def __init__(self, message: str, *, openai: bool = False) -> None:
        super().__init__(message)
        self.message = message
        if openai:
            self.body: dict[str, Any] = {
                "error": {
                    "message": message,
                    "type": "invalid_request_error",
                    "param": None,
                    "code": None,
                }
            }
        else:
            self.body = {
                "type": "error",
                "error": {"type": "invalid_request_error", "message": message},
            }


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            str(p.get("text") or p.get("content") or "") for p in content if isinstance(p, dict)
        )
    return "" if content is None else str(content)


def _message(content: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "type": "message",
        "id": "msg_1",
        "role": "assistant",
        "status": "completed",
        "content": content,
    }


def _frames(events: Iterator[tuple[str | None, dict[str, Any]]]) -> list[bytes]:
    out = []
    for name, data in events:
        head = f"event: {name}\n".encode() if name else b""
        out.append(head + b"data: " + json.dumps(data).encode() + b"\n\n")
    return out


def _anthropic_events(message: dict[str, Any]) -> list[bytes]:
    def events() -> Iterator[tuple[str | None, dict[str, Any]]]:
        usage = message["usage"]
        start = {
            **message,
            "content": [],
            "stop_reason": None,
            "usage": {**usage, "output_tokens": 1},
        }
        yield "message_start", {"type": "message_start", "message": start}
        yield "ping", {"type": "ping"}
        for index, block in enumerate(message["content"]):
            kind = block["type"]
            if kind == "thinking":
                yield (
                    "content_block_start",
                    {
                        "type": "content_block_start",
                        "index": index,
                        "content_block": {"type": "thinking", "thinking": "", "signature": ""},
                    },
                )
                text = block["thinking"]
                for piece in (text[:7], text[7:]):
                    yield (
                        "content_block_delta",
                        {
                            "type": "content_block_delta",
                            "index": index,
                            "delta": {"type": "thinking_delta", "thinking": piece},
                        },
                    )
                yield (
                    "content_block_delta",
                    {
                        "type": "content_block_delta",
                        "index": index,
                        "delta": {"type": "signature_delta", "signature": block["signature"]},
                    },
                )
            elif kind == "text":
                yield (
                    "content_block_start",
                    {
                        "type": "content_block_start",
                        "index": index,
                        "content_block": {"type": "text", "text": ""},
                    },
                )
                text = block["text"]
                for piece in (text[:4], text[4:]):
                    yield (
                        "content_block_delta",
                        {
                            "type": "content_block_delta",
                            "index": index,
                            "delta": {"type": "text_delta", "text": piece},
                        },
                    )
            elif kind == "tool_use":
                yield (
                    "content_block_start",
                    {
                        "type": "content_block_start",
                        "index": index,
                        "content_block": {**block, "input": {}},
                    },
                )
                raw = json.dumps(block["input"])
                for piece in (raw[:3], raw[3:]):
                    yield (
                        "content_block_delta",
                        {
                            "type": "content_block_delta",
                            "index": index,
                            "delta": {"type": "input_json_delta", "partial_json": piece},
                        },
                    )
            else:  # redacted_thinking arrives whole
                yield (
                    "content_block_start",
                    {"type": "content_block_start", "index": index, "content_block": block},
                )
            yield "content_block_stop", {"type": "content_block_stop", "index": index}
        yield (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
                "usage": usage,
            },
        )
        yield "message_stop", {"type": "message_stop"}

    return _frames(events())


def _chat_events(answer: dict[str, Any], include_usage: bool) -> list[bytes]:
    def events() -> Iterator[tuple[str | None, dict[str, Any]]]:
        choice = answer["choices"][0]
        message = choice["message"]
        base = {
            "id": answer["id"],
            "object": "chat.completion.chunk",
            "created": 1,
            "model": answer["model"],
        }

        def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
            return {
                **base,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
                "usage": None,
            }

        yield None, chunk({"role": "assistant", "content": ""})
        for key in ("reasoning_content", "reasoning"):
            text = message.get(key)
            if text:
                for piece in (text[:6], text[6:]):
                    yield None, chunk({key: piece})
        for detail in message.get("reasoning_details") or []:
            yield None, chunk({"reasoning_details": [detail]})
        text = message.get("content") or ""
        for piece in (text[:5], text[5:]) if text else ():
            yield None, chunk({"content": piece})
        if message.get("refusal"):
            yield None, chunk({"refusal": message["refusal"]})
        for index, call in enumerate(message.get("tool_calls") or []):
            arguments = call["function"]["arguments"]
            yield (
                None,
                chunk(
                    {
                        "tool_calls": [
                            {
                                "index": index,
                                "id": call["id"],
                                "type": "function",
                                "function": {
                                    "name": call["function"]["name"],
                                    "arguments": arguments[:4],
                                },
                            }
                        ]
                    }
                ),
            )
            yield (
                None,
                chunk({"tool_calls": [{"index": index, "function": {"arguments": arguments[4:]}}]}),
            )
        yield None, chunk({}, choice["finish_reason"])
        if include_usage:
            yield None, {**base, "choices": [], "usage": answer["usage"]}

    return [*_frames(events()), b"data: [DONE]\n\n"]


__all__ = ["ReasoningPeer", "Turn", "sign"]
