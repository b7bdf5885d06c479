"""Reasoning kept apart from the answer, and given back as each provider requires.

An answer reaches a rollout as a chat-completions message whose ``content`` is the
answer alone; its reasoning travels beside it, under the names the providers use
(docs/models.md has the table):

- ``reasoning_content`` (DeepSeek, SGLang, older vLLM) and ``reasoning`` (vLLM,
  OpenRouter): the text, kept as the server named it;
- ``reasoning_details`` (OpenRouter): its blocks, signatures included;
- ``thinking_blocks`` (Anthropic, as LiteLLM names them): ``thinking`` blocks with their
  signatures and ``redacted_thinking`` blocks, exactly as received;
- ``reasoning_items`` (the Responses API): its reasoning items, ``encrypted_content``
  included.

Given back (a tool loop, a multi-turn rollout): Anthropic's blocks and the Responses
API's items on every assistant turn that carried them — each API drops what it does
not need and refuses a tool continuation without them; the chat servers' fields only on
an assistant turn that calls tools (DeepSeek requires its ``reasoning_content`` there
and ignores it elsewhere; OpenRouter's ``reasoning_details`` carry Claude's and Gemini's
signatures). A rollout that rebuilds its messages from the text alone gets them back
from :class:`Replay`, which remembers them by tool-call id (as the published 0.3.8
bridge does).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, Literal, get_args

Message = dict[str, Any]
#: how hard a reasoning model is asked to think (``reasoning_effort``); each provider
#: takes its own subset and is mapped (docs/models.md)
Effort = Literal["none", "minimal", "low", "medium", "high", "xhigh", "max"]
EFFORTS: tuple[str, ...] = get_args(Effort)

#: reasoning as text, under the names servers use
TEXT_FIELDS = ("reasoning_content", "reasoning")
#: reasoning a provider needs back unchanged (signatures, encrypted content)
OPAQUE_FIELDS = ("reasoning_details", "thinking_blocks", "reasoning_items")
FIELDS = TEXT_FIELDS + OPAQUE_FIELDS
#: ours (converted from Anthropic and the Responses API): never sent to a chat server
_OWN = ("thinking_blocks", "reasoning_items")

_THINK = re.compile(r"^\s*(?:<think>)?(.*?)</think>\s*", re.DOTALL)


def reasoning_text(message: Mapping[str, Any]) -> str | None:
    """The reasoning of an assistant message as text (None: it has none)."""
    for name in TEXT_FIELDS:
        text = message.get(name)
        if isinstance(text, str) and text:
            return text
    details = message.get("reasoning_details")
    if isinstance(details, list):
        parts = [
            str(d.get("text") or d.get("summary") or "") for d in details if isinstance(d, Mapping)
        ]
        joined = "".join(parts)
        return joined or None
    return None


def split_think_tags(message: Message) -> Message:
    """``<think>…</think>answer`` in ``content`` (a server without a reasoning parser;
    Qwen3.5's template opens the tag in the prompt, so only ``…</think>answer`` may
    come back) → ``content`` the answer, ``reasoning_content`` the thinking. A message
    that already carries reasoning apart, or no closing tag, is left as it is."""
    content = message.get("content")
    if not isinstance(content, str) or "</think>" not in content:
        return message
    if any(message.get(name) for name in FIELDS):
        return message
    found = _THINK.match(content)
    if found is None:
        return message
    thinking = found.group(1).strip()
    return {**message, "content": content[found.end() :], "reasoning_content": thinking}


def raw_text(message: Mapping[str, Any]) -> str:
    """The reasoning and the answer as one text (``<think>…</think>`` then the answer):
    what an eval fn gets when the config asks for the raw text."""
    content = message.get("content")
    if isinstance(content, list):  # content parts: their text
        content = "".join(str(p.get("text", "")) for p in content if isinstance(p, Mapping))
    answer = content if isinstance(content, str) else ""
    thinking = reasoning_text(message)
    return f"<think>{thinking}</think>\n\n{answer}" if thinking else answer


def for_chat(messages: Sequence[Any]) -> Sequence[Any]:
    """Messages as a chat-completions server is sent them: the reasoning a server gave
    stays only on assistant turns that call tools; the fields converted from Anthropic or
    the Responses API never go. The same list when nothing changes (the common case)."""
    kept: list[Any] | None = None
    for position, message in enumerate(messages):
        if not isinstance(message, dict) or message.get("role") != "assistant":
            continue
        drop = _OWN if message.get("tool_calls") else FIELDS
        if not any(name in message for name in drop):
            continue
        if kept is None:
            kept = list(messages)
        kept[position] = {k: v for k, v in message.items() if k not in drop}
    return messages if kept is None else kept


def _carried(message: Mapping[str, Any]) -> dict[str, Any]:
    return {name: message[name] for name in FIELDS if message.get(name)}


def _call_ids(message: Mapping[str, Any]) -> list[str]:
    calls = message.get("tool_calls")
    if not isinstance(calls, list):
        return []
    return [str(c["id"]) for c in calls if isinstance(c, Mapping) and c.get("id")]


class Replay:
    """One attempt's reasoning, by tool-call id: an assistant turn sent back without the
    reasoning it was answered with gets it again (see the module)."""

    __slots__ = ("_by_call",)

    def __init__(self) -> None:
        self._by_call: dict[str, dict[str, Any]] = {}

    def remember(self, message: Mapping[str, Any]) -> None:
        carried = _carried(message)
        if carried:
            for call_id in _call_ids(message):
                self._by_call[call_id] = carried

    def restore(self, messages: Sequence[Any]) -> Sequence[Any]:
        """The messages with each tool-calling assistant turn's reasoning put back where
        it is missing (the same list when nothing is missing)."""
        if not self._by_call:
            return messages
        kept: list[Any] | None = None
        for position, message in enumerate(messages):
            if not isinstance(message, dict) or message.get("role") != "assistant":
                continue
            ids = _call_ids(message)
            if not ids or _carried(message):
                continue
            stored = next((self._by_call[i] for i in ids if i in self._by_call), None)
            if stored is None:
                continue
            if kept is None:
                kept = list(messages)
            kept[position] = {**message, **stored}
        return messages if kept is None else kept


__all__ = [
    "EFFORTS",
    "FIELDS",
    "OPAQUE_FIELDS",
    "TEXT_FIELDS",
    "Effort",
    "Replay",
    "for_chat",
    "raw_text",
    "reasoning_text",
    "split_think_tags",
]
