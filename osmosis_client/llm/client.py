"""``ModelClient``: one pooled async client for an OpenAI-compatible endpoint.

Built on aiohttp (measured ~10x httpx's async transport under concurrency; see
docs/benchmarks.md). Retries follow the shared :class:`RetryPolicy` — 408, 429,
5xx and connection errors, at most 5 retries and 60 s per call, ``Retry-After``
honoured — and never other 4xx. Keys are sent only as ``Authorization`` headers
and never appear in errors.
"""

from __future__ import annotations

import asyncio
import contextvars
import json
import logging
import os
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from osmosis_client._plan import drive_async
from osmosis_client._redact import redact_url
from osmosis_client._retry import Failure, RetryPolicy, Success, retry_plan
from osmosis_client._tls import certificate_problem, ssl_context
from osmosis_client._version import __version__
from osmosis_client._wire import BodyTooLarge, loads, read_body
from osmosis_client.errors import (
    EndpointUnreachableError,
    ModelNotFoundError,
    ProviderRequestError,
)
from osmosis_client.llm import anthropic, mock
from osmosis_client.llm.endpoints import merge_headers
from osmosis_client.llm.providers import ModelTarget, Replica
from osmosis_client.llm.streaming import ChunkAssembler, EventDecoder

if TYPE_CHECKING:
    import aiohttp

logger = logging.getLogger("osmosis_client")

Message = dict[str, Any]
DEFAULT_REQUEST_TIMEOUT = 600.0  # seconds for a whole call, however slowly bytes trickle in
MAX_RESPONSE_BYTES = 64 << 20  # one chat completion, decompressed


#: the session id of the attempt being run (sent as ``X-Session-ID`` for sticky routing
#: on multi-replica servers); the runner sets it per attempt
SESSION_ID: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "osmosis_session_id", default=None
)
REST_SECONDS = 10.0  # a failing replica is skipped this long


class _Endpoint:
    """One replica as the client calls it: URL, headers, wire format, health."""

    def __init__(self, replica: Replica, target: ModelTarget) -> None:
        self.replica = replica
        self.anthropic = replica.api_client_type == "anthropic_messages"
        self.url = f"{replica.base_url}/{'messages' if self.anthropic else 'chat/completions'}"
        self.shown = redact_url(replica.base_url)
        key = replica.api_key.get_secret_value() if replica.api_key else None
        own: dict[str, str] = {}
        if self.anthropic:
            own.update(anthropic.headers(key))
        elif key:
            own["Authorization"] = f"Bearer {key}"
        self._headers = merge_headers(own, replica.headers, target.headers)
        self._has_session = any(k.lower() == "x-session-id" for k in self._headers)
        self.resting_until = 0.0

    def headers(self) -> dict[str, str]:
        session = None if self._has_session else SESSION_ID.get()
        return {**self._headers, "X-Session-ID": session} if session else self._headers

    def request(self, payload: dict[str, Any]) -> tuple[bytes, str]:
        body = {**payload, "model": self.replica.model}
        if self.anthropic:
            body = anthropic.to_messages_request(body)
        return json.dumps(body).encode(), self.url

    def answer(self, status: int, raw: bytes) -> bytes:
        if not self.anthropic or status >= 300:
            return raw
        try:
            data = loads(raw)
        except ValueError:
            return raw
        if not isinstance(data, dict):
            return raw
        return json.dumps(anthropic.from_messages_response(data, self.replica.model)).encode()

    def rest(self, now: float) -> None:
        self.resting_until = now + REST_SECONDS
        logger.debug("model replica %s failed: resting it for %gs", self.shown, REST_SECONDS)

    def healthy(self) -> None:
        self.resting_until = 0.0


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
        #: certificates are always verified; a named bundle is trusted besides the roots
        self._ssl = None if target.is_mock else ssl_context(ca_bundle)
        self.concurrency = max(1, concurrency)
        self.request_timeout = request_timeout
        self.retry_policy = retry_policy or model_retry_policy()
        self.default_params = dict(default_params or {})
        self._sleep = sleep
        self._monotonic = monotonic
        self._session: aiohttp.ClientSession | None = None
        self._headers = {
            "Content-Type": "application/json",
            "Accept": "application/json",
            "User-Agent": f"osmosis-client/{__version__}",
        }
        self._replicas = (
            [] if target.is_mock else [_Endpoint(r, target) for r in target.endpoints()]
        )
        self._next = 0

    def __repr__(self) -> str:
        return f"ModelClient({self.target.describe()!r})"

    def _session_or_new(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            import aiohttp

            self._session = aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(
                    limit=self.concurrency * max(1, len(self._replicas)),
                    ttl_dns_cache=300,
                    ssl=self._ssl if self._ssl is not None else True,
                ),
                timeout=aiohttp.ClientTimeout(total=self.request_timeout, sock_connect=10),
                headers=self._headers,
            )
        return self._session

    async def aclose(self) -> None:
        if self._session is not None and not self._session.closed:
            await self._session.close()

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
        if self.target.is_mock:
            return await mock.complete(self.target.model, payload)
        return await self._post(payload, retry_policy or self.retry_policy)

    async def probe(self) -> None:
        """One small request, retried once, so a bad endpoint fails before a run starts."""
        await self.complete(
            [{"role": "user", "content": "ping"}],
            {"max_tokens": 1},
            retry_policy=RetryPolicy(max_retries=1, max_elapsed=10.0),
        )

    async def _post(self, payload: dict[str, Any], policy: RetryPolicy) -> dict[str, Any]:
        import aiohttp

        session = self._session_or_new()
        errors = (aiohttp.ClientError, asyncio.TimeoutError, OSError)
        last_endpoint: list[_Endpoint] = [self._replicas[0]]

        async def send_to(endpoint: _Endpoint) -> tuple[int, bytes | dict[str, Any], str | None]:
            body, url = endpoint.request(payload)
            async with session.post(url, data=body, headers=endpoint.headers()) as response:
                status = response.status
                try:
                    if status < 300 and response.content_type == "text/event-stream":
                        return status, await _read_stream(response, endpoint.shown), None
                    raw = await read_body(response, MAX_RESPONSE_BYTES)  # whole, decompressed
                except BodyTooLarge:
                    raise ProviderRequestError(
                        f"the model endpoint {endpoint.shown} sent more than "
                        f"{MAX_RESPONSE_BYTES >> 20} MiB for one answer",
                        status_code=status,
                    ) from None
                retry_after = None if status < 300 else response.headers.get("Retry-After")
                return status, endpoint.answer(status, raw), retry_after

        async def send(_: Any) -> tuple[int, bytes | dict[str, Any], str | None]:
            """One try: the next healthy replica; a replica that fails with a connection
            error or a 5xx is rested and the request goes to another at once."""
            candidates = self._order()
            for position, endpoint in enumerate(candidates):
                last_endpoint[0] = endpoint
                others = position < len(candidates) - 1
                try:
                    outcome = await send_to(endpoint)
                except errors:
                    endpoint.rest(self._monotonic())
                    if others:
                        continue
                    raise
                if outcome[0] >= 500 and others:
                    endpoint.rest(self._monotonic())
                    continue
                if outcome[0] < 500:
                    endpoint.healthy()
                return outcome
            raise AssertionError("unreachable")  # pragma: no cover

        def classify(outcome: Any) -> Success[dict[str, Any]] | Failure:
            endpoint = last_endpoint[0]
            if isinstance(outcome, BaseException):
                problem = certificate_problem(outcome)
                if problem is not None:  # retrying cannot help
                    return Failure(self._untrusted(problem, endpoint), retryable=False)
                return Failure(self._unreachable(outcome, endpoint))
            status, raw, retry_after = outcome
            if isinstance(raw, dict):
                return Success(raw)  # an event stream, assembled
            if status < 300:
                return Success(_decode(raw, endpoint.shown))
            return Failure(
                self._status_error(status, raw, endpoint), status=status, retry_after=retry_after
            )

        describe = f"POST {self._replicas[0].shown}/…"
        try:  # the first try outside the plan: the common success costs no plan machinery
            first: Any = await send(None)
        except errors as exc:
            first = exc
        verdict = classify(first)
        if isinstance(verdict, Success):
            return verdict.value
        logger.debug("%s -> %s", describe, _status_label(first))
        plan = retry_plan(
            None, policy, classify, monotonic=self._monotonic, describe=describe, after=verdict
        )
        return await drive_async(plan, send, self._sleep, errors)

    def _order(self) -> list[_Endpoint]:
        """Replicas to try for one request: round-robin over the rested-out ones first,
        then the resting ones (soonest back first) rather than none."""
        count = len(self._replicas)
        if count == 1:
            return self._replicas
        start = self._next
        self._next = (self._next + 1) % count
        rotated = self._replicas[start:] + self._replicas[:start]
        now = self._monotonic()
        ready = [e for e in rotated if e.resting_until <= now]
        resting = sorted(
            (e for e in rotated if e.resting_until > now), key=lambda e: e.resting_until
        )
        return ready + resting

    def _unreachable(self, exc: BaseException, endpoint: _Endpoint) -> EndpointUnreachableError:
        where = endpoint.shown
        return EndpointUnreachableError(
            f"cannot reach the model endpoint {where} ({type(exc).__name__})",
            hint="check the base URL and that the server is running",
            data={"endpoint": where},
        )

    def _untrusted(self, problem: str, endpoint: _Endpoint) -> EndpointUnreachableError:
        return EndpointUnreachableError(
            f"the model endpoint {endpoint.shown} presented a certificate that is not "
            f"trusted ({problem})",
            hint="trust its CA: set SSL_CERT_FILE or OSMOSIS_CA_BUNDLE to a PEM bundle "
            "holding it",
            code="TLS_CERTIFICATE",
            data={"endpoint": endpoint.shown, "problem": problem},
        )

    def _status_error(self, status: int, raw: bytes, endpoint: _Endpoint) -> ProviderRequestError:
        detail = _error_detail(raw)
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
        if status == 404:
            return ModelNotFoundError(
                f"model {endpoint.replica.model!r} not found at {where} ({detail})",
                status_code=status,
                hint="check the model name against the models the endpoint serves, "
                "and the base URL",
                data=data,
            )
        return ProviderRequestError(
            f"the model endpoint {where} answered {status}: {detail}",
            status_code=status,
            data=data,
        )


def _status_label(outcome: Any) -> str:
    return str(outcome[0]) if isinstance(outcome, tuple) else type(outcome).__name__


async def _read_stream(response: aiohttp.ClientResponse, where: str) -> dict[str, Any]:
    """A streamed answer (server-sent events, in whatever pieces they arrive) as one
    chat completion; capped like a whole answer."""
    decoder, assembler, size = EventDecoder(), ChunkAssembler(where), 0
    async for piece in response.content.iter_any():
        size += len(piece)
        if size > MAX_RESPONSE_BYTES:
            raise BodyTooLarge(MAX_RESPONSE_BYTES)
        for event in decoder.feed(piece):
            assembler.add(event)
        if assembler.done:
            break
    else:
        for event in decoder.close():
            assembler.add(event)
    return assembler.result()


def _error_detail(raw: bytes) -> str:
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
    try:
        return json.dumps(data)[:200]
    except (TypeError, ValueError, RecursionError):
        return "no details"


def _decode(raw: bytes, where: str) -> dict[str, Any]:
    try:
        data = loads(raw)
    except ValueError:
        raise ProviderRequestError(
            f"the model endpoint {where} sent a response that is not JSON"
        ) from None
    if not isinstance(data, dict):
        raise ProviderRequestError(f"the model endpoint {where} sent unexpected JSON")
    return data


def parse_reply(response: Mapping[str, Any]) -> tuple[Message, int]:
    """The assistant message and total tokens of a chat-completions response."""
    try:
        message = response["choices"][0]["message"]
        if not isinstance(message, dict):
            raise TypeError
    except (KeyError, IndexError, TypeError):
        raise ProviderRequestError(
            "the model endpoint's response has no choices[0].message"
        ) from None
    message.setdefault("role", "assistant")
    usage = response.get("usage") or {}
    tokens = 0
    if isinstance(usage, dict):
        total = usage.get("total_tokens")
        if isinstance(total, int):
            tokens = total
        else:
            tokens = sum(
                v
                for k, v in usage.items()
                if k in ("prompt_tokens", "completion_tokens") and isinstance(v, int)
            )
    return message, tokens
