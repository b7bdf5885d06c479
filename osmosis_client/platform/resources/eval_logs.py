"""An eval run's logs as plans: the newest entries, or a follow that tails them until
the run ends (:mod:`log_follow`'s, which every kind of run shares)."""

from __future__ import annotations

from collections.abc import Callable, Generator
from typing import Any

from osmosis_client.platform.models import EvalRun, LogEntry, LogPage
from osmosis_client.platform.resources._base import Call
from osmosis_client.platform.resources.eval_calls import get_call, logs_call
from osmosis_client.platform.resources.log_follow import (
    FOLLOW_CATCH_UP_PAGES as FOLLOW_CATCH_UP_PAGES,
    LogEntries as LogEntries,
    chronological,
    follow_plan,
)


def recent_logs_plan(name_or_id: str, count: int) -> Generator[Call[Any] | float, Any, LogPage]:
    """The newest ``count`` entries, oldest first (reading pages newest to oldest), and
    the cursor of the page older than them."""
    pages: list[list[LogEntry]] = []
    got = 0
    cursor: str | None = None
    while got < count:
        page = yield logs_call(name_or_id, count - got, cursor)
        if isinstance(page, BaseException):
            raise page
        pages.append(page.logs)
        got += len(page.logs)
        cursor = page.next_cursor
        if cursor is None or not page.logs:
            break
    entries = chronological(pages)
    return LogPage(logs=entries[max(0, len(entries) - count) :], next_cursor=cursor)


def follow_logs_plan(
    name_or_id: str,
    limit: int,
    on_entries: Callable[[list[LogEntry]], None],
) -> Generator[Call[Any] | float, Any, EvalRun]:
    """An eval run's :func:`follow_plan`."""
    return follow_plan(
        lambda: get_call(name_or_id),
        lambda count, cursor: logs_call(name_or_id, count, cursor),
        lambda run: run.is_terminal,
        limit,
        on_entries,
    )
