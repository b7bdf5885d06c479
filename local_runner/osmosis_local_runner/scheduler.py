"""The sliding window: at most ``batch_size`` attempts in flight, a new one starts
the moment any finishes (a slow attempt never holds the others back).

Attempts are pulled lazily from an iterator, so nothing is created up front.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from typing import Any, TypeVar

T = TypeVar("T")


@dataclass
class WindowStats:
    in_flight: int = 0
    max_in_flight: int = 0
    started: int = 0


async def run_window(
    items: Iterator[T],
    batch_size: int,
    execute: Callable[[T], Awaitable[None]],
    stop: asyncio.Event | None = None,
    stats: WindowStats | None = None,
) -> WindowStats:
    """Run ``execute`` over ``items`` with ``batch_size`` workers; ``stop`` drains early.

    Cancelling the caller cancels every in-flight attempt.
    """
    stats = stats or WindowStats()

    async def worker() -> None:
        for item in items:  # one shared iterator: each item goes to exactly one worker
            if stop is not None and stop.is_set():
                return
            stats.in_flight += 1
            stats.started += 1
            stats.max_in_flight = max(stats.max_in_flight, stats.in_flight)
            try:
                await execute(item)
            finally:
                stats.in_flight -= 1

    workers = [asyncio.ensure_future(worker()) for _ in range(max(1, batch_size))]
    try:
        await asyncio.gather(*workers)
    except BaseException:
        for task in workers:
            task.cancel()
        await asyncio.gather(*workers, return_exceptions=True)
        raise
    return stats


if sys.version_info >= (3, 11):

    async def with_timeout(awaitable: Awaitable[Any], seconds: float) -> Any:
        """Await with a deadline; raises ``TimeoutError``."""
        async with asyncio.timeout(seconds):
            return await awaitable

else:  # pragma: no cover - Python 3.10

    async def with_timeout(awaitable: Awaitable[Any], seconds: float) -> Any:
        try:
            return await asyncio.wait_for(awaitable, seconds)
        except asyncio.TimeoutError:
            raise TimeoutError from None
