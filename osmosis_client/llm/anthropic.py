"""``api_client_type = "anthropic_messages"``: the Anthropic Messages API behind the
chat-completions interface everything else in osmosis-client speaks.

A chat-completions request becomes ``POST {url}/messages`` (system messages →
``system``; an assistant turn → its ``thinking_blocks`` first, unchanged, then its text
and a ``tool_use`` block per tool call; ``tool`` messages → a user turn of
``tool_result`` blocks; function tools → ``input_schema`` tools; ``stop`` →
``stop_sequences``; ``max_tokens`` defaults to 4096, the API requires it;
``reasoning_effort`` → ``thinking``, see :func:`thinking_for`), and the answer comes
back as a ``chat.completion``: text blocks joined; ``thinking`` (with its signature) and
``redacted_thinking`` blocks kept whole under ``thinking_blocks`` and their text under
``reasoning_content``; ``tool_use`` → ``tool_calls``; ``stop_reason`` → ``finish_reason``
(the API's own kept as ``native_finish_reason``); usage in OpenAI's convention — the
API's ``input_tokens`` exclude cache reads and writes, ours include them.

Assistant turns are never merged or rebuilt (a signed thinking block must come back
exactly as it was, at the start of its turn); consecutive user turns are (tool results).
A stream (``stream = true``) is read event by event and made whole (:class:`MessagesAssembler`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from osmosis_client._wire import loads
from osmosis_client.errors import InvalidInputError, ProviderRequestError
from osmosis_client.llm.streaming import Event, event_object

VERSION = "2023-06-01"
DEFAULT_MAX_TOKENS = 4096
_PASSED = ("temperature", "top_p", "top_k", "metadata", "thinking", "output_config", "service_tier")
_FINISH = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "refusal": "content_filter",
    "pause_turn": "stop",
}
#: ``reasoning_effort`` → a thinking budget (LiteLLM's, so the hosted path matches)
BUDGETS = {"minimal": 1024, "low": 1024, "medium": 2048, "high": 4096, "xhigh": 8192, "max": 16384}
#: models whose thinking is adaptive (``enabled`` with a budget is refused or deprecated)
_ADAPTIVE = re.compile(r"claude-(?:opus|sonnet|haiku)-(?:4-[6-9]|[5-9])|mythos|fable")


def thinking_for(model: str, effort: str, max_tokens: int | None) -> dict[str, Any]:
    """The request fields a ``reasoning_effort`` becomes: ``none`` → no thinking;
    adaptive models → ``thinking: {type: adaptive}`` and ``output_config.effort``;
    others → ``thinking: {type: enabled, budget_tokens}`` (``max_tokens`` raised to leave
    the answer 4096 tokens when it is not given; refused when it leaves no room)."""
    if effort == "none":
        return {}
    if _ADAPTIVE.search(model):
        shown = "low" if effort == "minimal" else effort
        return {"thinking": {"type": "adaptive"}, "output_config": {"effort": shown}}
    budget = BUDGETS.get(effort)
    if budget is None:
        raise InvalidInputError(
            f"reasoning_effort {effort!r} has no thinking budget for {model}",
            hint=f"use one of none, {', '.join(BUDGETS)}",
            code="INVALID_REASONING_EFFORT",
        )
    if max_tokens is not None and max_tokens <= budget:
        raise InvalidInputError(
            f"max_tokens {max_tokens} leaves no room for a thinking budget of {budget} "
            f"(reasoning_effort {effort!r}): Anthropic counts thinking in max_tokens",
            hint=f"raise max_tokens above {budget}, or lower the effort",
            code="INVALID_REASONING_EFFORT",
        )
    fields: dict[str, Any] = {"thinking": {"type": "enabled", "budget_tokens": budget}}
    if max_tokens is None:
        fields["max_tokens"] = budget + DEFAULT_MAX_TOKENS
    return fields


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            str(p.get("text", ""))
            for p in content
            if isinstance(p, dict) and p.get("type") == "text"
        )
    return "" if content is None else str(content)


def _blocks(content: Any) -> list[dict[str, Any]]:
    """Chat content (a string or parts) → Anthropic content blocks."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    blocks: list[dict[str, Any]] = []
    for part in content or []:
        if not isinstance(part, dict):
            continue
        if part.get("type") == "text":
            blocks.append({"type": "text", "text": str(part.get("text", ""))})
        elif part.get("type") == "image_url":
            url = str((part.get("image_url") or {}).get("url", ""))
            if url.startswith("data:") and ";base64," in url:
                media, data = url[5:].split(";base64,", 1)
                blocks.append(
                    {
                        "type": "image",
                        "source": {"type": "base64", "media_type": media, "data": data},
                    }
                )
            else:
                blocks.append({"type": "image", "source": {"type": "url", "url": url}})
    return blocks


def _arguments(raw: Any) -> Any:
    if isinstance(raw, str):
        try:
            return loads(raw) if raw.strip() else {}
        except ValueError:
            return {"_raw": raw}
    return raw if isinstance(raw, dict) else {}


def to_messages_request(payload: Mapping[str, Any]) -> dict[str, Any]:
    """A chat-completions body → a Messages API body."""
    system, turns = _turns(payload.get("messages") or [])
    given = payload.get("max_tokens") or payload.get("max_completion_tokens")
    body: dict[str, Any] = {
        "model": payload.get("model"),
        "messages": turns,
        "max_tokens": given or DEFAULT_MAX_TOKENS,
    }
    if system:
        body["system"] = "\n\n".join(s for s in system if s)
    effort = payload.get("reasoning_effort")
    if isinstance(effort, str) and "thinking" not in payload:
        body.update(thinking_for(str(payload.get("model") or ""), effort, given))
    for key in _PASSED:
        if key in payload:
            body[key] = payload[key]
    body["stream"] = payload.get("stream") is True
    stop = payload.get("stop")
    if stop:
        body["stop_sequences"] = [stop] if isinstance(stop, str) else list(stop)
    body.update(_tools(payload))
    return body


def _turns(messages: list[Any]) -> tuple[list[str], list[dict[str, Any]]]:
    """(system texts, alternating user/assistant turns) of chat messages."""
    system: list[str] = []
    turns: list[dict[str, Any]] = []

    def add(role: str, blocks: list[dict[str, Any]]) -> None:
        # consecutive user turns (tool results) are one turn; an assistant turn is never
        # merged into another: its thinking blocks must stay first, as they came
        if turns and turns[-1]["role"] == role == "user":
            turns[-1]["content"].extend(blocks)
        else:
            turns.append({"role": role, "content": blocks})

    for message in messages:
        if not isinstance(message, dict):
            continue
        role = message.get("role")
        if role in ("system", "developer"):
            system.append(_text(message.get("content")))
        elif role == "assistant":
            thinking = [
                dict(b) for b in message.get("thinking_blocks") or [] if isinstance(b, Mapping)
            ]
            add("assistant", thinking + _blocks(message.get("content")) + _tool_uses(message))
        elif role == "tool":
            result = {
                "type": "tool_result",
                "tool_use_id": str(message.get("tool_call_id", "")),
                "content": _text(message.get("content")),
            }
            add("user", [result])
        else:
            add("user", _blocks(message.get("content")))
    return system, turns


def _tool_uses(message: Mapping[str, Any]) -> list[dict[str, Any]]:
    uses = []
    for call in message.get("tool_calls") or []:
        function = call.get("function") or {}
        uses.append(
            {
                "type": "tool_use",
                "id": str(call.get("id", "")),
                "name": str(function.get("name", "")),
                "input": _arguments(function.get("arguments")),
            }
        )
    return uses


def _tools(payload: Mapping[str, Any]) -> dict[str, Any]:
    """``tools`` and ``tool_choice`` in the Messages API's shape (none offered: nothing)."""
    tools = [t for t in payload.get("tools") or [] if isinstance(t, dict)]
    if not tools:
        return {}
    shaped: dict[str, Any] = {
        "tools": [
            {
                "name": (t.get("function") or {}).get("name"),
                "description": (t.get("function") or {}).get("description", ""),
                "input_schema": (t.get("function") or {}).get("parameters")
                or {"type": "object", "properties": {}},
            }
            for t in tools
        ]
    }
    choice = payload.get("tool_choice")
    if choice == "required":
        shaped["tool_choice"] = {"type": "any"}
    elif choice in ("auto", "none"):
        shaped["tool_choice"] = {"type": choice}
    elif isinstance(choice, dict) and (choice.get("function") or {}).get("name"):
        shaped["tool_choice"] = {"type": "tool", "name": choice["function"]["name"]}
    return shaped


def from_messages_response(answer: Mapping[str, Any], model: str) -> dict[str, Any]:
    """A Messages API answer → a ``chat.completion`` (see the module)."""
    raw_content = answer.get("content")
    content: list[Any] = (
        [b for b in raw_content if isinstance(b, dict)] if isinstance(raw_content, list) else []
    )
    text = "".join(str(b.get("text", "")) for b in content if b.get("type") == "text")
    calls = [
        {
            "id": str(b.get("id", "")),
            "type": "function",
            "function": {
                "name": str(b.get("name", "")),
                "arguments": json.dumps(b.get("input", {})),
            },
        }
        for b in content
        if b.get("type") == "tool_use"
    ]
    thinking = [b for b in content if b.get("type") in ("thinking", "redacted_thinking")]
    message: dict[str, Any] = {"role": "assistant", "content": text or (None if calls else "")}
    if thinking:
        message["thinking_blocks"] = thinking
        said = "".join(str(b.get("thinking", "")) for b in thinking if b.get("type") == "thinking")
        if said:
            message["reasoning_content"] = said
    if calls:
        message["tool_calls"] = calls
    stop = str(answer.get("stop_reason"))
    choice: dict[str, Any] = {
        "index": 0,
        "message": message,
        "finish_reason": _FINISH.get(stop, "stop"),
    }
    if stop not in ("end_turn", "stop_sequence", "tool_use", "None"):
        choice["native_finish_reason"] = stop  # e.g. refusal, pause_turn, max_tokens
    if stop == "refusal":
        message["refusal"] = text or "the model refused"
    return {
        "id": str(answer.get("id", "")),
        "object": "chat.completion",
        "model": str(answer.get("model") or model),
        "choices": [choice],
        "usage": _usage(answer.get("usage")),
    }


def _usage(raw: Any) -> dict[str, Any]:
    """Anthropic's usage in OpenAI's convention (prompt tokens include the cache's)."""
    usage: Mapping[str, Any] = raw if isinstance(raw, Mapping) else {}
    fresh = int(usage.get("input_tokens") or 0)
    read = int(usage.get("cache_read_input_tokens") or 0)
    written = int(usage.get("cache_creation_input_tokens") or 0)
    completion = int(usage.get("output_tokens") or 0)
    shaped: dict[str, Any] = {
        "prompt_tokens": fresh + read + written,
        "completion_tokens": completion,
        "total_tokens": fresh + read + written + completion,
    }
    if read or written:
        shaped["prompt_tokens_details"] = {"cached_tokens": read, "cache_write_tokens": written}
    details = usage.get("output_tokens_details")
    if isinstance(details, Mapping) and details.get("thinking_tokens") is not None:
        shaped["completion_tokens_details"] = {
            "reasoning_tokens": int(details.get("thinking_tokens") or 0)
        }
    return shaped


class MessagesAssembler:
    """Folds a Messages API stream (``message_start``, ``content_block_*``,
    ``message_delta``, ``message_stop``) into the message it streamed."""

    def __init__(self, where: str) -> None:
        self.where = where
        self.message: dict[str, Any] = {}
        self.blocks: dict[int, dict[str, Any]] = {}
        self._json: dict[int, list[str]] = {}
        self._text: dict[int, list[str]] = {}
        self.done = False

    def add(self, event: Event) -> None:
        if self.done:
            return
        found = event_object(event, self.where)
        if found is None:
            return
        kind = found.get("type") or event.event
        at = found.get("index")
        index = at if isinstance(at, int) else 0
        if kind == "message_start" and isinstance(found.get("message"), dict):
            self.message = dict(found["message"])
        elif kind == "content_block_start" and isinstance(found.get("content_block"), dict):
            self.blocks[index] = dict(found["content_block"])
        elif kind == "content_block_delta" and isinstance(found.get("delta"), dict):
            self._delta(index, found["delta"])
        elif kind == "content_block_stop":
            self._close(index)
        elif kind == "message_delta":
            delta = found.get("delta") if isinstance(found.get("delta"), Mapping) else {}
            assert isinstance(delta, Mapping)
            for key in ("stop_reason", "stop_sequence", "stop_details"):
                if key in delta:
                    self.message[key] = delta[key]
            if isinstance(found.get("usage"), Mapping):  # cumulative: it replaces
                self.message["usage"] = {**(self.message.get("usage") or {}), **found["usage"]}
        elif kind == "message_stop":
            self.done = True

    def _delta(self, index: int, delta: Mapping[str, Any]) -> None:
        block = self.blocks.setdefault(index, {"type": "text", "text": ""})
        kind = delta.get("type")
        if kind == "input_json_delta":
            self._json.setdefault(index, []).append(str(delta.get("partial_json", "")))
        elif kind == "text_delta":
            self._text.setdefault(index, []).append(str(delta.get("text", "")))
        elif kind == "thinking_delta":
            self._text.setdefault(index, []).append(str(delta.get("thinking", "")))
        elif kind == "signature_delta":
            block["signature"] = str(block.get("signature") or "") + str(delta.get("signature", ""))

    def _close(self, index: int) -> None:
        block = self.blocks.get(index)
        if block is None:
            return
        if index in self._text:
            key = "thinking" if block.get("type") == "thinking" else "text"
            block[key] = str(block.get(key) or "") + "".join(self._text.pop(index))
        if index in self._json:
            raw = "".join(self._json.pop(index))
            try:
                block["input"] = loads(raw) if raw.strip() else {}
            except ValueError:
                block["input"] = {"_raw": raw}

    def result(self) -> dict[str, Any]:
        if not self.message:
            raise ProviderRequestError(
                f"the model endpoint {self.where}'s stream ended before the message started"
            )
        for index in list(self.blocks):
            self._close(index)  # a stream cut short: what arrived
        if not self.done and self.message.get("stop_reason") is None:
            raise ProviderRequestError(
                f"the model endpoint {self.where}'s stream ended before the message did"
            )
        return {**self.message, "content": [self.blocks[i] for i in sorted(self.blocks)]}


def headers(api_key: str | None) -> dict[str, str]:
    found = {"anthropic-version": VERSION}
    if api_key:
        found["x-api-key"] = api_key
    return found
