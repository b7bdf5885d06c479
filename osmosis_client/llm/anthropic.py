"""``api_client_type = "anthropic_messages"``: the Anthropic Messages API behind the
chat-completions interface everything else in osmosis-client speaks.

A chat-completions request becomes ``POST {url}/messages`` (system messages →
``system``; assistant ``tool_calls`` → ``tool_use`` blocks; ``tool`` messages → a user
turn of ``tool_result`` blocks; function tools → ``input_schema`` tools; ``stop`` →
``stop_sequences``; ``max_tokens`` defaults to 4096, the API requires it), and the
answer comes back as a ``chat.completion`` (text blocks joined, ``tool_use`` →
``tool_calls``, ``stop_reason`` → ``finish_reason``, usage → prompt/completion/total).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from osmosis_client._wire import loads

VERSION = "2023-06-01"
DEFAULT_MAX_TOKENS = 4096
_PASSED = ("temperature", "top_p", "top_k", "metadata", "stream")
_FINISH = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
}


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
    body: dict[str, Any] = {
        "model": payload.get("model"),
        "messages": turns,
        "max_tokens": payload.get("max_tokens")
        or payload.get("max_completion_tokens")
        or DEFAULT_MAX_TOKENS,
    }
    if system:
        body["system"] = "\n\n".join(s for s in system if s)
    for key in _PASSED:
        if key in payload:
            body[key] = payload[key]
    body["stream"] = False
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
        if turns and turns[-1]["role"] == role:  # the API wants alternating roles
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
            add("assistant", _blocks(message.get("content")) + _tool_uses(message))
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
    """A Messages API answer → a ``chat.completion``."""
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
    message: dict[str, Any] = {"role": "assistant", "content": text or (None if calls else "")}
    if calls:
        message["tool_calls"] = calls
    raw_usage = answer.get("usage")
    usage: dict[str, Any] = raw_usage if isinstance(raw_usage, dict) else {}
    prompt = int(usage.get("input_tokens") or 0)
    completion = int(usage.get("output_tokens") or 0)
    return {
        "id": str(answer.get("id", "")),
        "object": "chat.completion",
        "model": str(answer.get("model") or model),
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": _FINISH.get(str(answer.get("stop_reason")), "stop"),
            }
        ],
        "usage": {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        },
    }


def headers(api_key: str | None) -> dict[str, str]:
    found = {"anthropic-version": VERSION}
    if api_key:
        found["x-api-key"] = api_key
    return found
