"""The LLM bridge: the loopback chat-completions endpoint rollouts call.

Each rollout gets ``chat_completions_url = http://127.0.0.1:<port>/v1/rollouts/<id>``
and the run's bearer token. A request is forwarded to the run's own
:class:`~osmosis_client.llm.client.ModelClient` (so every provider, base URL and
``mock/…`` model works, with its retries and timeouts); its tokens are counted
for that rollout id. The request's ``model`` is ignored (the run's model answers)
and echoed back. ``n`` other than 1 and fields that would send the call elsewhere
(``api_base``, keys, headers…) are refused with 400; everything else — tools,
sampling parameters, content parts — passes through.

``stream: true`` (the OpenAI Agents and Strands integrations always stream) is
answered as server-sent events: a ``: ping`` comment at once and every 15 s while
the model works, then one ``chat.completion.chunk`` carrying the whole message and
``usage``, then ``data: [DONE]``.

Why aiohttp on the run's own event loop: aiohttp is already the model client's
transport, the bridge then costs no thread hops or extra processes (a request
becomes a model call on the same loop), and it streams natively. It is not the
bottleneck: see docs/benchmarks.md.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import json
import logging
import secrets
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from osmosis_client._wire import loads
from osmosis_client.errors import InvalidInputError, OsmosisError, ProviderRequestError
from osmosis_client.llm.client import SESSION_ID, parse_reply
from osmosis_client.llm.usage import METER, Meter

if TYPE_CHECKING:
    from aiohttp import web

logger = logging.getLogger("osmosis_client.bridge")

PING_INTERVAL = 15.0
MAX_REQUEST = 32 * 1024 * 1024
#: fields that would redirect the call, or smuggle credentials or headers
REDIRECTS = frozenset(
    {
        "api_base",
        "base_url",
        "api_key",
        "api_version",
        "api_type",
        "organization",
        "extra_headers",
        "headers",
        "extra_query",
        "custom_llm_provider",
        "deployment_id",
        "azure_endpoint",
        "azure_ad_token",
        "aws_access_key_id",
        "aws_secret_access_key",
        "aws_session_token",
        "aws_region_name",
        "vertex_project",
        "vertex_location",
        "vertex_credentials",
    }
)
#: handled by the bridge itself, never forwarded
OWN_FIELDS = frozenset({"model", "messages", "stream", "stream_options", "n"})

Complete = Callable[[Sequence[dict[str, Any]], dict[str, Any]], Awaitable[dict[str, Any]]]


@dataclass
class Route:
    """One registered rollout: where its calls go, and what they cost."""

    complete: Complete
    session: str | None = None  # X-Session-ID of the attempt's model calls
    tokens: int = 0
    calls: int = 0
    meter: Meter | None = None  # the attempt's: its calls counted by kind and model


class BridgeError(Exception):
    def __init__(self, status: int, message: str, kind: str, code: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.kind = kind
        self.code = code

    def body(self) -> dict[str, Any]:
        return {"error": {"message": self.message, "type": self.kind, "code": self.code}}


class BridgePortError(InvalidInputError):
    """``--listener-port`` cannot be bound."""


def _loopback(url: str) -> bool:
    from urllib.parse import urlsplit

    from osmosis_client.platform.settings import is_loopback_host

    return is_loopback_host(urlsplit(url).hostname or "")


class Bridge:
    """The endpoint; ``register``/``unregister`` one rollout id at a time."""

    def __init__(
        self,
        *,
        ping_interval: float = PING_INTERVAL,
        port: int = 0,
        advertise_url: str | None = None,
    ) -> None:
        self.token = secrets.token_urlsafe(32)
        self._token_bytes = self.token.encode()
        self.ping_interval = ping_interval
        self.routes: dict[str, Route] = {}
        self.port = port  # 0: any free port (--listener-port fixes it)
        #: the base URL a rollout reaches us at (--advertise-url: a container, a sandbox)
        self.advertise_url = advertise_url.rstrip("/") if advertise_url else None
        self._runner: web.AppRunner | None = None

    @property
    def host(self) -> str:
        """Loopback, unless rollouts reach us from elsewhere (the bearer still guards it)."""
        remote = self.advertise_url is not None and not _loopback(self.advertise_url)
        return "0.0.0.0" if remote else "127.0.0.1"

    def url_for(self, rollout_id: str) -> str:
        base = self.advertise_url or f"http://127.0.0.1:{self.port}"
        return f"{base}/v1/rollouts/{rollout_id}"

    def register(self, rollout_id: str, complete: Complete, session: str | None = None) -> Route:
        """Route ``rollout_id``'s calls to ``complete``, as the attempt registering it
        (its session id and the meter counting its calls)."""
        route = self.routes[rollout_id] = Route(complete, session, meter=METER.get())
        return route

    def unregister(self, rollout_id: str) -> Route | None:
        return self.routes.pop(rollout_id, None)

    async def start(self) -> None:
        from aiohttp import web

        app = web.Application(client_max_size=MAX_REQUEST)
        app.router.add_post("/v1/rollouts/{rollout_id}/chat/completions", self._handle)
        self._runner = web.AppRunner(
            app, access_log=None, handle_signals=False, handler_cancellation=True
        )
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, self.port, backlog=1024)
        try:
            await site.start()
        except OSError as exc:
            await self._runner.cleanup()
            self._runner = None
            raise BridgePortError(
                f"cannot listen on port {self.port} for the model bridge: {exc.strerror or exc}",
                hint="pick another port, or let any free one be chosen",
                code="PORT_IN_USE",
            ) from exc
        server = site._server
        sockets = getattr(server, "sockets", None) or []
        self.port = int(sockets[0].getsockname()[1])

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    # ------------------------------------------------------------ requests

    def _authorized(self, request: web.Request) -> bool:
        header = request.headers.get("Authorization", "")
        scheme, _, value = header.partition(" ")
        return scheme.lower() == "bearer" and hmac.compare_digest(
            value.strip().encode(), self._token_bytes
        )

    async def _parse(self, request: web.Request) -> tuple[Route, dict[str, Any]]:
        if not self._authorized(request):
            raise BridgeError(401, "invalid or missing bearer token", "authentication_error")
        rollout_id = request.match_info["rollout_id"]
        route = self.routes.get(rollout_id)
        if route is None:
            raise BridgeError(
                404, f"rollout {rollout_id!r} is not running", "invalid_request_error"
            )
        try:
            body = loads(await request.read())
        except ValueError as exc:
            why = "nested too deeply" if "nested" in str(exc) else "not JSON"
            raise BridgeError(400, f"the body is {why}", "invalid_request_error") from exc
        if not isinstance(body, dict):
            raise BridgeError(400, "the body must be a JSON object", "invalid_request_error")
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            raise BridgeError(400, "messages must be a non-empty array", "invalid_request_error")
        n = body.get("n", 1)
        if n is not None and n != 1:
            raise BridgeError(400, f"n must be 1, got {n!r}", "invalid_request_error", "n")
        refused = sorted(REDIRECTS.intersection(body))
        if refused:
            raise BridgeError(
                400,
                f"{', '.join(refused)} cannot be set here: the run decides where model calls go",
                "invalid_request_error",
                refused[0],
            )
        return route, body

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        """One call; whatever goes wrong is an answer to the rollout, never a traceback."""
        from aiohttp import web

        try:
            return await self._answer(request)
        except (asyncio.CancelledError, web.HTTPException):
            raise
        except Exception as exc:
            logger.debug("bridge: %s: %s", type(exc).__name__, exc)
            error = BridgeError(500, f"internal error ({type(exc).__name__})", "internal_error")
            return web.json_response(error.body(), status=500)

    async def _answer(self, request: web.Request) -> web.StreamResponse:
        from aiohttp import web

        try:
            route, body = await self._parse(request)
        except BridgeError as exc:
            return web.json_response(exc.body(), status=exc.status)
        messages = body["messages"]
        params = {k: v for k, v in body.items() if k not in OWN_FIELDS}
        requested = body.get("model")
        model = requested if isinstance(requested, str) else "osmosis-rollout"
        call = asyncio.ensure_future(self._call(route, messages, params))
        if body.get("stream") is True:
            return await self._stream(request, call, model)
        try:
            response = await call
        except BridgeError as exc:
            return web.json_response(exc.body(), status=exc.status)
        response = dict(response)
        response["model"] = model
        return web.json_response(response, dumps=_dumps)

    async def _call(
        self, route: Route, messages: list[Any], params: dict[str, Any]
    ) -> dict[str, Any]:
        if route.session is not None:
            SESSION_ID.set(route.session)  # this handler's own task: the attempt's session
        METER.set(route.meter)
        try:
            response = await route.complete(messages, params)
            _, tokens = parse_reply(response)
        except ProviderRequestError as exc:
            status = exc.status_code if exc.status_code and 400 <= exc.status_code < 500 else 502
            raise BridgeError(status, exc.message, "upstream_error", exc.code) from exc
        except OsmosisError as exc:
            raise BridgeError(502, exc.message, "upstream_error", exc.code) from exc
        route.calls += 1
        route.tokens += tokens
        return response

    async def _stream(
        self, request: web.Request, call: asyncio.Future[dict[str, Any]], model: str
    ) -> web.StreamResponse:
        from aiohttp import web

        response = web.StreamResponse(
            headers={
                "Content-Type": "text/event-stream",
                "Cache-Control": "no-cache",
                "X-Accel-Buffering": "no",
            }
        )
        try:
            await response.prepare(request)
            await response.write(b": ping\n\n")
            while True:
                done, _ = await asyncio.wait({call}, timeout=self.ping_interval)
                if done:
                    break
                await response.write(b": ping\n\n")
            try:
                event = b"data: " + _dumps(as_chunk(call.result(), model)).encode()
            except BridgeError as exc:
                event = b"event: error\ndata: " + _dumps(exc.body()).encode()
            except Exception as exc:  # e.g. an answer nested too deeply to re-encode
                error = BridgeError(500, f"internal error ({type(exc).__name__})", "internal_error")
                event = b"event: error\ndata: " + _dumps(error.body()).encode()
            await response.write(event + b"\n\n")
            await response.write(b"data: [DONE]\n\n")
            await response.write_eof()
        except (ConnectionError, RuntimeError) as exc:  # the rollout hung up mid-stream
            logger.debug("bridge: stream closed early: %s", exc)
        finally:
            if not call.done():
                call.cancel()
                with contextlib.suppress(BaseException):
                    await call
        return response


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def as_chunk(response: Mapping[str, Any], model: str) -> dict[str, Any]:
    """A whole chat completion as one ``chat.completion.chunk``."""
    choices = response.get("choices")
    chunk_choices = []
    for position, choice in enumerate(choices if isinstance(choices, list) else []):
        if not isinstance(choice, dict):
            continue
        found = choice.get("message")
        message: dict[str, Any] = found if isinstance(found, dict) else {}
        delta: dict[str, Any] = {"role": message.get("role") or "assistant"}
        for key, value in message.items():
            if key in ("role", "tool_calls") or value is None:
                continue
            delta[key] = value
        delta.setdefault("content", None if message.get("tool_calls") else "")
        calls = message.get("tool_calls")
        if isinstance(calls, list) and calls:
            delta["tool_calls"] = [
                {"index": i, **call} if isinstance(call, dict) else call
                for i, call in enumerate(calls)
            ]
        chunk_choices.append(
            {
                "index": choice.get("index", position),
                "delta": delta,
                "finish_reason": choice.get("finish_reason")
                or ("tool_calls" if delta.get("tool_calls") else "stop"),
                "logprobs": choice.get("logprobs"),
            }
        )
    chunk: dict[str, Any] = {
        "id": str(response.get("id") or f"chatcmpl-{secrets.token_hex(8)}"),
        "object": "chat.completion.chunk",
        "created": int(response.get("created") or time.time()),
        "model": model,
        "choices": chunk_choices,
    }
    usage = response.get("usage")
    if isinstance(usage, dict):
        chunk["usage"] = usage
    return chunk
