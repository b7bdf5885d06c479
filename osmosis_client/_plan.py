"""Drive a *plan*: a generator that yields work (or a float: seconds to sleep) and is
sent back each outcome. Policies — the retry loop, waiting for a run — are
written once as plans; these two drivers are the only sync/async split.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Generator
from typing import Any, TypeVar

S = TypeVar("S")
R = TypeVar("R")

#: yields steps of type S or sleeps; is sent outcomes (results or caught exceptions)
Plan = Generator["S | float", Any, R]


def drive_sync(
    plan: Generator[S | float, Any, R],
    perform: Callable[[S], Any],
    sleep: Callable[[float], Any],
    catch: type[BaseException] | tuple[type[BaseException], ...] = (),
) -> R:
    """Run ``plan`` with blocking calls; exceptions in ``catch`` are sent to it as values."""
    step = next(plan)
    while True:
        outcome: Any = None
        if isinstance(step, float):
            sleep(step)
        else:
            try:
                outcome = perform(step)
            except catch as exc:
                outcome = exc
        try:
            step = plan.send(outcome)
        except StopIteration as done:
            return done.value  # type: ignore[no-any-return]


async def drive_async(
    plan: Generator[S | float, Any, R],
    perform: Callable[[S], Awaitable[Any]],
    sleep: Callable[[float], Awaitable[Any]],
    catch: type[BaseException] | tuple[type[BaseException], ...] = (),
) -> R:
    """Run ``plan`` with awaited calls; exceptions in ``catch`` are sent to it as values."""
    step = next(plan)
    while True:
        outcome: Any = None
        if isinstance(step, float):
            await sleep(step)
        else:
            try:
                outcome = await perform(step)
            except catch as exc:
                outcome = exc
        try:
            step = plan.send(outcome)
        except StopIteration as done:
            return done.value  # type: ignore[no-any-return]
