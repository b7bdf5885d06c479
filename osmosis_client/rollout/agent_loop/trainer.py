"""Calls from a 0.2 rollout server to its trainer: model turns (``ctx.llm``) and the
completion callback, each with its retry policy (rollout-protocol.md part A). Answers
are read whole however they arrive (capped), redirects are never followed (the request
carries the trainer's key), and every failure is one of the 0.2 exceptions."""

from __future__ import annotations

import asyncio
import functools
import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from osmosis_client._plan import drive_async
from osmosis_client._retry import Failure, RetryPolicy, Success, retry_plan
from osmosis_client._wire import BodyTooLarge, loads, read_body
from osmosis_client.rollout.agent_loop.exceptions import (
    OsmosisServerError,
    OsmosisTimeoutError,
    OsmosisTransportError,
)
from osmosis_client.rollout.agent_loop.schemas import CompletionsResult, RolloutRequest

if TYPE_CHECKING:
    from aiohttp import ClientSession

#: tests only (``osmosis_ai.rollout.testing.patch_httpx_for_mock_trainer``): a function
#: answering ``(url, body, headers)`` with ``(status, body)`` instead of the network, or
#: returning None to let the request go out
ROUTE: Callable[[str, bytes, dict[str, str]], tuple[int, bytes] | None] | None = None

MODEL_CALL_TIMEOUT = 300.0
MAX_ANSWER = 64 << 20  # one answer from the trainer, decompressed
#: what every model call to the trainer carries (other parameters are dropped)
SAMPLING_DEFAULTS: dict[str, Any] = {"temperature": 1.0, "top_p": 1.0, "max_tokens": 512}


def model_call_policy() -> RetryPolicy:
    """Trainer model calls: 5xx and timeouts retried 3 times after 1, 2, 4 s; 4xx never."""
    return _server_errors_retried(3, max_delay=4.0)


def completion_policy() -> RetryPolicy:
    """The completion callback: 5xx retried twice."""
    return _server_errors_retried(2, max_delay=2.0)


def _server_errors_retried(times: int, *, max_delay: float) -> RetryPolicy:
    # the trainer's own schedule: fixed doublings from 1 s, no jitter, 5xx only
    return RetryPolicy(
        max_retries=times,
        base_delay=1.0,
        max_delay=max_delay,
        jitter=False,
        retry_statuses=frozenset(range(500, 600)),
    )


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
        except (KeyError, IndexError, TypeError) as exc:
            raise OsmosisServerError("the trainer's answer has no choices[0].message") from exc
        usage = data.get("usage")
        return CompletionsResult(
            message=message,
            usage=usage if isinstance(usage, dict) else {},
            finish_reason=str(choice.get("finish_reason") or "stop"),
            token_ids=choice.get("token_ids"),
            logprobs=choice.get("logprobs"),
        )


def _outcome(url: str, timeout: float, outcome: Any) -> Success[dict[str, Any]] | Failure:
    """What one POST to the trainer came to: its JSON, or the failure (retryable or not)."""
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


async def _routed(url: str, data: bytes, headers: dict[str, str]) -> tuple[int, bytes] | None:
    """A mock trainer's answer in a test (see :data:`ROUTE`), or None: the network."""
    if ROUTE is None:
        return None
    from osmosis_client._threads import in_daemon_thread

    answer: tuple[int, bytes] | None = await in_daemon_thread(ROUTE, url, data, headers)
    return answer


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
        routed = await _routed(url, data, headers)
        if routed is not None:
            return routed
        client_timeout = aiohttp.ClientTimeout(total=timeout)
        async with session.post(
            url, data=data, headers=headers, timeout=client_timeout, allow_redirects=False
        ) as resp:
            try:
                return resp.status, await read_body(resp, MAX_ANSWER)
            except BodyTooLarge:
                return resp.status, None

    classify = functools.partial(_outcome, url, timeout)
    plan = retry_plan(payload, policy, classify, describe=f"POST {url}")
    return await drive_async(
        plan, send, sleep, (aiohttp.ClientError, asyncio.TimeoutError, OSError)
    )
