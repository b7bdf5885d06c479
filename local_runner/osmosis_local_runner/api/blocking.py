"""A run's coroutine driven to its end from synchronous code — a plain script, or a
notebook cell whose event loop is already running — and stopped cleanly when the
caller is interrupted.

In a notebook the call cannot use the cell's loop (it is busy running the cell), so the
run gets a loop of its own on a worker thread while the cell's thread waits. The wait
must stay interruptible: the kernel's interrupt is a ``KeyboardInterrupt`` in the
waiting thread, which here cancels the run on its own loop, waits for it to stop (its
finished attempts written, ``status: stopped``) and only then raises — never returning
while the run still goes on in the background (issue 43: a ``ThreadPoolExecutor``'s
exit joined the whole run first, and repeated interrupts left it running)."""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

T = TypeVar("T")
#: how long an interrupted run may take to stop before the call stops waiting for it
STOP_WAIT = 30.0
#: how often the waiting thread wakes (a signal handler runs between waits)
_TICK = 0.25


def run_blocking(make: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """``make()``'s coroutine run to its end; a ``KeyboardInterrupt`` while it runs
    cancels it (it stops as an interrupted run stops) and is raised once it has."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        # Python 3.11+: Ctrl-C cancels the task, which stops the run, then raises
        # KeyboardInterrupt; 3.10 cancels every task once the interrupt has propagated
        return asyncio.run(make())
    return _beside(make())


def _beside(coroutine: Coroutine[Any, Any, T]) -> T:
    """``coroutine`` on a loop of its own, on a worker thread, while this thread waits."""
    loop = asyncio.new_event_loop()
    task = loop.create_task(coroutine)
    done = threading.Event()

    def drive() -> None:
        try:
            asyncio.set_event_loop(loop)
            loop.run_until_complete(asyncio.wait([task]))
        finally:
            _close(loop)
            done.set()

    worker = threading.Thread(target=drive, name="osmosis-run", daemon=True)
    worker.start()
    try:
        while not done.wait(_TICK):
            pass
    except BaseException:  # an interrupt: the run stops before this call returns
        _stop(loop, task, done)
        raise
    worker.join(STOP_WAIT)
    return task.result()


def _stop(loop: asyncio.AbstractEventLoop, task: asyncio.Task[Any], done: threading.Event) -> None:
    """Cancel the run and wait (bounded) for it to stop; an interrupt while waiting asks
    again, which stops it at once."""
    deadline = time.monotonic() + STOP_WAIT
    _cancel(loop, task)
    while not done.is_set() and time.monotonic() < deadline:
        try:
            done.wait(_TICK)
        except KeyboardInterrupt:
            _cancel(loop, task)


def _cancel(loop: asyncio.AbstractEventLoop, task: asyncio.Task[Any]) -> None:
    with contextlib.suppress(RuntimeError):  # the loop closed in between: the run is over
        loop.call_soon_threadsafe(task.cancel)


def _close(loop: asyncio.AbstractEventLoop) -> None:
    """As ``asyncio.run`` ends: what is left cancelled, generators and the default
    executor shut down, the loop closed (nothing outlives the call)."""
    try:
        left = [t for t in asyncio.all_tasks(loop) if not t.done()]
        for t in left:
            t.cancel()
        if left:
            loop.run_until_complete(asyncio.gather(*left, return_exceptions=True))
        loop.run_until_complete(loop.shutdown_asyncgens())
        loop.run_until_complete(loop.shutdown_default_executor())
    finally:
        asyncio.set_event_loop(None)
        loop.close()


__all__ = ["run_blocking"]
