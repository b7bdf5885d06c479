"""Streamed chat completions: server-sent events read in any pieces, made whole.

An endpoint answers ``text/event-stream`` when asked to stream (``stream = true`` in
the sampling parameters) and some gateways always do. The bytes arrive in arbitrary
pieces — an event, a line or a UTF-8 character split across reads — so
:class:`EventDecoder` keeps what is incomplete until the rest arrives (the SSE
rules: ``\\n``, ``\\r\\n`` or ``\\r`` line ends, ``data:`` lines joined, ``:``
comments ignored). :class:`ChunkAssembler` folds ``chat.completion.chunk`` objects
into the one ``chat.completion`` the rest of the package expects: content and
reasoning concatenated (under the name the server used), OpenRouter's reasoning blocks
and tool calls merged by index, the last finish reason, usage.
"""

from __future__ import annotations

import codecs
from dataclasses import dataclass, field
from typing import Any

from osmosis_client._wire import loads
from osmosis_client.errors import ProviderRequestError


@dataclass
class Event:
    data: str
    event: str = "message"


def event_object(event: Event, where: str) -> dict[str, Any] | None:
    """The JSON object one streamed event carries: None for an empty event or another
    JSON value. An error the provider streamed — an ``error`` event, ``"type": "error"``
    (Responses, Anthropic) or an ``error`` member (chat) — raises with its message."""
    data = event.data.strip()
    if not data:
        return None
    try:
        found = loads(data)
    except ValueError as exc:
        raise ProviderRequestError(
            f"the model endpoint {where} streamed an event that is not JSON"
        ) from exc
    if isinstance(found, dict):
        failed = found.get("type") == "error" or (
            "type" not in found and found.get("error") is not None
        )
        error: Any = (found.get("error") or found) if failed or event.event == "error" else None
    else:
        error = found if event.event == "error" else None
    if error is not None:
        said = error.get("message") if isinstance(error, dict) else error
        raise ProviderRequestError(
            f"the model endpoint {where} reported an error mid-stream: {str(said or error)[:200]}"
        )
    return found if isinstance(found, dict) else None


class EventDecoder:
    """Bytes in, complete events out (``feed`` as often as pieces arrive, then ``close``)."""

    def __init__(self) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self._pending = ""
        self._data: list[str] = []
        self._event = ""
        self._skip_lf = False

    def feed(self, piece: bytes, *, final: bool = False) -> list[Event]:
        text = self._decoder.decode(piece, final)
        if self._skip_lf and text.startswith("\n"):
            text = text[1:]
        self._skip_lf = False
        self._pending += text
        events: list[Event] = []
        while True:
            cut = _line_end(self._pending)
            if cut is None:
                break
            line, ending = self._pending[:cut], self._pending[cut]
            rest = self._pending[cut + 1 :]
            if ending == "\r":
                if rest.startswith("\n"):
                    rest = rest[1:]
                elif not rest:
                    self._skip_lf = True  # the \n of a \r\n may be in the next piece
            self._pending = rest
            event = self._line(line)
            if event is not None:
                events.append(event)
        return events

    def close(self) -> list[Event]:
        """The stream ended: an event still open is delivered (lenient, unlike the spec)."""
        events = self.feed(b"", final=True)
        if self._pending:
            event = self._line(self._pending)
            self._pending = ""
            if event is not None:
                events.append(event)
        if self._data:
            events.append(self._dispatch())
        return events

    def _line(self, line: str) -> Event | None:
        if not line:
            return self._dispatch() if self._data else None
        if line.startswith(":"):
            return None
        name, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._event = value
        return None

    def _dispatch(self) -> Event:
        event = Event("\n".join(self._data), self._event or "message")
        self._data, self._event = [], ""
        return event


def _line_end(text: str) -> int | None:
    positions = [p for p in (text.find("\n"), text.find("\r")) if p >= 0]
    return min(positions) if positions else None


@dataclass
class _Call:
    """A tool call as its pieces stream in (joined once, at the end: never copied per
    piece)."""

    id: str = ""
    type: str = "function"
    name: list[str] = field(default_factory=list)
    arguments: list[str] = field(default_factory=list)

    def whole(self) -> dict[str, Any]:
        function = {"name": "".join(self.name), "arguments": "".join(self.arguments)}
        return {"id": self.id, "type": self.type, "function": function}


@dataclass
class _Detail:
    """One OpenRouter reasoning block as its pieces arrive: its text kept as a list of
    pieces (joined once, at the end: 320,000 pieces in linear time, not quadratic)."""

    fields: dict[str, Any]
    pieces: dict[str, list[str]] = field(default_factory=dict)

    def whole(self) -> dict[str, Any]:
        block = dict(self.fields)
        for name, parts in self.pieces.items():
            block[name] = "".join(parts)
        return block


@dataclass
class _Choice:
    index: int
    role: str = "assistant"
    content: list[str] = field(default_factory=list)
    reasoning: dict[str, list[str]] = field(default_factory=dict)
    tool_calls: dict[int, _Call] = field(default_factory=dict)
    finish_reason: str | None = None
    logprobs: list[Any] | None = None
    refusal: list[str] = field(default_factory=list)
    #: OpenRouter's reasoning blocks, merged by their ``index`` as pieces arrive
    details: dict[Any, _Detail] = field(default_factory=dict)

    def message(self) -> dict[str, Any]:
        message: dict[str, Any] = {"role": self.role}
        text = "".join(self.content)
        # no text beside tool calls is null, as a non-streamed answer has it
        message["content"] = text if text or not self.tool_calls else None
        for key, parts in self.reasoning.items():
            message[key] = "".join(parts)
        if self.refusal:
            message["refusal"] = "".join(self.refusal)
        if self.details:
            message["reasoning_details"] = [detail.whole() for detail in self.details.values()]
        if self.tool_calls:
            message["tool_calls"] = [self.tool_calls[i].whole() for i in sorted(self.tool_calls)]
        return message


class ChunkAssembler:
    """Folds ``chat.completion.chunk`` events into one ``chat.completion``."""

    def __init__(self, where: str) -> None:
        self.where = where
        self.head: dict[str, Any] = {}
        self.choices: dict[int, _Choice] = {}
        self.usage: dict[str, Any] | None = None
        self.done = False

    def add(self, event: Event) -> None:
        if self.done:
            return
        if event.data.strip() == "[DONE]":
            self.done = True
            return
        chunk = event_object(event, self.where)
        if chunk is None:
            return
        for key in ("id", "created", "model", "system_fingerprint"):
            if key in chunk and key not in self.head:
                self.head[key] = chunk[key]
        if isinstance(chunk.get("usage"), dict):
            self.usage = chunk["usage"]
        for position, raw in enumerate(chunk.get("choices") or []):
            if isinstance(raw, dict):
                self._choice(raw, position)

    def _choice(self, raw: dict[str, Any], position: int) -> None:
        index = raw.get("index", position)
        index = index if isinstance(index, int) else position
        choice = self.choices.setdefault(index, _Choice(index))
        delta = raw.get("delta") if isinstance(raw.get("delta"), dict) else {}
        assert isinstance(delta, dict)
        if isinstance(delta.get("role"), str) and delta["role"]:
            choice.role = delta["role"]
        if isinstance(delta.get("content"), str):
            choice.content.append(delta["content"])
        if isinstance(delta.get("refusal"), str):
            choice.refusal.append(delta["refusal"])
        for key in ("reasoning_content", "reasoning"):
            if isinstance(delta.get(key), str):
                choice.reasoning.setdefault(key, []).append(delta[key])
        for order, detail in enumerate(delta.get("reasoning_details") or []):
            if isinstance(detail, dict):
                _merge_detail(choice.details, detail, order)
        for order, call in enumerate(delta.get("tool_calls") or []):
            if isinstance(call, dict):
                _merge_call(choice.tool_calls, call, order)
        if raw.get("finish_reason"):
            choice.finish_reason = str(raw["finish_reason"])
        logprobs = raw.get("logprobs")
        if isinstance(logprobs, dict) and isinstance(logprobs.get("content"), list):
            # extended in place: an 80k-token stream with logprobs was assembled in
            # quadratic time by copying the list at every chunk (issue 43)
            if choice.logprobs is None:
                choice.logprobs = []
            choice.logprobs.extend(logprobs["content"])

    def result(self) -> dict[str, Any]:
        if not self.choices:
            raise ProviderRequestError(
                f"the model endpoint {self.where} streamed no choices"
                + ("" if self.done else " (the stream ended early)")
            )
        response: dict[str, Any] = {
            "id": self.head.get("id", ""),
            "object": "chat.completion",
            "created": self.head.get("created", 0),
            "model": self.head.get("model", ""),
            "choices": [
                {
                    "index": choice.index,
                    "message": choice.message(),
                    "finish_reason": choice.finish_reason or ("stop" if self.done else None),
                    **(
                        {"logprobs": {"content": choice.logprobs}}
                        if choice.logprobs is not None
                        else {}
                    ),
                }
                for choice in (self.choices[i] for i in sorted(self.choices))
            ],
        }
        if self.usage is not None:
            response["usage"] = self.usage
        return response


def _merge_detail(details: dict[Any, _Detail], delta: dict[str, Any], order: int) -> None:
    """A piece of an OpenRouter reasoning block: text joined to its block's (same
    ``index``), other fields (the signature) taken as they come."""
    index, kind = delta.get("index"), delta.get("type")
    key = (
        index if isinstance(index, int | str) else f"#{order}",
        kind if isinstance(kind, str) else None,
    )
    block = details.get(key)
    if block is None:
        block = details[key] = _Detail({})
    for name, value in delta.items():
        if name in TEXT_PIECES and isinstance(value, str):
            block.pieces.setdefault(name, []).append(value)
        elif value not in (None, "") or name not in block.fields:
            block.fields[name] = value


#: the fields of a reasoning block that arrive in pieces
TEXT_PIECES = ("text", "summary", "data")


def _merge_call(calls: dict[int, _Call], delta: dict[str, Any], order: int) -> None:
    index = delta.get("index", order)
    index = index if isinstance(index, int) else order
    call = calls.setdefault(index, _Call())
    if isinstance(delta.get("id"), str) and delta["id"]:
        call.id = delta["id"]
    if isinstance(delta.get("type"), str) and delta["type"]:
        call.type = delta["type"]
    function = delta.get("function")
    if isinstance(function, dict):
        if isinstance(function.get("name"), str):
            call.name.append(function["name"])
        if isinstance(function.get("arguments"), str):
            call.arguments.append(function["arguments"])
