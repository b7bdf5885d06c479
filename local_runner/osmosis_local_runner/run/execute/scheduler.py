"""The sliding window: at most ``batch_size`` attempts in flight, a new one starts
the moment any finishes (a slow attempt never holds the others back).

Attempts are pulled lazily from an iterator, so nothing is created up front.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import gc
import heapq
import signal
import sys
import threading
import time
import weakref
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

T = TypeVar("T")

YIELD_EVERY = 8


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
        # one shared iterator: each item goes to exactly one worker
        for done, item in enumerate(items, 1):
            if stop is not None and stop.is_set():
                return
            stats.in_flight += 1
            stats.started += 1
            stats.max_in_flight = max(stats.max_in_flight, stats.in_flight)
            try:
                await execute(item)
            finally:
                stats.in_flight -= 1
            if done % YIELD_EVERY == 0:
                # attempts that never suspend (an instant model) must still let the loop
                # turn: journal writes, progress and Ctrl-C run in its callbacks
                await asyncio.sleep(0)

    workers = [asyncio.ensure_future(worker()) for _ in range(max(1, batch_size))]
    try:
        await asyncio.gather(*workers)
    except BaseException:
        for task in workers:
            task.cancel()
        await asyncio.gather(*workers, return_exceptions=True)
        raise
    return stats


#: allocations between two young-generation collections while a run is in progress
#: (CPython's default is 700)
RUN_GC_THRESHOLD = 50_000
_paced = 0  # runs in progress in this process (two may run at once under gather)
_saved_threshold: tuple[int, int, int] | None = None


@contextlib.contextmanager
def paced_collections() -> Iterator[None]:
    """While a run is in progress, the cyclic garbage collector runs ~70× less often and
    never walks what existed before the run (frozen: modules, the caller's objects).

    A wave of a large window (1,024 answers arriving together) allocates hundreds of
    thousands of short-lived objects; at CPython's default pace that is hundreds of
    collections, the older ones walking every object of the process, right when the
    next wave's requests should leave (bench/large_window.py: 0.98 of the ideal before,
    0.99+ after). Almost everything here is freed by reference counting anyway; cycles
    are still collected, later. When the process's last run ends, its objects are
    unfrozen and its own setting restored.
    """
    global _paced, _saved_threshold
    if _paced == 0:
        _saved_threshold = gc.get_threshold()
        gc.freeze()
        gc.set_threshold(max(_saved_threshold[0], RUN_GC_THRESHOLD), *_saved_threshold[1:])
    _paced += 1
    try:
        yield
    finally:
        _paced -= 1
        if _paced == 0 and _saved_threshold is not None:
            gc.set_threshold(*_saved_threshold)
            gc.unfreeze()


class ReadAhead(Generic[T]):
    """An iterator that prepares up to ``size`` items ahead while the event loop is idle.

    When many replies arrive together, the attempts that follow them need their next
    items at once: items prepared during the wait (a timer runs only after the ready
    callbacks) keep that work off the burst.
    """

    def __init__(self, items: Iterator[T], size: int, delay: float = 0.001) -> None:
        self._items = items
        self._size = max(1, size)
        self._delay = delay
        self._buffer: collections.deque[T] = collections.deque()
        self._exhausted = False
        self._scheduled = False

    def __iter__(self) -> ReadAhead[T]:
        return self

    def __next__(self) -> T:
        if self._buffer:
            item = self._buffer.popleft()
        elif self._exhausted:
            raise StopIteration
        else:
            try:
                item = next(self._items)
            except StopIteration:
                self._exhausted = True
                raise
        self._schedule()
        return item

    def _schedule(self) -> None:
        if self._scheduled or self._exhausted:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        self._scheduled = True
        loop.call_later(self._delay, self._fill)

    def _fill(self) -> None:
        self._scheduled = False
        while len(self._buffer) < self._size and not self._exhausted:
            try:
                self._buffer.append(next(self._items))
            except StopIteration:
                self._exhausted = True


class Deadlines:
    """Timeouts for many tasks, checked by one timer on the event loop.

    Entering a limit is a heap push, where ``asyncio.timeout`` schedules and
    reschedules a timer handle per use: per attempt that difference is most of the
    runner's own overhead. Precision is ``TICK`` (timeouts here are seconds long).
    When a limit passes, its task is cancelled; the cancellation surfaces inside the
    ``with`` block and leaves it as ``TimeoutError``.
    """

    TICK = 0.05

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._heap: list[tuple[float, int, _Limit]] = []
        self._ticking = False
        self._count = 0

    def limit(self, seconds: float) -> _Limit:
        return _Limit(self, seconds)

    def overdue(self, task: asyncio.Task[Any] | None, now: float) -> _Limit | None:
        """A passed, unfinished limit of ``task`` (read from another thread while the
        loop is blocked, so the heap does not move)."""
        for when, _, entry in list(self._heap):
            if entry.task is task and not entry.done and when <= now:
                return entry
        return None

    def _add(self, entry: _Limit) -> None:
        self._count += 1
        heapq.heappush(self._heap, (entry.when, self._count, entry))
        if not self._ticking:
            self._ticking = True
            self._loop.call_later(self.TICK, self._check)

    def _check(self) -> None:
        now = self._loop.time()
        heap = self._heap
        while heap and (heap[0][2].done or heap[0][0] <= now):
            _, _, entry = heapq.heappop(heap)
            if not entry.done and entry.task is not None and not entry.task.done():
                entry.fired = True
                entry.task.cancel()
        if heap:
            self._loop.call_later(self.TICK, self._check)
        else:
            self._ticking = False


class _Limit:
    __slots__ = ("done", "fired", "owner", "seconds", "task", "when")

    def __init__(self, owner: Deadlines, seconds: float) -> None:
        self.owner = owner
        self.seconds = seconds
        self.done = False
        self.fired = False
        self.task: asyncio.Task[Any] | None = None
        self.when = 0.0

    def __enter__(self) -> _Limit:
        self.task = asyncio.current_task()
        self.when = self.owner._loop.time() + self.seconds
        self.owner._add(self)
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: object, tb: object) -> bool:
        self.done = True
        if not self.fired:
            return False
        if sys.version_info >= (3, 11) and self.task is not None:
            if self.task.uncancel() > 0:
                return False  # cancelled from outside as well: let that win
        if kind is not None and issubclass(kind, asyncio.CancelledError):
            raise TimeoutError from None
        return False


_deadlines: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Deadlines] = (
    weakref.WeakKeyDictionary()
)


#: the last loop's Deadlines: a run asks from one loop thousands of times a second, and a
#: weak dictionary's look-up (a new weak reference each time) was a third of the cost. (It
#: keeps that one loop alive after it closed, until another loop asks.)
_last: Deadlines | None = None


def deadline(seconds: float) -> _Limit:
    """``with deadline(s): await …`` — ``TimeoutError`` once ``s`` seconds have passed."""
    global _last
    loop = asyncio.get_running_loop()
    owner = _last
    if owner is None or owner._loop is not loop:
        owner = _deadlines.get(loop)
        if owner is None:
            owner = _deadlines[loop] = Deadlines(loop)
        _last = owner
    return _Limit(owner, seconds)


class LoopBlocked(Exception):
    """Raised inside code that blocked the event loop past its attempt's timeout."""

    def __init__(self, seconds: float, blocked: float) -> None:
        super().__init__(
            f"timed out after {seconds:g}s: blocked the event loop for {blocked:.0f}s "
            "(a blocking call in async code; use a sync def, or await async I/O)"
        )
        self.seconds = seconds


class LoopWatchdog:
    """Times out code that blocks the event loop (``time.sleep`` in ``async def``).

    A limit is checked by a timer on the loop — which never runs while user code blocks
    it. This thread watches a heartbeat; when the loop has been stuck for a while and
    the running task has a passed limit, it sends the main thread a signal whose
    handler raises :class:`LoopBlocked` in whatever is blocking (a sleeping syscall is
    interrupted; Python code stops at the next bytecode), again every ``STUCK`` seconds
    if that code swallows it. That attempt fails as timed out; the others, frozen
    meanwhile, go on. Main thread only (signals); elsewhere it does nothing.
    """

    SIGNAL = signal.SIGUSR1
    BEAT = 0.1
    STUCK = 1.0  # seconds without a heartbeat before the loop counts as blocked

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.beat = time.monotonic()
        #: (task, when it was signalled, its passed limit)
        self._fired: tuple[Any, float, _Limit] | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._previous: Any = None
        self._timer: asyncio.TimerHandle | None = None
        self._users = 0

    @classmethod
    def watching(cls, loop: asyncio.AbstractEventLoop) -> LoopWatchdog:
        """The loop's watchdog (runs of a suite share one; it stops with the last)."""
        found = _watchdogs.get(loop)
        if found is None:
            found = _watchdogs[loop] = cls(loop)
        return found

    def __enter__(self) -> LoopWatchdog:
        self._users += 1
        if self._users > 1 or threading.current_thread() is not threading.main_thread():
            return self
        self._previous = signal.signal(self.SIGNAL, self._on_signal)
        self._heartbeat()
        self._thread = threading.Thread(target=self._watch, name="osmosis-watchdog", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._users -= 1
        if self._users:
            return
        _watchdogs.pop(self.loop, None)
        if self._thread is None:
            return
        self._stop.set()
        self._thread.join(1.0)
        if self._timer is not None:
            self._timer.cancel()
        signal.signal(self.SIGNAL, self._previous)

    def _heartbeat(self) -> None:
        self.beat = time.monotonic()
        self._timer = self.loop.call_later(self.BEAT, self._heartbeat)

    def _watch(self) -> None:
        main = threading.main_thread().ident
        while not self._stop.wait(self.BEAT):
            now = time.monotonic()
            if now - self.beat < self.STUCK or main is None:
                self._fired = None
                continue
            task = asyncio.current_task(self.loop)
            fired = self._fired
            if fired is not None and fired[0] is task:
                if now - fired[1] >= self.STUCK:  # it swallowed the first one
                    self._fired = (task, now, fired[2])
                    signal.pthread_kill(main, self.SIGNAL)
                continue
            owner = _deadlines.get(self.loop)
            limit = owner.overdue(task, self.loop.time()) if owner is not None else None
            if limit is not None:
                self._fired = (task, now, limit)
                signal.pthread_kill(main, self.SIGNAL)

    def _on_signal(self, signum: int, frame: Any) -> None:
        fired = self._fired
        if fired is None or time.monotonic() - self.beat < self.STUCK:
            return  # the loop moved on meanwhile: nothing to interrupt
        limit = fired[2]
        limit.done = True  # it fires here, not on the loop's timer
        raise LoopBlocked(limit.seconds, time.monotonic() - self.beat)


_watchdogs: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, LoopWatchdog] = (
    weakref.WeakKeyDictionary()
)
