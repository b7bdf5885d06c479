"""The one retry policy and the one retry loop.

:class:`RetryPolicy` says which failures are retried and how long to wait:
exponential backoff with full jitter (base 0.5 s, cap 30 s), ``Retry-After``
in seconds or as an HTTP date honoured, at most ``max_retries`` retries and,
optionally, at most ``max_elapsed`` seconds in all. :func:`retry_plan` is the
loop itself, written once as a plan (see ``_plan.py``) and driven by the
platform transport (httpx, sync or async) and the model client (aiohttp) alike.
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime
from typing import Any, Generic, TypeVar

logger = logging.getLogger("osmosis_client")

S = TypeVar("S")
R = TypeVar("R")

RETRYABLE_STATUSES = frozenset({408, 429, 500, 502, 503, 504})


def parse_retry_after(value: str | None, *, now: float | None = None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (delta-seconds or HTTP date)."""
    if value is None:
        return None
    value = value.strip()
    if not value:
        return None
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError, OverflowError):
            return None
        seconds = when.timestamp() - (time.time() if now is None else now)
    if seconds != seconds or seconds == float("inf"):  # NaN / inf
        return None
    return max(0.0, seconds)


@dataclass(frozen=True)
class RetryPolicy:
    """When to retry and how long to sleep before the next try."""

    max_retries: int = 4
    base_delay: float = 0.5
    max_delay: float = 30.0
    max_elapsed: float | None = None
    retry_statuses: frozenset[int] = RETRYABLE_STATUSES
    jitter: bool = True  # False: exactly base * 2**n (a peer's documented schedule)
    rng: random.Random = field(default_factory=random.Random, compare=False, repr=False)
    wall_clock: Callable[[], float] = field(default=time.time, compare=False, repr=False)

    def is_retryable_status(self, status: int) -> bool:
        return status in self.retry_statuses

    def backoff(self, retries_done: int) -> float:
        """Full jitter: uniform in [0, min(cap, base * 2**retries_done)]."""
        ceiling = min(self.max_delay, self.base_delay * (2**retries_done))
        return self.rng.uniform(0.0, ceiling) if self.jitter else ceiling

    def next_delay(
        self,
        retries_done: int,
        *,
        status: int | None = None,
        retry_after: str | None = None,
        elapsed: float = 0.0,
    ) -> float | None:
        """The sleep before the next try, or ``None`` when we must give up.

        ``status`` is ``None`` for a connection or read error (always retryable).
        """
        if retries_done >= self.max_retries:
            return None
        if status is not None and not self.is_retryable_status(status):
            return None
        delay = parse_retry_after(retry_after, now=self.wall_clock())
        if delay is None:
            delay = self.backoff(retries_done)
        else:
            delay = min(delay, max(self.max_delay, 60.0))
        if self.max_elapsed is not None and elapsed + delay > self.max_elapsed:
            return None
        return delay


class RetryState:
    """One logical call's retry bookkeeping: how many retries so far and since when."""

    __slots__ = ("_monotonic", "_started", "policy", "retries")

    def __init__(
        self, policy: RetryPolicy, monotonic: Callable[[], float] = time.monotonic
    ) -> None:
        self.policy = policy
        self.retries = 0
        self._monotonic = monotonic
        self._started = monotonic()

    def delay_after(
        self, *, status: int | None = None, retry_after: str | None = None
    ) -> float | None:
        """The sleep before the next try after a failure, or None to give up now."""
        delay = self.policy.next_delay(
            self.retries,
            status=status,
            retry_after=retry_after,
            elapsed=self._monotonic() - self._started,
        )
        if delay is not None:
            self.retries += 1
        return delay


@dataclass(frozen=True)
class Failure:
    """A failed try, as a classifier reports it to :func:`retry_plan`."""

    error: Exception  # raised when we give up
    status: int | None = None  # None: no response (connection or read error)
    retry_after: str | None = None
    retryable: bool = True


@dataclass(frozen=True)
class Success(Generic[R]):
    value: R


def retry_plan(
    step: S,
    policy: RetryPolicy,
    classify: Callable[[Any], Success[R] | Failure],
    *,
    monotonic: Callable[[], float] = time.monotonic,
    describe: str = "request",
    after: Failure | None = None,
) -> Generator[S | float, Any, R]:
    """Yield ``step`` (to perform) or a float (to sleep) until a try succeeds or we give up.

    The driver sends back each try's outcome (a result or the caught exception);
    ``classify`` turns it into :class:`Success` or :class:`Failure`. ``after``: the
    failure of a first try the caller already made (a fast path that skips the plan
    when the first try succeeds).
    """
    state = RetryState(policy, monotonic)
    if after is not None:
        yield _delay_or_raise(state, after, describe)
    while True:
        started = monotonic()
        outcome = yield step
        verdict = classify(outcome)
        took = (monotonic() - started) * 1000
        if isinstance(verdict, Success):
            logger.debug("%s -> %s (%.0f ms)", describe, _label(outcome), took)
            return verdict.value
        logger.debug("%s -> %s (%.0f ms)", describe, _label(outcome), took)
        yield _delay_or_raise(state, verdict, describe)


def _delay_or_raise(state: RetryState, failure: Failure, describe: str) -> float:
    """How long to wait before the next try, or the failure raised when it is final
    (not retryable, or the policy's tries or time are spent)."""
    delay = None
    if failure.retryable:
        delay = state.delay_after(status=failure.status, retry_after=failure.retry_after)
    if delay is None:
        raise failure.error
    logger.debug("%s: retry %d in %.2fs", describe, state.retries, delay)
    return delay


def _label(outcome: Any) -> str:
    status = getattr(outcome, "status_code", None) or getattr(outcome, "status", None)
    if isinstance(status, int):
        return str(status)
    if isinstance(outcome, tuple) and outcome and isinstance(outcome[0], int):
        return str(outcome[0])
    return type(outcome).__name__
