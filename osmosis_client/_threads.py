"""Blocking user code off the event loop, on threads that never hold the process.

``asyncio.to_thread`` runs on the loop's default executor, whose threads are joined when
the loop closes and again at interpreter exit: one sync tool or grader that never
returns keeps the process alive for ever, Ctrl-C or not. Here each call gets a fresh
daemon thread; cancelling the awaiting future (a deadline, Ctrl-C) abandons it, and the
process exits whatever it is still doing.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import threading
from collections.abc import Callable
from typing import Any


def in_daemon_thread(
    fn: Callable[..., Any], *args: Any, name: str = "osmosis-user-code", **kwargs: Any
) -> asyncio.Future[Any]:
    """Run sync ``fn`` in a fresh daemon thread (the caller's context variables along);
    what it returns or raises settles the future; cancelling the future abandons it."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[Any] = loop.create_future()

    def settle(ok: bool, value: Any) -> None:
        if future.done():
            return  # timed out or cancelled meanwhile: nobody waits for it
        if ok:
            future.set_result(value)
        else:
            future.set_exception(value)

    def target() -> None:
        try:
            outcome: tuple[bool, Any] = (True, fn(*args, **kwargs))
        except BaseException as exc:  # settled in the caller's loop
            outcome = (False, exc)
        with contextlib.suppress(RuntimeError):  # the loop is gone: the run is over
            loop.call_soon_threadsafe(settle, *outcome)

    context = contextvars.copy_context()
    threading.Thread(target=context.run, args=(target,), name=name, daemon=True).start()
    return future
