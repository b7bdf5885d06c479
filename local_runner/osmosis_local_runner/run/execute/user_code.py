"""Calling user code (workflows, graders, eval fns, agent loops): hostile by default.

User code may print, exit, hang, raise anything or return garbage; one attempt
fails, never the run:

- async code runs on the event loop under the attempt's timeout;
- sync code runs in a fresh daemon thread, so a call that never returns is
  abandoned when its timeout fires (the thread finishes, or not, in the background);
- ``SystemExit``, ``KeyboardInterrupt``, ``GeneratorExit`` and a ``CancelledError``
  that user code raised itself (not our own cancellation) become
  :class:`UserCodeError` — an ordinary error of that attempt.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any

from osmosis_client._threads import in_daemon_thread
from osmosis_local_runner.run.execute.scheduler import LoopBlocked, deadline

MAX_ERROR_TEXT = 1000

#: raised *by user code* — never by a real Ctrl-C, which the CLI handles as a signal
_ESCAPES = (SystemExit, KeyboardInterrupt, GeneratorExit)


class UserCodeError(Exception):
    """User code ended an attempt by raising something that is not an ``Exception``."""


def error_text(stage: str, exc: BaseException) -> str:
    """``"workflow: RuntimeError: boom"`` (at most 1000 characters)."""
    if isinstance(exc, LoopBlocked):
        return f"{stage} {exc}"[:MAX_ERROR_TEXT]  # "workflow timed out after 450s: …"
    detail = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    return f"{stage}: {detail}"[:MAX_ERROR_TEXT]


def is_transient(exc: BaseException) -> bool:
    """Whether user code failed because the model endpoint did (unreachable, or a 5xx/429
    after the client's own retries) — infrastructure, worth ``--max-retries`` — rather
    than because of itself. Follows ``raise … from`` chains: a wrapped one counts."""
    from osmosis_client.errors import EndpointUnreachableError, ProviderRequestError

    seen = 0
    current: BaseException | None = exc
    while current is not None and seen < 10:
        if isinstance(current, EndpointUnreachableError):
            return True
        if isinstance(current, ProviderRequestError):
            status = current.status_code or 0
            return status >= 500 or status == 429
        current = current.__cause__ or current.__context__
        seen += 1
    return False


def describe_escape(exc: BaseException) -> str:
    if isinstance(exc, SystemExit):
        return f"called sys.exit({exc.code!r})"
    return f"raised {type(exc).__name__}" + (f": {exc}" if str(exc) else "")


def _being_cancelled() -> bool:
    """Whether the running task has a real cancellation pending (ours, or a timeout's)."""
    if sys.version_info >= (3, 11):
        task = asyncio.current_task()
        return task is None or task.cancelling() > 0
    return True  # 3.10 cannot tell: every CancelledError counts as real


async def call(fn: Callable[..., Any], *args: Any, is_async: bool, **kwargs: Any) -> Any:
    """Call ``fn`` (awaiting its result if it is awaitable); escapes become errors."""
    try:
        if is_async:
            result = fn(*args, **kwargs)
        else:
            result = await in_thread(fn, *args, **kwargs)
        if asyncio.iscoroutine(result) or isinstance(result, asyncio.Future):
            result = await result
        return result
    except asyncio.CancelledError as exc:
        if _being_cancelled():
            raise
        raise UserCodeError("raised CancelledError") from exc
    except _ESCAPES as exc:
        raise UserCodeError(describe_escape(exc)) from exc


async def call_with_timeout(
    fn: Callable[..., Any], *args: Any, is_async: bool, timeout: float | None, **kwargs: Any
) -> Any:
    """:func:`call` under a deadline; ``TimeoutError`` when it passes."""
    if timeout is None:
        return await call(fn, *args, is_async=is_async, **kwargs)
    with deadline(timeout):  # in place: no coroutine wrapped around the call
        return await call(fn, *args, is_async=is_async, **kwargs)


_real_exit = os._exit
_guards = 0


def _refuse_exit(status: int = 0) -> None:  # signature of os._exit
    raise UserCodeError(f"called os._exit({status!r})")


@contextlib.contextmanager
def guard_exits() -> Iterator[None]:
    """While user code may run, ``os._exit`` raises instead of ending the process (a
    workflow, grader or module calling it fails its attempt, or its load)."""
    global _guards
    _guards += 1
    os._exit = _refuse_exit  # type: ignore[assignment]
    try:
        yield
    finally:
        _guards -= 1
        if not _guards:
            os._exit = _real_exit


class _Interrupts:
    """Whether a KeyboardInterrupt came from a real Ctrl-C (SIGINT) or from user code."""

    real = False


@contextlib.contextmanager
def telling_real_interrupts() -> Iterator[type[_Interrupts]]:
    """Mark a real SIGINT, so ``KeyboardInterrupt`` raised by user code can be told apart."""
    _Interrupts.real = False
    if threading.current_thread() is not threading.main_thread():
        yield _Interrupts
        return
    previous = signal.getsignal(signal.SIGINT)

    def on_sigint(signum: int, frame: Any) -> None:
        _Interrupts.real = True
        raise KeyboardInterrupt

    signal.signal(signal.SIGINT, on_sigint)
    try:
        yield _Interrupts
    finally:
        signal.signal(signal.SIGINT, previous)


def in_thread(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> asyncio.Future[Any]:
    """Run sync ``fn`` in a fresh daemon thread; cancelling the future abandons it. An
    exit or interrupt it raises is that attempt's error, never the run's."""

    def guarded() -> Any:
        try:
            return fn(*args, **kwargs)
        except _ESCAPES as exc:
            raise UserCodeError(describe_escape(exc)) from exc

    return in_daemon_thread(guarded)
