"""An endpoint's answer, read and made sense of: the whole body (or a stream, assembled),
decoded, and every failure as the error a user can act on."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from osmosis_client._wire import BodyTooLarge, loads, read_body
from osmosis_client.errors import (
    ModelNotFoundError,
    ProviderRequestError,
)
from osmosis_client.llm.routing import Route
from osmosis_client.llm.streaming import EventDecoder
from osmosis_client.llm.usage import call_usage

if TYPE_CHECKING:
    from aiohttp import ClientResponse as Response

Message = dict[str, Any]
MAX_RESPONSE_BYTES = 64 << 20  # one chat completion, decompressed


async def read_answer(
    response: Response, route: Route, sink: list[bytes] | None = None
) -> tuple[int, bytes | dict[str, Any], str | None]:
    """(status, the answer as a chat completion — or the bytes of one that is not —,
    Retry-After) of one response; ``sink`` (when given) gets its bytes as they came."""
    status = response.status
    try:
        if status < 300 and response.content_type == "text/event-stream":
            return status, route.completion(await _read_stream(response, route, sink)), None
        raw = await read_body(response, MAX_RESPONSE_BYTES)  # whole, decompressed
        if sink is not None:
            sink.append(raw)
    except BodyTooLarge as exc:
        raise ProviderRequestError(
            f"the model endpoint {route.shown} sent more than "
            f"{MAX_RESPONSE_BYTES >> 20} MiB for one answer",
            status_code=status,
        ) from exc
    retry_after = None if status < 300 else response.headers.get("Retry-After")
    return status, route.answer(status, raw), retry_after


async def _read_stream(
    response: Response, route: Route, sink: list[bytes] | None = None
) -> dict[str, Any]:
    """A streamed answer (server-sent events, in whatever pieces they arrive) made whole
    as its wire has it; capped like a whole answer."""
    decoder, assembler, size = EventDecoder(), route.assembler(), 0
    async for piece in response.content.iter_any():
        size += len(piece)
        if size > MAX_RESPONSE_BYTES:
            raise BodyTooLarge(MAX_RESPONSE_BYTES)
        if sink is not None:
            sink.append(piece)
        for event in decoder.feed(piece):
            assembler.add(event)
        if assembler.done:
            break
    else:
        for event in decoder.close():
            assembler.add(event)
    whole: dict[str, Any] = assembler.result()
    return whole


def error_detail(raw: bytes) -> str:
    try:
        data = loads(raw)
    except ValueError:
        return " ".join(raw.decode(errors="replace").split())[:200] or "no details"
    if isinstance(data, dict):
        error = data.get("error")
        if isinstance(error, dict) and error.get("message"):
            return str(error["message"])[:200]
        if isinstance(error, str):
            return error[:200]
        if data.get("message"):
            return str(data["message"])[:200]
        if isinstance(data.get("detail"), str):  # FastAPI's own errors (vLLM, SGLang…)
            return str(data["detail"])[:200]
    try:
        return json.dumps(data)[:200]
    except (TypeError, ValueError, RecursionError):
        return "no details"


def decode(raw: bytes, where: str) -> dict[str, Any]:
    try:
        data = loads(raw)
    except ValueError as exc:
        raise ProviderRequestError(
            f"the model endpoint {where} sent a response that is not JSON"
        ) from exc
    if not isinstance(data, dict):
        raise ProviderRequestError(f"the model endpoint {where} sent unexpected JSON")
    return data


def parse_reply(response: Mapping[str, Any]) -> tuple[Message, int]:
    """The assistant message and total tokens of a chat-completions response."""
    try:
        message = response["choices"][0]["message"]
        if not isinstance(message, dict):
            raise TypeError
    except (KeyError, IndexError, TypeError) as exc:
        raise ProviderRequestError(
            "the model endpoint's response has no choices[0].message"
        ) from exc
    message.setdefault("role", "assistant")
    return message, call_usage(response).total_tokens  # read once, checked at the edge


#: what a server says for a path it does not serve (FastAPI, Go, nginx, aiohttp…), as
#: opposed to an OpenAI-style error about the model
_NOT_A_ROUTE = {"not found", "no details", "404 page not found", "404: not found"}


_ROUTE_NAMES = {
    "chat": "chat-completions",
    "responses": "Responses API",
    "anthropic": "Messages API",
}

#: a route a base URL should not end in (a pasted request URL)
_ROUTES = ("/chat/completions", "/completions", "/responses", "/messages")


def _no_such_route(detail: str, endpoint: Route) -> str | None:
    """A 404 for the path, not the model: the base URL to use instead, or None. A base
    URL that is a whole request URL loses its route; one without ``/v1`` gains it."""
    from urllib.parse import urlsplit

    base = endpoint.shown.rstrip("/")
    path = urlsplit(endpoint.replica.base_url).path.rstrip("/")
    for route in _ROUTES:
        if path.endswith(route):
            return base[: -len(route)]
    if detail.strip().lower() in _NOT_A_ROUTE and not path.endswith("/v1"):
        return f"{base}/v1"
    return None


def status_error(status: int, raw: bytes, endpoint: Route) -> ProviderRequestError:
    detail = error_detail(raw)
    where = endpoint.shown
    data = {"endpoint": where, "model": endpoint.replica.model, "detail": detail}
    if status in (401, 403):
        var = endpoint.replica.key_env
        return ProviderRequestError(
            f"the model endpoint {where} rejected the request ({status}: {detail})",
            status_code=status,
            hint=f"check the key in {var}" if var else "give the API key's variable name",
            code="PROVIDER_AUTH",
            data={**data, "key_env": var},
        )
    suggested = _no_such_route(detail, endpoint) if status == 404 else None
    if suggested is not None:
        why = (
            "OpenAI-compatible servers answer under /v1"
            if suggested == f"{where.rstrip('/')}/v1"
            else "a base URL ends before the route (…/v1), the client adds the rest"
        )
        return ModelNotFoundError(
            f"the model endpoint {where} has no {_ROUTE_NAMES[endpoint.wire]} route "
            f"(404: {detail})",
            status_code=status,
            hint=f"{why}: try the base URL {suggested}",
            code="ENDPOINT_PATH",
            data={**data, "suggested_base_url": suggested},
        )
    if status == 404:
        return ModelNotFoundError(
            f"model {endpoint.replica.model!r} not found at {where} ({detail})",
            status_code=status,
            hint="check the model name against the models the endpoint serves, and the base URL",
            data=data,
        )
    return ProviderRequestError(
        f"the model endpoint {where} answered {status}: {detail}",
        status_code=status,
        data=data,
    )
