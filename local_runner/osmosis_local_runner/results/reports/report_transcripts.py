"""An attempt's transcript as the report and the viewer show it: each turn's text, its
tool calls and its reasoning (collapsed on the page, with its tokens), every model call
with its timing, usage and raw JSON, and what a grader said."""

from __future__ import annotations

from typing import Any

from osmosis_client.llm.reasoning import reasoning_text
from osmosis_local_runner.results.documents.documents import text_of
from osmosis_local_runner.results.documents.records import AttemptRecord

#: the longest message text kept in the page (a transcript is for reading, not archiving)
MAX_MESSAGE = 20_000


def messages_of(
    record_messages: list[Any] | None, calls: list[dict[str, Any]] | None = None
) -> list[dict[str, Any]] | None:
    """The transcript as the page shows it: each turn's text, its tool calls, and its
    reasoning (collapsed on the page) with the reasoning tokens of the call that answered
    it — the k-th assistant turn is the k-th answered call's, when they line up."""
    if record_messages is None:
        return None
    answered = [c.get("usage") for c in calls or [] if not c.get("error")]
    turns = sum(1 for m in record_messages if isinstance(m, dict) and m.get("role") == "assistant")
    counts = [u.get("reasoning_tokens") if isinstance(u, dict) else None for u in answered]
    counts = counts if len(counts) == turns else []
    shown = []
    turn = 0
    for message in record_messages:
        if not isinstance(message, dict):
            continue
        item: dict[str, Any] = {
            "role": str(message.get("role", "?")),
            "content": text_of(message.get("content"))[:MAX_MESSAGE],
        }
        calls = message.get("tool_calls")
        if isinstance(calls, list) and calls:
            functions = [
                call["function"]
                for call in calls
                if isinstance(call, dict) and isinstance(call.get("function"), dict)
            ]
            item["tool_calls"] = [
                {
                    "name": str(function.get("name", "?")),
                    "arguments": str(function.get("arguments", ""))[:MAX_MESSAGE],
                }
                for function in functions
            ]
        if message.get("name"):
            item["name"] = str(message["name"])
        if item["role"] == "assistant":
            thinking = reasoning_text(message)
            if thinking:
                item["reasoning"] = thinking[:MAX_MESSAGE]
                if turn < len(counts) and counts[turn]:
                    item["reasoning_tokens"] = counts[turn]
            turn += 1
        shown.append(item)
    return shown


def explanations_of(record: AttemptRecord) -> dict[str, str] | None:
    """What each eval fn said besides its score (grading.scored), when it said it."""
    found = (record.extra or {}).get("explanations")
    if not isinstance(found, dict):
        return None
    return {str(k): str(v)[:MAX_MESSAGE] for k, v in found.items() if isinstance(v, str)} or None


#: the longest raw request or answer of a model call the page keeps (whole in the document)
MAX_CALL_TEXT = 8_000


def calls_of(record: AttemptRecord) -> list[dict[str, Any]] | None:
    """The attempt's model calls (run/execute/calls.py): timing, messages sent, and the raw
    request parameters and answer as text (cut to :data:`MAX_CALL_TEXT`)."""
    calls = (record.extra or {}).get("model_calls")
    if not isinstance(calls, list):
        return None
    shown = []
    for call in calls:
        if not isinstance(call, dict):
            continue
        item = {k: call.get(k) for k in ("at_ms", "duration_ms", "sent", "error", "usage")}
        if call.get("cached") in ("cache", "replay"):  # answered without a call
            item["cached"] = call["cached"]
        retries = call.get("retries")
        if isinstance(retries, list):  # why each earlier try failed (a name, a status)
            item["retries"] = [str(r)[:200] for r in retries[:50]]
        for key in ("request", "response"):
            text = call.get(key)
            if isinstance(text, str):
                item[key] = _cut(text)
        tries = call.get("wire")
        if isinstance(tries, list):  # each try as sent and as received
            item["wire"] = [_try(t) for t in tries[:20] if isinstance(t, dict)]
        shown.append(item)
    return shown


def _cut(text: str) -> str:
    return text if len(text) <= MAX_CALL_TEXT else text[:MAX_CALL_TEXT] + "…"


def _try(found: dict[str, Any]) -> dict[str, Any]:
    """One try on the wire as the page shows it (bodies cut; headers as text)."""
    item: dict[str, Any] = {}
    for key in ("url", "error"):
        if isinstance(found.get(key), str):
            item[key] = str(found[key])[:500]
    for key in ("status", "duration_ms", "sent_bytes", "received_bytes"):
        if isinstance(found.get(key), int | float):
            item[key] = found[key]
    for key in ("sent", "received"):
        if isinstance(found.get(key), str):
            item[key] = _cut(found[key])
    headers = found.get("headers")
    if isinstance(headers, dict):
        item["headers"] = {str(k)[:80]: str(v)[:200] for k, v in list(headers.items())[:30]}
    return item


__all__ = ["MAX_CALL_TEXT", "MAX_MESSAGE", "calls_of", "explanations_of", "messages_of"]
