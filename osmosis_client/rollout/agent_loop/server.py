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

Idempotency: a request names its rollout (``rollout_id``) and, optionally, itself
(``idempotency_key``; absent, the rollout id stands in). While a rollout runs and
for an hour after it ends, a request with the same rollout id *and* the same key is
a repeat (the same 202, nothing started); the same rollout id with another key, or
the same key with another rollout id, is a conflict (409) — never a 202 for a
rollout that will not run.
"""

from __future__ import annotations

import asyncio
import collections
import hmac
import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from osmosis_client._plan import drive_async
from osmosis_client._retry import Failure, RetryPolicy, Success, retry_plan
from osmosis_client._serving import SlowClientGuard
from osmosis_client._wire import BodyTooLarge, loads, read_body
from osmosis_client.rollout.agent_loop.exceptions import (
    OsmosisServerError,
    OsmosisTimeoutError,
    OsmosisTransportError,
)
from osmosis_client.rollout.agent_loop.loop import execute
from osmosis_client.rollout.agent_loop.schemas import (
    CompletionsResult,
    RolloutMetrics,
    RolloutRequest,
    RolloutResult,
    RolloutStatus,
    tool_to_dict,
)

if TYPE_CHECKING:
    from aiohttp import ClientSession, web

logger = logging.getLogger("osmosis_client.serve")

DEFAULT_MAX_CONCURRENT = 100
DEFAULT_MAX_QUEUED = 1000  # rollouts waiting for a slot beyond the running ones
MAX_FINISHED = 20_000  # finished records kept for repeats (the oldest are forgotten first)
MAX_REQUEST = 8 << 20
MAX_ANSWER = 64 << 20  # one answer from the trainer, decompressed
RETRY_AFTER = 1  # seconds, when the queue is full
RECORD_TTL = 3600.0  # a finished rollout's id answers repeats for an hour
MODEL_CALL_TIMEOUT = 300.0
#: what every model call to the trainer carries (other parameters are dropped)
SAMPLING_DEFAULTS: dict[str, Any] = {"temperature": 1.0, "top_p": 1.0, "max_tokens": 512}
UNAUTHORIZED = {"detail": "Invalid or missing API key"}


def model_call_policy() -> RetryPolicy:
    """Trainer model calls: 5xx and timeouts retried 3 times after 1, 2, 4 s; 4xx never."""
    return RetryPolicy(
        max_retries=3,
        base_delay=1.0,
        max_delay=4.0,
        jitter=False,
        retry_statuses=frozenset(range(500, 600)),
    )


def completion_policy() -> RetryPolicy:
    """The completion callback: 5xx retried twice."""
    return RetryPolicy(
        max_retries=2,
        base_delay=1.0,
        max_delay=2.0,
        jitter=False,
        retry_statuses=frozenset(range(500, 600)),
    )


@dataclass
class _Record:
    rollout_id: str
    tools: list[dict[str, Any]]
    key: str = ""  # the idempotency key (the rollout id when none was given)
    task: asyncio.Task[None] | None = None
    finished_at: float | None = None
    result: RolloutResult | None = None


@dataclass
class ServerStats:
    active: int = 0  # running or queued
    completed: int = 0
    callbacks_failed: int = 0
    refused_busy: int = 0  # inits answered 429 (the queue was full)
    #: by rollout id: running ones, and finished ones for an hour
    rollouts: dict[str, _Record] = field(default_factory=dict)
    #: the same records by idempotency key
    keys: dict[str, _Record] = field(default_factory=dict)


class TrainerLLM:
    """``ctx.llm`` behind ``osmosis serve``: model calls go to the trainer."""

    def __init__(
        self,
        request: RolloutRequest,
        session: ClientSession,
        *,
        sleep: Callable[[float], Any] = asyncio.sleep,
        timeout: float = MODEL_CALL_TIMEOUT,
    ) -> None:
        self.request = request
        self.session = session
        self.sleep = sleep
        self.timeout = timeout

    async def chat_completions(
        self, messages: list[dict[str, Any]], **params: Any
    ) -> CompletionsResult:
        body: dict[str, Any] = {
            "model": "default",
            "messages": messages,
            "rollout_id": self.request.rollout_id,
            **{k: params.get(k, v) for k, v in SAMPLING_DEFAULTS.items()},
            "logprobs": True,
        }
        if params.get("stop") is not None:
            stop = params["stop"]
            body["stop"] = [stop] if isinstance(stop, str) else list(stop)
        url = self.request.server_url.rstrip("/") + "/v1/chat/completions"
        data = await post_json(
            self.session,
            url,
            body,
            self.request.api_key,
            model_call_policy(),
            timeout=self.timeout,
            sleep=self.sleep,
        )
        try:
            choice = data["choices"][0]
            message = choice["message"]
            if not isinstance(message, dict):
                raise TypeError
        except (KeyError, IndexError, TypeError):
            raise OsmosisServerError("the trainer's answer has no choices[0].message") from None
        usage = data.get("usage")
        return CompletionsResult(
            message=message,
            usage=usage if isinstance(usage, dict) else {},
            finish_reason=str(choice.get("finish_reason") or "stop"),
            token_ids=choice.get("token_ids"),
            logprobs=choice.get("logprobs"),
        )


async def post_json(
    session: ClientSession,
    url: str,
    body: dict[str, Any],
    api_key: str | None,
    policy: RetryPolicy,
    *,
    timeout: float,
    sleep: Callable[[float], Any] = asyncio.sleep,
) -> dict[str, Any]:
    """POST JSON to the trainer with the given retry policy (the one retry loop)."""
    import aiohttp

    headers = {"Content-Type": "application/json"}
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    payload = json.dumps(body).encode()

    async def send(data: bytes) -> tuple[int, bytes | None]:
        client_timeout = aiohttp.ClientTimeout(total=timeout)
        async with session.post(
            url, data=data, headers=headers, timeout=client_timeout, allow_redirects=False
        ) as resp:
            try:
                return resp.status, await read_body(resp, MAX_ANSWER)
            except BodyTooLarge:
                return resp.status, None

    def classify(outcome: Any) -> Success[dict[str, Any]] | Failure:
        if isinstance(outcome, asyncio.TimeoutError):
            return Failure(OsmosisTimeoutError(f"{url} did not answer within {timeout:g}s"))
        if isinstance(outcome, BaseException):
            return Failure(OsmosisTransportError(f"cannot reach {url} ({type(outcome).__name__})"))
        status, raw = outcome
        if raw is None:
            return Failure(
                OsmosisServerError(f"{url} answered more than {MAX_ANSWER >> 20} MiB"),
                retryable=False,
            )
        if 300 <= status < 400:  # the key would follow the redirect to wherever it points
            return Failure(
                OsmosisServerError(f"{url} answered {status} (a redirect, not followed)"),
                retryable=False,
            )
        if status < 300:
            try:
                data = loads(raw) if raw else {}
            except ValueError as exc:
                return Failure(
                    OsmosisServerError(f"{url} answered with invalid JSON ({exc})"),
                    retryable=False,
                )
            return Success(data if isinstance(data, dict) else {})
        text = " ".join(raw[:200].decode(errors="replace").split())
        return Failure(OsmosisServerError(f"{url} answered {status}: {text}"), status=status)

    plan = retry_plan(payload, policy, classify, describe=f"POST {url}")
    return await drive_async(
        plan, send, sleep, (aiohttp.ClientError, asyncio.TimeoutError, OSError)
    )


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
        self._runner: web.AppRunner | None = None
        self._listener: asyncio.AbstractServer | None = None
        self._finished: collections.deque[_Record] = collections.deque()  # in finishing order
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
        import aiohttp
        from aiohttp import web

        self._session = aiohttp.ClientSession()
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

    async def _health(self, request: web.Request) -> web.Response:
        from aiohttp import web

        return web.json_response(self._health_body())

    async def _platform_health(self, request: web.Request) -> web.Response:
        from aiohttp import web

        if self.api_key is None:
            return web.json_response({"detail": "Not Found"}, status=404)
        if not self._authorized(request):
            return web.json_response(UNAUTHORIZED, status=401)
        return web.json_response(self._health_body())

    def _authorized(self, request: web.Request) -> bool:
        if self.api_key is None:
            return True
        given = request.headers.get("Authorization", "")
        if given.lower().startswith("bearer "):
            given = given[7:].strip()
        # header bytes that are not UTF-8 arrive as surrogates: compare bytes, never fail
        return hmac.compare_digest(
            given.encode("utf-8", "surrogateescape"), self.api_key.encode()
        )

    async def _init(self, http: web.Request) -> web.Response:
        from aiohttp import web

        if not self._authorized(http):
            return web.json_response(UNAUTHORIZED, status=401)
        raw = await self.guard.read_body(http)
        if raw is None:
            return web.json_response(
                {"detail": "the request body did not arrive in time"},
                status=408,
                headers={"Connection": "close"},
            )
        try:
            body = loads(raw)
        except ValueError as exc:
            detail = [
                {"type": "json_invalid", "loc": ["body", 0], "msg": f"JSON decode error: {exc}"}
            ]
            return web.json_response({"detail": detail}, status=422)
        try:
            if not isinstance(body, dict):
                raise ValueError("the body must be a JSON object")
            request = RolloutRequest.model_validate(body)
        except ValidationError as exc:
            return web.json_response({"detail": _detail(exc)}, status=422)
        except (ValueError, RecursionError) as exc:
            msg = str(exc) if isinstance(exc, ValueError) else "the body is nested too deeply"
            detail = [{"type": "model_attributes_type", "loc": ["body"], "msg": msg}]
            return web.json_response({"detail": detail}, status=422)
        try:
            record = self._existing(request)
        except _Conflict as exc:
            return web.json_response({"detail": str(exc)}, status=409)
        if record is None:
            if self.stats.active >= self.max_concurrent + self.max_queued:
                self.stats.refused_busy += 1
                return web.json_response(
                    {"detail": f"busy: {self.stats.active} rollouts running or queued"},
                    status=429,
                    headers={"Retry-After": str(RETRY_AFTER)},
                )
            try:
                tools = [tool_to_dict(t) for t in self.loop.get_tools(request)]
            except Exception as exc:
                logger.error("get_tools failed for %s: %s", request.rollout_id, exc)
                tools = None
            record = self._launch(request, tools)
        return web.json_response(
            {"rollout_id": request.rollout_id, "tools": record.tools}, status=202
        )

    # ------------------------------------------------------------ rollouts

    def _existing(self, request: RolloutRequest) -> _Record | None:
        """A repeat of a running rollout, or of one finished less than an hour ago;
        None for a new one; :class:`_Conflict` when the id and the key disagree."""
        self._expire()
        key = request.idempotency_key or request.rollout_id
        by_id = self.stats.rollouts.get(request.rollout_id)
        by_key = self.stats.keys.get(key)
        if by_id is None and by_key is None:
            return None
        if by_id is not None and by_id is by_key:
            return by_id
        if by_id is not None:
            raise _Conflict(
                f"rollout {request.rollout_id!r} was started with another idempotency_key"
            )
        assert by_key is not None
        raise _Conflict(
            f"idempotency_key {key!r} already started rollout {by_key.rollout_id!r}"
        )

    def _launch(self, request: RolloutRequest, tools: list[dict[str, Any]] | None) -> _Record:
        key = request.idempotency_key or request.rollout_id
        record = _Record(request.rollout_id, tools or [], key)
        self.stats.rollouts[request.rollout_id] = record
        self.stats.keys[key] = record
        self.stats.active += 1
        record.task = asyncio.ensure_future(self._rollout(request, record, tools))
        return record

    def _expire(self) -> None:
        """Forget finished rollouts after an hour, and the oldest beyond MAX_FINISHED."""
        now = self._monotonic()
        finished = self._finished
        while finished and (
            len(finished) > MAX_FINISHED or now - (finished[0].finished_at or now) > self.record_ttl
        ):
            record = finished.popleft()
            if self.stats.rollouts.get(record.rollout_id) is record:
                del self.stats.rollouts[record.rollout_id]
            if self.stats.keys.get(record.key) is record:
                del self.stats.keys[record.key]

    async def _rollout(
        self, request: RolloutRequest, record: _Record, tools: list[dict[str, Any]] | None
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
            record.finished_at = self._monotonic()
            self._finished.append(record)
            self.stats.active -= 1
            self.stats.completed += 1

    async def _run_loop(
        self, request: RolloutRequest, tools: list[dict[str, Any]] | None
    ) -> RolloutResult:
        if self._session is None:
            raise RuntimeError("the server is not started")
        llm = TrainerLLM(request, self._session, sleep=self._sleep, timeout=self.model_timeout)
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
        if self._session is None:
            return
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
                self._session,
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


class _Conflict(Exception):
    """An init whose rollout id and idempotency key point at different rollouts."""


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
