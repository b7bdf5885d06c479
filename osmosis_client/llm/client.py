"""``ModelClient``: one pooled async client for an OpenAI-compatible endpoint.

Built on aiohttp (:mod:`osmosis_client.llm.session`: one session per endpoint, proxies
from the environment, the process's TLS policy; measured ~10x httpx's async transport
under concurrency, see docs/benchmarks.md). Retries follow the shared
:class:`RetryPolicy` — 408, 429, 5xx and connection errors, at most 5 retries and 60 s
per call, ``Retry-After`` honoured — and never other 4xx. Keys are sent only as
``Authorization`` headers and never appear in errors.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import os
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from osmosis_client._plan import drive_async
from osmosis_client._retry import Failure, RetryPolicy, Success, retry_plan
from osmosis_client._tls import ssl_context
from osmosis_client._version import __version__
from osmosis_client.errors import OsmosisError
from osmosis_client.llm import answers, mock
from osmosis_client.llm.answers import MAX_RESPONSE_BYTES, Message, parse_reply
from osmosis_client.llm.cache import CACHE, HITS
from osmosis_client.llm.failures import name_failure
from osmosis_client.llm.providers import ModelTarget
from osmosis_client.llm.routing import PATHS, REST_SECONDS, SESSION_ID, Route, Routes
from osmosis_client.llm.usage import COUNTED, METER, TRIES, call_usage
from osmosis_client.llm.wire import WIRE, exchange

if TYPE_CHECKING:
    import aiohttp

logger = logging.getLogger("osmosis_client")
#: one line per model call (status, time): a front end shows it only when asked (-vv)
calls_logger = logging.getLogger("osmosis_client.requests")
#: model calls retried in this process so far (progress displays show the count)
RETRIED = [0]

__all__ = [
    "MAX_RESPONSE_BYTES",
    "REST_SECONDS",
    "SESSION_ID",
    "Message",
    "ModelClient",
    "model_retry_policy",
    "parse_reply",
]

DEFAULT_REQUEST_TIMEOUT = 600.0  # seconds for a whole call, however slowly bytes trickle in
#: what one try produced: (status, a chat completion or the bytes of an error, Retry-After)
Answer = tuple[int, "bytes | dict[str, Any]", "str | None"]


#: a check of an endpoint: retried once, within 10 s (a bad endpoint fails fast)
PROBE_POLICY = RetryPolicy(max_retries=1, max_elapsed=10.0)


def model_retry_policy() -> RetryPolicy:
    """cli.md: model calls retry at most 5 times and for at most 60 s per call."""
    return RetryPolicy(max_retries=5, max_elapsed=60.0)


class ModelClient:
    """Chat completions against one target; create it inside the running event loop's life."""

    def __init__(
        self,
        target: ModelTarget,
        *,
        concurrency: int = 64,
        request_timeout: float = DEFAULT_REQUEST_TIMEOUT,
        retry_policy: RetryPolicy | None = None,
        default_params: Mapping[str, Any] | None = None,
        sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
        monotonic: Callable[[], float] = time.monotonic,
        ca_bundle: str | os.PathLike[str] | None = None,
    ) -> None:
        self.target = target
        self.concurrency = max(1, concurrency)
        self.request_timeout = request_timeout
        self.retry_policy = retry_policy or model_retry_policy()
        self.default_params = dict(default_params or {})
        self._sleep = sleep
        self._monotonic = monotonic
        self._session: aiohttp.ClientSession | None = None
        self._socks: dict[str, aiohttp.ClientSession] = {}  # a session per SOCKS proxy
        self._headers = {
            "Content-Type": "application/json",
            "Accept": "application/json",
            "User-Agent": f"osmosis-client/{__version__}",
        }
        self._routes = Routes(target, self._headers)
        #: the process's one TLS policy (osmosis_client._tls) — built (reading the roots
        #: costs ~20 ms) only when a replica or its proxy speaks TLS, or a bundle is given
        self._ssl = (
            ssl_context(ca_bundle)
            if ca_bundle is not None or any(route.tls for route in self._routes.all)
            else None
        )
        #: until a call succeeds: where each failed call's error goes (watch_first_calls)
        self._watch: Callable[[OsmosisError], None] | None = None

    def __repr__(self) -> str:
        return f"ModelClient({self.target.describe()!r})"

    def _session_or_new(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            from osmosis_client.llm.session import new_session

            self._session = new_session(
                limit=self.concurrency * max(1, len(self._routes.all)),
                ssl_context=self._ssl,
                timeout=self.request_timeout,
            )
        return self._session

    def _session_for(self, route: Route, shared: aiohttp.ClientSession) -> aiohttp.ClientSession:
        """The session a try goes out on: the shared one, or its SOCKS proxy's own."""
        if not route.socks:
            return shared
        assert route.proxy is not None
        session = self._socks.get(route.proxy)
        if session is None or session.closed:
            from osmosis_client.llm.session import socks_session

            session = self._socks[route.proxy] = socks_session(
                route.proxy,
                limit=self.concurrency,
                ssl_context=self._ssl,
                timeout=self.request_timeout,
            )
        return session

    async def aclose(self) -> None:
        """Close every connection (in-flight calls see their connections closed)."""
        for session in (self._session, *self._socks.values()):
            if session is not None and not session.closed:
                await session.close()

    async def __aenter__(self) -> ModelClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    # ---------------------------------------------------------------- calls

    async def chat(
        self, messages: Sequence[Message], params: Mapping[str, Any] | None = None
    ) -> tuple[Message, int]:
        """(assistant message, total tokens) for one chat-completions call."""
        response = await self.complete(messages, params)
        return parse_reply(response)

    async def complete(
        self,
        messages: Sequence[Message],
        params: Mapping[str, Any] | None = None,
        *,
        retry_policy: RetryPolicy | None = None,
    ) -> dict[str, Any]:
        """The raw chat-completions response body."""
        payload: dict[str, Any] = {**self.default_params, **(params or {})}
        payload["model"] = self.target.model
        payload["messages"] = list(messages)
        if payload.get("stream") is True and "stream_options" not in payload:
            payload["stream_options"] = {"include_usage": True}  # tokens are counted
        use = CACHE.get()
        if use is not None and not self.target.is_mock:
            from osmosis_client.llm.cached import through_cache

            result, said = await through_cache(self, use, payload, retry_policy)
            hits = HITS.get()
            if hits is not None and said is not None:
                hits.append(said)
            if said is not None and said["from"] is not None:
                return result  # no call made: nothing is spent
        else:
            result = await self._call(payload, retry_policy)
        meter = METER.get()
        if meter is not None and not COUNTED.get():  # an attempt counts its calls, by model
            meter.add(self.target.model_path, call_usage(result))
        return result

    async def _call(
        self, payload: dict[str, Any], retry_policy: RetryPolicy | None
    ) -> dict[str, Any]:
        """The call itself: the mock, else the endpoint (watched until one succeeds)."""
        if self.target.is_mock:
            return await mock.complete(self.target.model, payload)
        if self._watch is None:
            return await self._post(payload, retry_policy or self.retry_policy)
        try:
            result = await self._post(payload, retry_policy or PROBE_POLICY)
        except OsmosisError as exc:
            watch = self._watch
            if watch is not None:
                watch(exc)
            raise
        self._watch = None  # proven: the endpoint answers
        return result

    def watch_first_calls(self, on_failure: Callable[[OsmosisError], None]) -> None:
        """Until one call succeeds, hand each failed call's error to ``on_failure`` and
        retry calls only briefly (as :meth:`probe`): the first calls of a run check the
        endpoint and the key — no request of its own, no window slot taken."""
        self._watch = on_failure

    async def probe(self) -> None:
        """One small request, retried once, so a bad endpoint fails before a run starts."""
        await self.complete(
            [{"role": "user", "content": "ping"}], {"max_tokens": 1}, retry_policy=PROBE_POLICY
        )

    async def _post(self, payload: dict[str, Any], policy: RetryPolicy) -> dict[str, Any]:
        call = _Call(self, payload)
        debug = calls_logger.isEnabledFor(logging.DEBUG)  # -vv: every call, with its time
        started = time.monotonic() if debug else 0.0
        try:  # the first try outside the plan: the common success costs no plan machinery
            first: Any = await call.send(None)
        except call.errors as exc:
            first = exc
        verdict = call.classify(first)
        if debug:
            took = (time.monotonic() - started) * 1000
            route = self._routes.all[0]
            calls_logger.debug(
                "POST %s/%s -> %s (%.0f ms)",
                route.shown,
                PATHS[route.wire],
                _status_label(first),
                took,
            )
        if isinstance(verdict, Success):
            return verdict.value
        route = self._routes.all[0]
        describe = f"POST {route.shown}/{PATHS[route.wire]}"
        classify = call.classify
        failed = TRIES.get()
        if failed is not None:
            failed.append(_failed_try(first))
            classify = functools.partial(_noted, call.classify, failed)
        plan = retry_plan(
            None, policy, classify, monotonic=self._monotonic, describe=describe, after=verdict
        )

        async def sleep(seconds: float) -> None:  # each retry of a model call is counted
            RETRIED[0] += 1
            await self._sleep(seconds)

        return await drive_async(plan, call.send, sleep, call.errors)


class _Call:
    """One logical call: tries across replicas, and what each outcome means."""

    __slots__ = ("client", "errors", "last", "payload", "session")

    def __init__(self, client: ModelClient, payload: dict[str, Any]) -> None:
        self.client = client
        self.payload = payload
        self.session = client._session_or_new()
        #: what one try may raise: aiohttp's errors (protocol ones included) and the socket's
        self.errors = _try_errors()
        self.last: Route = client._routes.all[0]

    async def send(self, _: Any) -> Answer:
        """One try: the next healthy replica; a replica that fails with a connection
        error or a 5xx is rested and the request goes to another at once."""
        now = self.client._monotonic
        candidates = self.client._routes.order(now())
        wire = WIRE.get()  # a caller keeping what went over the wire (run/execute/calls.py)
        for position, route in enumerate(candidates):
            self.last = route
            others = position < len(candidates) - 1
            body = route.request(self.payload)
            sink: list[bytes] | None = [] if wire is not None else None
            began = time.perf_counter()
            try:  # the request in place (not a coroutine of its own: one per call saved)
                session = self.client._session_for(route, self.session)
                async with session.post(  # a redirect is an answer: the key never follows
                    route.url,
                    data=body,
                    headers=route.headers(),
                    proxy=None if route.socks else route.proxy,
                    allow_redirects=False,
                ) as response:
                    outcome = await answers.read_answer(response, route, sink)
                    if wire is not None:
                        wire.append(_exchange(route, body, began, response, sink))
            except self.errors as exc:
                if wire is not None:
                    wire.append(_exchange(route, body, began, error=exc))
                route.rest(now())
                if others:
                    continue
                raise
            if outcome[0] >= 500 and others:
                route.rest(now())
                continue
            if outcome[0] < 500:
                route.healthy()
            return outcome
        raise AssertionError("unreachable")  # pragma: no cover

    def classify(self, outcome: Any) -> Success[dict[str, Any]] | Failure:
        route = self.last
        if isinstance(outcome, BaseException):
            error, retryable = name_failure(outcome, route)  # its cause kept beneath it
            return Failure(error, retryable=retryable)
        status, raw, retry_after = outcome
        if isinstance(raw, dict):
            return Success(route.finish(raw))  # converted, or a stream assembled
        if status < 300:
            return Success(route.finish(answers.decode(raw, route.shown)))
        return Failure(
            answers.status_error(status, raw, route), status=status, retry_after=retry_after
        )


def _exchange(
    route: Route,
    body: bytes,
    began: float,
    response: Any = None,
    sink: list[bytes] | None = None,
    error: BaseException | None = None,
) -> dict[str, Any]:
    """One try as the record keeps it (:mod:`osmosis_client.llm.wire`)."""
    return exchange(
        f"{route.shown}/{PATHS[route.wire]}",
        body,
        status=response.status if response is not None else None,
        headers=response.headers if response is not None else None,
        received=b"".join(sink) if sink is not None and response is not None else None,
        duration_ms=(time.perf_counter() - began) * 1000,
        error=None if error is None else f"{type(error).__name__}: {error}",
    )


@functools.cache
def _try_errors() -> tuple[type[BaseException], ...]:
    import aiohttp  # imported on the first call, not with the module

    return (aiohttp.ClientError, asyncio.TimeoutError, OSError)


def _status_label(outcome: Any) -> str:
    return str(outcome[0]) if isinstance(outcome, tuple) else type(outcome).__name__


def _failed_try(outcome: Any) -> str:
    """A failed try as a transcript says it: ``HTTP 503``, ``ServerDisconnectedError``."""
    return f"HTTP {outcome[0]}" if isinstance(outcome, tuple) else type(outcome).__name__


def _noted(classify: Callable[[Any], Any], failed: list[str], outcome: Any) -> Any:
    """``classify``, noting each try that failed (its status or error) in ``failed``."""
    verdict = classify(outcome)
    if not isinstance(verdict, Success):
        failed.append(_failed_try(outcome))
    return verdict
