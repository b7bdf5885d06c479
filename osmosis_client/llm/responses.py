"""``api_client_type = "openai_responses"``: the Responses API (``POST {url}/responses``)
behind the chat-completions interface everything else in osmosis-client speaks.

Chosen for official OpenAI models as the published CLI chooses (an ``openai/`` model
whose base URL is ``https://api.openai.com/v1``), and by an endpoint row for any other
server (vLLM and SGLang serve it). Stateless: ``store: false`` with the reasoning's
encrypted content asked for and carried across the turns of an attempt (the published
CLI drops it), so a tool loop gives the model its own reasoning back.

Request: system / developer / user messages become role messages (content parts →
``input_text`` / ``input_image``); an assistant turn becomes its reasoning items (as
received), its text, and a ``function_call`` per tool call; a ``tool`` message becomes a
``function_call_output``. Tools are flattened, keeping chat completions' non-strict
default (``strict: false`` unless the tool says otherwise: the Responses API would make
every field required); ``max_tokens`` → ``max_output_tokens``; ``reasoning_effort`` →
``reasoning.effort``; a JSON ``response_format`` → ``text.format``. Chat-only
parameters the API refuses (``seed``, ``stop``, penalties, ``n``…) are not sent.

Answer: output text joined into ``content``; a refusal into ``refusal``; function calls
→ ``tool_calls``; reasoning items kept whole under ``reasoning_items`` and their summary
(or raw text, from vLLM) under ``reasoning_content``; ``incomplete`` for
``max_output_tokens`` is ``finish_reason: "length"`` (a truncated answer, not an error),
for ``content_filter`` is ``"content_filter"``; ``failed`` is an error naming the
API's code; usage keeps cached and reasoning tokens.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from typing import Any

from osmosis_client.errors import ProviderRequestError

logger = logging.getLogger("osmosis_client")

OFFICIAL_URL = "https://api.openai.com/v1"
#: chat-completions parameters with no Responses equivalent (the API refuses them)
_CHAT_ONLY = frozenset(
    {
        "seed",
        "n",
        "stop",
        "frequency_penalty",
        "presence_penalty",
        "logit_bias",
        "logprobs",
        "stream_options",
        "functions",
        "function_call",
        "modalities",
        "audio",
        "prediction",
        "web_search_options",
        "messages",
        "max_tokens",
        "max_completion_tokens",
        "reasoning_effort",
        "response_format",
        "verbosity",
    }
)
#: model names that reason (their summary is asked for even with no effort given)
_REASONING_MODELS = ("o1", "o3", "o4", "gpt-5", "gpt-oss", "codex")


def is_official(base_url: str) -> bool:
    """Whether a base URL is OpenAI's own API (the published CLI's test: exact match)."""
    return base_url.rstrip("/") == OFFICIAL_URL


# ------------------------------------------------------------------ request


def to_request(payload: Mapping[str, Any]) -> dict[str, Any]:
    """A chat-completions body → a Responses API body."""
    body: dict[str, Any] = {
        "model": payload.get("model"),
        "input": _items(payload.get("messages") or []),
        "store": False,
        "include": ["reasoning.encrypted_content"],
    }
    for key, value in payload.items():
        if key not in _CHAT_ONLY and key not in ("model", "tools", "tool_choice", "reasoning"):
            body[key] = value
    limit = next(
        (
            payload[k]
            for k in ("max_output_tokens", "max_completion_tokens", "max_tokens")
            if payload.get(k) is not None
        ),
        None,
    )
    if limit is not None:
        body["max_output_tokens"] = limit
    reasoning = dict(payload.get("reasoning") or {})
    effort = payload.get("reasoning_effort")
    if effort is not None:
        reasoning.setdefault("effort", effort)
    model = str(payload.get("model") or "")
    if "summary" not in reasoning and (
        reasoning.get("effort") not in (None, "none") or model.startswith(_REASONING_MODELS)
    ):
        reasoning["summary"] = "auto"  # the reasoning's text (OpenAI gives none unasked)
    if reasoning:
        body["reasoning"] = reasoning
    text = _text_format(payload)
    if text:
        body["text"] = {**text, **(payload.get("text") or {})}
    body.update(_tools(payload))
    return body


def _parts(content: Any, *, assistant: bool) -> Any:
    """Chat content → Responses content (a string stays a string)."""
    if not isinstance(content, list):
        return "" if content is None else content
    parts: list[dict[str, Any]] = []
    for part in content:
        if not isinstance(part, Mapping):
            continue
        kind = part.get("type")
        if kind == "text":
            parts.append(
                {
                    "type": "output_text" if assistant else "input_text",
                    "text": str(part.get("text", "")),
                }
            )
        elif kind == "image_url":
            image = part.get("image_url") or {}
            url = image.get("url") if isinstance(image, Mapping) else image
            detail = image.get("detail", "auto") if isinstance(image, Mapping) else "auto"
            parts.append({"type": "input_image", "image_url": str(url), "detail": detail})
        elif kind == "file":
            parts.append({"type": "input_file", **(part.get("file") or {})})
    return parts


def _items(messages: list[Any]) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    for message in messages:
        if not isinstance(message, Mapping):
            continue
        role = message.get("role")
        if role == "tool":
            output = message.get("content")
            if not isinstance(output, str | list):
                output = json.dumps(output)
            items.append(
                {
                    "type": "function_call_output",
                    "call_id": str(message.get("tool_call_id", "")),
                    "output": _parts(output, assistant=False),
                }
            )
        elif role == "assistant":
            items.extend(_assistant_items(message))
        else:
            items.append(
                {"role": role or "user", "content": _parts(message.get("content"), assistant=False)}
            )
    return items


def _assistant_items(message: Mapping[str, Any]) -> list[dict[str, Any]]:
    """An assistant turn as it came back: its reasoning items unchanged, its text, then
    its calls (each reasoning item directly before what followed it)."""
    items = [dict(i) for i in message.get("reasoning_items") or [] if isinstance(i, Mapping)]
    content = message.get("content")
    refusal = message.get("refusal")
    if refusal and not content:
        items.append(
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "refusal", "refusal": str(refusal)}],
            }
        )
    elif content or not message.get("tool_calls"):
        items.append({"role": "assistant", "content": _parts(content, assistant=True)})
    for call in message.get("tool_calls") or []:
        if not isinstance(call, Mapping):
            continue
        function = call.get("function") or {}
        arguments = function.get("arguments", "")
        items.append(
            {
                "type": "function_call",
                "call_id": str(call.get("id", "")),
                "name": str(function.get("name", "")),
                "arguments": arguments if isinstance(arguments, str) else json.dumps(arguments),
            }
        )
    return items


def _tools(payload: Mapping[str, Any]) -> dict[str, Any]:
    shaped: dict[str, Any] = {}
    tools = []
    for tool in payload.get("tools") or []:
        if not isinstance(tool, Mapping):
            continue
        function = tool.get("function")
        if tool.get("type") == "function" and isinstance(function, Mapping):
            flat = {"type": "function", **function}
            flat.setdefault("strict", False)  # chat completions' default, not Responses'
            tools.append(flat)
        else:
            tools.append(dict(tool))  # already flat, or a built-in tool
    if tools:
        shaped["tools"] = tools
    choice = payload.get("tool_choice")
    if isinstance(choice, Mapping) and isinstance(choice.get("function"), Mapping):
        shaped["tool_choice"] = {"type": "function", "name": choice["function"].get("name")}
    elif choice is not None:
        shaped["tool_choice"] = choice
    return shaped


def _text_format(payload: Mapping[str, Any]) -> dict[str, Any]:
    shaped: dict[str, Any] = {}
    found = payload.get("response_format")
    if isinstance(found, Mapping):
        if found.get("type") == "json_schema" and isinstance(found.get("json_schema"), Mapping):
            shaped["format"] = {"type": "json_schema", **found["json_schema"]}
        elif found.get("type") in ("json_object", "text"):
            shaped["format"] = {"type": found["type"]}
    if payload.get("verbosity") is not None:
        shaped["verbosity"] = payload["verbosity"]
    return shaped


# ------------------------------------------------------------------ answer


def to_completion(answer: Mapping[str, Any], model: str, where: str) -> dict[str, Any]:
    """A Responses API answer → a ``chat.completion`` (see the module)."""
    _check_finished(answer, where)
    output = [i for i in answer.get("output") or [] if isinstance(i, Mapping)]
    texts, refusals, calls, reasoning, thoughts = [], [], [], [], []
    for item in output:
        kind = item.get("type")
        if kind == "message":
            for part in item.get("content") or []:
                if isinstance(part, Mapping) and part.get("type") == "output_text":
                    texts.append(str(part.get("text", "")))
                elif isinstance(part, Mapping) and part.get("type") == "refusal":
                    refusals.append(str(part.get("refusal", "")))
        elif kind == "function_call":
            calls.append(_tool_call(item))
        elif kind == "reasoning":
            reasoning.append({k: v for k, v in item.items() if v is not None and k != "status"})
            thoughts.extend(_thought(item))
    text = "".join(texts)
    message: dict[str, Any] = {
        "role": "assistant",
        "content": text if text or not (calls or refusals) else None,
    }
    if refusals:
        message["refusal"] = "".join(refusals)
    if calls:
        message["tool_calls"] = calls
    if reasoning:
        message["reasoning_items"] = reasoning
        if thoughts:
            message["reasoning_content"] = "\n\n".join(thoughts)
    return {
        "id": str(answer.get("id", "")),
        "object": "chat.completion",
        "created": int(answer.get("created_at") or 0),
        "model": str(answer.get("model") or model),
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": _finish(answer, calls),
                **_native(answer),
            }
        ],
        "usage": _usage(answer.get("usage")),
    }


def _check_finished(answer: Mapping[str, Any], where: str) -> None:
    """A failed or cancelled response is an error naming the provider's code."""
    status = answer.get("status") or "completed"
    if status in ("completed", "incomplete"):
        return
    error = answer.get("error") if isinstance(answer.get("error"), Mapping) else {}
    assert isinstance(error, Mapping)
    code = error.get("code") or status
    detail = error.get("message") or f"the response is {status}"
    raise ProviderRequestError(
        f"the model endpoint {where} answered {status}: {code}: {str(detail)[:200]}",
        code="PROVIDER_RESPONSE_FAILED",
        data={"endpoint": where, "status": status, "error_code": str(code)},
    )


def _tool_call(item: Mapping[str, Any]) -> dict[str, Any]:
    """A ``function_call`` output item as a chat completion's tool call."""
    return {
        "id": str(item.get("call_id") or item.get("id") or ""),
        "type": "function",
        "function": {
            "name": str(item.get("name", "")),
            "arguments": str(item.get("arguments") or ""),
        },
    }


def _thought(item: Mapping[str, Any]) -> list[str]:
    """A reasoning item's text: its summary, else its raw text (vLLM, gpt-oss)."""
    found = [
        str(p.get("text", ""))
        for p in item.get("summary") or []
        if isinstance(p, Mapping) and p.get("text")
    ]
    if found:
        return found
    return [
        str(p.get("text", ""))
        for p in item.get("content") or []
        if isinstance(p, Mapping) and p.get("text")
    ]


def _finish(answer: Mapping[str, Any], calls: list[Any]) -> str:
    if answer.get("status") == "incomplete":
        details = answer.get("incomplete_details")
        reason = details.get("reason") if isinstance(details, Mapping) else None
        return "content_filter" if reason == "content_filter" else "length"
    return "tool_calls" if calls else "stop"


def _native(answer: Mapping[str, Any]) -> dict[str, Any]:
    """The API's own word on why it stopped, beside the mapped one (as OpenRouter keeps
    ``native_finish_reason``)."""
    if answer.get("status") != "incomplete":
        return {}
    details = answer.get("incomplete_details")
    reason = details.get("reason") if isinstance(details, Mapping) else None
    return {"native_finish_reason": f"incomplete:{reason or 'unknown'}"}


def _usage(raw: Any) -> dict[str, Any]:
    usage: Mapping[str, Any] = raw if isinstance(raw, Mapping) else {}
    asked = usage.get("input_tokens_details") or {}
    done = usage.get("output_tokens_details") or {}
    prompt = int(usage.get("input_tokens") or 0)
    completion = int(usage.get("output_tokens") or 0)
    shaped: dict[str, Any] = {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": int(usage.get("total_tokens") or prompt + completion),
    }
    if isinstance(asked, Mapping) and asked:
        shaped["prompt_tokens_details"] = {
            "cached_tokens": int(asked.get("cached_tokens") or 0),
            "cache_write_tokens": int(asked.get("cache_write_tokens") or 0),
        }
    if isinstance(done, Mapping) and done:
        shaped["completion_tokens_details"] = {
            "reasoning_tokens": int(done.get("reasoning_tokens") or 0)
        }
    return shaped


__all__ = ["OFFICIAL_URL", "is_official", "to_completion", "to_request"]
