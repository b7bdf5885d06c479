"""The rollout server for 0.2 agent loops: the wire protocol of rollout-protocol.md part A.

    GET  /health           {status: "healthy", agent_loop, active_rollouts, completed_rollouts}
    GET  /platform/health  the same, behind the API key (404 when the server has none)
    POST /v1/rollout/init  202 {rollout_id, tools}; the rollout runs in the background

A rollout calls the trainer for every model turn (``POST {server_url}/v1/chat/completions``,
defaults always sent, no tools: the trainer attaches them) and reports its end
(``POST {server_url}/v1/rollout/completed``). A trainer that disappears only costs
failed callbacks, which are logged; the server and the rollout record stay.

Built on aiohttp's server: the runner already depends on aiohttp, it starts in
milliseconds, and one event loop serves hundreds of concurrent rollouts.

Beyond the published server, for a network that may be hostile: a client must send
a request's headers within 10 s and its body within 60 s (:mod:`osmosis_client._serving`);
at most ``max_queued`` rollouts wait beyond the ``max_concurrent`` running ones
(more: 429 with ``Retry-After``); every answer is read whole and capped; callbacks
never follow redirects; a malformed request is a 4xx, never a traceback.

Idempotency (a repeat is the same 202; an id/key clash is 409): ``records.py``.
"""

from __future__ import annotations

import asyncio
import hmac
import logging
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from osmosis_client._serving import SlowClientGuard
from osmosis_client._wire import loads
from osmosis_client.rollout.agent_loop.loop import execute
from osmosis_client.rollout.agent_loop.records import Conflict, Record, ServerStats
from osmosis_client.rollout.agent_loop.schemas import (
    RolloutMetrics,
    RolloutRequest,
    RolloutResult,
    RolloutStatus,
    tool_to_dict,
)
from osmosis_client.rollout.agent_loop.trainer import (
    MODEL_CALL_TIMEOUT,
    TrainerLLM,
    completion_policy,
    post_json,
)

if TYPE_CHECKING:
    from aiohttp import ClientSession, web

logger = logging.getLogger("osmosis_client.serve")

DEFAULT_MAX_CONCURRENT = 100
DEFAULT_MAX_QUEUED = 1000  # rollouts waiting for a slot beyond the running ones
MAX_REQUEST = 8 << 20
RETRY_AFTER = 1  # seconds, when the queue is full
RECORD_TTL = 3600.0  # a finished rollout's id answers repeats for an hour
UNAUTHORIZED = {"detail": "Invalid or missing API key"}
Headers = Mapping[str, str]
#: an answer, whatever serves it: (status, JSON body, extra headers)
Reply = tuple[int, dict[str, Any], dict[str, str]]


class RolloutServer:
    """An agent loop behind part A's HTTP protocol."""

    def __init__(
        self,
        agent_loop: Any,
        *,
        api_key: str | None = None,
        max_concurrent: int = DEFAULT_MAX_CONCURRENT,
        max_queued: int = DEFAULT_MAX_QUEUED,
        debug_dir: Path | None = None,
        record_ttl: float = RECORD_TTL,
        model_timeout: float = MODEL_CALL_TIMEOUT,
        guard: SlowClientGuard | None = None,
        sleep: Callable[[float], Any] = asyncio.sleep,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.loop = agent_loop
        self.api_key = api_key
        self.max_concurrent = max(1, max_concurrent)
        self.max_queued = max(0, max_queued)
        self.debug_dir = debug_dir
        self.record_ttl = record_ttl
        self.model_timeout = model_timeout
        self.guard = guard or SlowClientGuard()
        self.stats = ServerStats()
        self._sleep = sleep
        self._monotonic = monotonic
        self._slots = asyncio.Semaphore(self.max_concurrent)
        self._session: ClientSession | None = None
        self._session_loop: asyncio.AbstractEventLoop | None = None
        self._runner: web.AppRunner | None = None
        self._listener: asyncio.AbstractServer | None = None
        self.port: int | None = None

    # ------------------------------------------------------------ the app

    def app(self) -> web.Application:
        from aiohttp import web

        app = web.Application(
            client_max_size=MAX_REQUEST, middlewares=[self.guard.middleware(), _no_tracebacks]
        )
        app.router.add_get("/health", self._health)
        app.router.add_get("/platform/health", self._platform_health)
        app.router.add_post("/v1/rollout/init", self._init)
        return app

    async def start(self, host: str, port: int) -> int:
        """Start serving; returns the bound port (``port=0`` picks a free one)."""
        from aiohttp import web

        self._runner = web.AppRunner(self.app(), access_log=None, handle_signals=False)
        await self._runner.setup()
        server = self._runner.server
        assert server is not None
        loop = asyncio.get_running_loop()
        self._listener = await loop.create_server(
            self.guard.wrap(server), host, port, backlog=1024, reuse_address=True
        )
        self.guard.start()
        sockets = list(self._listener.sockets or ())
        self.port = int(sockets[0].getsockname()[1]) if sockets else port
        return self.port

    async def stop(self) -> None:
        """Cancel what runs (cancelled rollouts send nothing) and close."""
        tasks = [r.task for r in self.stats.rollouts.values() if r.task and not r.task.done()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        if self._listener is not None:
            self._listener.close()
        await self.guard.stop()
        if self._runner is not None:
            await self._runner.cleanup()
        if self._session is not None:
            await self._session.close()

    async def serve_forever(self, host: str, port: int) -> None:
        await self.start(host, port)
        try:
            await asyncio.Event().wait()
        finally:
            await self.stop()

    # ------------------------------------------------------------ routes

    def _health_body(self) -> dict[str, Any]:
        return {
            "status": "healthy",
            "agent_loop": getattr(self.loop, "name", type(self.loop).__name__),
            "active_rollouts": self.stats.active,
            "completed_rollouts": self.stats.completed,
        }

    async def dispatch(self, method: str, path: str, headers: Headers, body: bytes) -> Reply:
        """One request, whatever serves it (aiohttp here, an ASGI server for ``app``)."""
        routes = {
            "/health": ("GET", self._health_reply),
            "/platform/health": ("GET", self._platform_health_reply),
            "/v1/rollout/init": ("POST", self._init_reply),
        }
        route = routes.get(path)
        if route is None:
            return 404, {"detail": "Not Found"}, {}
        allowed, handler = route
        if method != allowed and not (allowed == "GET" and method == "HEAD"):
            return 405, {"detail": "Method Not Allowed"}, {"Allow": allowed}
        return await handler(headers, body)

    async def _health_reply(self, headers: Headers, body: bytes) -> Reply:
        return 200, self._health_body(), {}

    async def _platform_health_reply(self, headers: Headers, body: bytes) -> Reply:
        if self.api_key is None:
            return 404, {"detail": "Not Found"}, {}
        if not self._authorized(headers):
            return 401, UNAUTHORIZED, {}
        return 200, self._health_body(), {}

    async def _respond(self, request: web.Request, reply: Reply) -> web.Response:
        from aiohttp import web

        status, body, headers = reply
        return web.json_response(body, status=status, headers=headers or None)

    async def _health(self, request: web.Request) -> web.Response:
        return await self._respond(request, await self._health_reply(request.headers, b""))

    async def _platform_health(self, request: web.Request) -> web.Response:
        reply = await self._platform_health_reply(request.headers, b"")
        return await self._respond(request, reply)

    def _authorized(self, headers: Headers) -> bool:
        if self.api_key is None:
            return True
        given = headers.get("Authorization", "") or headers.get("authorization", "")
        if given.lower().startswith("bearer "):
            given = given[7:].strip()
        # header bytes that are not UTF-8 arrive as surrogates: compare bytes, never fail
        return hmac.compare_digest(given.encode("utf-8", "surrogateescape"), self.api_key.encode())

    async def _init(self, http: web.Request) -> web.Response:
        if not self._authorized(http.headers):
            return await self._respond(http, (401, UNAUTHORIZED, {}))
        raw = await self.guard.read_body(http)
        if raw is None:
            late = {"detail": "the request body did not arrive in time"}
            return await self._respond(http, (408, late, {"Connection": "close"}))
        return await self._respond(http, await self._init_reply(http.headers, raw))

    async def _init_reply(self, headers: Headers, raw: bytes) -> Reply:
        if not self._authorized(headers):
            return 401, UNAUTHORIZED, {}
        try:
            body = loads(raw)
        except ValueError as exc:
            detail = [
                {"type": "json_invalid", "loc": ["body", 0], "msg": f"JSON decode error: {exc}"}
            ]
            return 422, {"detail": detail}, {}
        try:
            if not isinstance(body, dict):
                raise ValueError("the body must be a JSON object")
            request = RolloutRequest.model_validate(body)
        except ValidationError as exc:
            return 422, {"detail": _detail(exc)}, {}
        except (ValueError, RecursionError) as exc:
            msg = str(exc) if isinstance(exc, ValueError) else "the body is nested too deeply"
            detail = [{"type": "model_attributes_type", "loc": ["body"], "msg": msg}]
            return 422, {"detail": detail}, {}
        try:
            record = self.stats.existing(request, self._monotonic(), self.record_ttl)
        except Conflict as exc:
            return 409, {"detail": str(exc)}, {}
        if record is None:
            if self.stats.active >= self.max_concurrent + self.max_queued:
                self.stats.refused_busy += 1
                busy = {"detail": f"busy: {self.stats.active} rollouts running or queued"}
                return 429, busy, {"Retry-After": str(RETRY_AFTER)}
            try:
                tools = [tool_to_dict(t) for t in self.loop.get_tools(request)]
            except Exception as exc:
                logger.error("get_tools failed for %s: %s", request.rollout_id, exc)
                tools = None
            record = self._launch(request, tools)
        return 202, {"rollout_id": request.rollout_id, "tools": record.tools}, {}

    # ------------------------------------------------------------ rollouts

    def _launch(self, request: RolloutRequest, tools: list[dict[str, Any]] | None) -> Record:
        record = self.stats.add(request, tools or [])
        record.task = asyncio.ensure_future(self._rollout(request, record, tools))
        return record

    async def _rollout(
        self, request: RolloutRequest, record: Record, tools: list[dict[str, Any]] | None
    ) -> None:
        try:
            async with self._slots:
                result = await self._run_loop(request, tools)
            record.result = result
            await self._report(request, result)
        except asyncio.CancelledError:
            logger.info("rollout %s cancelled", request.rollout_id)
            raise
        finally:
            self.stats.finish(record, self._monotonic())

    def session(self) -> ClientSession:
        """The client for trainer callbacks, of the running event loop (created on first
        use: an ASGI server, or a test client, may serve from a loop of its own)."""
        import aiohttp

        from osmosis_client._tls import ssl_context

        loop = asyncio.get_running_loop()
        if self._session is None or self._session.closed or self._session_loop is not loop:
            # the trainer may be across a network: the process's one TLS policy
            connector = aiohttp.TCPConnector(ssl=ssl_context())
            self._session, self._session_loop = aiohttp.ClientSession(connector=connector), loop
        return self._session

    async def _run_loop(
        self, request: RolloutRequest, tools: list[dict[str, Any]] | None
    ) -> RolloutResult:
        llm = TrainerLLM(request, self.session(), sleep=self._sleep, timeout=self.model_timeout)
        started = self._monotonic()
        try:
            if tools is None:
                raise RuntimeError("get_tools() failed for this request")
            return await execute(self.loop, request, llm, tools=tools, debug_dir=self.debug_dir)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            logger.warning("rollout %s failed: %s: %s", request.rollout_id, type(exc).__name__, exc)
            metrics = RolloutMetrics(total_latency_ms=(self._monotonic() - started) * 1000)
            return RolloutResult(
                status=RolloutStatus.ERROR,
                final_messages=[],
                finish_reason="error",
                error_message=str(exc) or type(exc).__name__,
                metrics=metrics,
            )

    async def _report(self, request: RolloutRequest, result: RolloutResult) -> None:
        body: dict[str, Any] = {
            "rollout_id": request.rollout_id,
            "status": result.status.value,
            "final_messages": result.final_messages,
            "finish_reason": result.finish_reason,
            "metrics": result.metrics.model_dump(mode="json"),
            "extra_fields": {},
        }
        if result.error_message is not None:
            body["error_message"] = result.error_message
        if result.reward is not None:
            body["reward"] = result.reward
        url = request.server_url.rstrip("/") + "/v1/rollout/completed"
        try:
            await post_json(
                self.session(),
                url,
                body,
                request.api_key,
                completion_policy(),
                timeout=self.model_timeout,
                sleep=self._sleep,
            )
        except Exception as exc:
            self.stats.callbacks_failed += 1
            logger.warning("could not report rollout %s: %s", request.rollout_id, exc)


def _detail(exc: ValidationError) -> list[dict[str, Any]]:
    """FastAPI-style validation details: ``[{type, loc: ["body", field], msg}]``."""
    return [
        {"type": err["type"], "loc": ["body", *err["loc"]], "msg": err["msg"]}
        for err in exc.errors(include_url=False, include_context=False, include_input=False)
    ]


async def _no_tracebacks(request: Any, handler: Any) -> Any:
    """Anything unexpected in a handler is a one-line 500, never a traceback on stderr."""
    from aiohttp import web

    try:
        return await handler(request)
    except (asyncio.CancelledError, web.HTTPException):
        raise
    except Exception as exc:
        logger.warning("%s %s failed: %s", request.method, request.path, type(exc).__name__)
        return web.json_response({"detail": "Internal Server Error"}, status=500)


_no_tracebacks.__middleware_version__ = 1  # type: ignore[attr-defined]
