"""Following a run's logs — any kind of run: eval, training, benchmark — as a plan:
each entry handed over once, in order, surviving rate limits, server errors and lost
connections, with a bounded memory of what it has handed over."""

from __future__ import annotations

import collections
import hashlib
import json
from collections.abc import Callable, Generator
from typing import Any, TypeVar

from osmosis_client.errors import APIConnectionError, RateLimitError, ServerError
from osmosis_client.platform.models import LogEntry, LogPage
from osmosis_client.platform.resources._base import Call

FOLLOW_FIRST_DELAY = 1.0
FOLLOW_MAX_DELAY = 10.0
FOLLOW_FACTOR = 1.5  # the back-off while nothing is new
#: consecutive failed polls (429, 5xx, no connection — after the transport's own
#: retries) a follow survives, backing off up to FOLLOW_MAX_DELAY, before giving up
FOLLOW_MAX_FAILURES = 20
#: while following, older pages read to catch up when a whole page is new
FOLLOW_CATCH_UP_PAGES = 10
FOLLOW_SEEN_MIN = 10_000  # entries a follow remembers to drop repeats, at least

LogEntries = list[LogEntry]
T = TypeVar("T")
R = TypeVar("R")

#: the plans' steps: calls to execute, or seconds to sleep
Steps = Generator["Call[Any] | float", Any, Any]


def _digest(entry: LogEntry) -> bytes:
    return hashlib.blake2b(json.dumps(entry.key).encode(), digest_size=16).digest()


def chronological(pages: list[list[T]]) -> list[T]:
    """Pages read newest to oldest, as one oldest-first list (within a page the platform
    sends entries oldest first: published-cli-0.3.8.md §1.10)."""
    return [entry for page in reversed(pages) for entry in page]


def _transient(exc: BaseException) -> bool:
    return isinstance(exc, RateLimitError | ServerError | APIConnectionError)


def _tolerant(call: Call[Any], failures: list[int]) -> Steps:
    """Execute ``call``, surviving transient failures with backoff (a follow's polls)."""
    while True:
        outcome = yield call
        if not isinstance(outcome, BaseException):
            failures[0] = 0
            return outcome
        if not _transient(outcome) or failures[0] >= FOLLOW_MAX_FAILURES:
            raise outcome
        failures[0] += 1
        yield min(FOLLOW_FIRST_DELAY * 2 ** failures[0], FOLLOW_MAX_DELAY)


def follow_plan(
    read: Callable[[], Call[R]],
    logs: Callable[[int, str | None], Call[LogPage]],
    ended: Callable[[R], bool],
    limit: int,
    on_entries: Callable[[list[LogEntry]], None],
) -> Generator[Call[Any] | float, Any, R]:
    """Tail a run's logs until it ends (any kind of run: ``read`` it, page its ``logs``,
    ``ended`` says when): re-read the newest page, hand over the entries not seen yet
    (oldest first; deduplicated by timestamp + message + step), poll again after 1 s
    (backing off to 10 s while nothing is new). The run is read before its logs, so the
    entries written as it ended are read after it is seen ended."""
    # the entries already handed over, as digests of their keys (16 bytes however long a
    # message is); bounded: an entry can only come back while it is among the newest
    # pages, and every read refreshes those (the oldest are forgotten)
    seen: collections.OrderedDict[bytes, None] = collections.OrderedDict()
    bound = max(FOLLOW_SEEN_MIN, 4 * FOLLOW_CATCH_UP_PAGES * limit)
    failures = [0]
    delay = FOLLOW_FIRST_DELAY
    first = True
    while True:
        run: R = yield from _tolerant(read(), failures)
        fresh: list[list[tuple[bytes, LogEntry]]] = []
        cursor: str | None = None
        for _ in range(1 if first else FOLLOW_CATCH_UP_PAGES):
            page: LogPage = yield from _tolerant(logs(limit, cursor), failures)
            digests = [_digest(e) for e in page.logs]
            for digest in digests:
                if digest in seen:
                    seen.move_to_end(digest)
            unseen = [(d, e) for d, e in zip(digests, page.logs, strict=True) if d not in seen]
            fresh.append(unseen)
            if len(unseen) < len(page.logs) or page.next_cursor is None:
                break
            cursor = page.next_cursor
        first = False
        ordered = []
        for digest, entry in chronological(fresh):  # duplicates within one read dropped too
            if digest not in seen:
                seen[digest] = None
                ordered.append(entry)
        while len(seen) > bound:
            seen.popitem(last=False)
        if ordered:
            on_entries(ordered)
        if ended(run):
            return run
        delay = FOLLOW_FIRST_DELAY if ordered else min(delay * FOLLOW_FACTOR, FOLLOW_MAX_DELAY)
        yield delay
