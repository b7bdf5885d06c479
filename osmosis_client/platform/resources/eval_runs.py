"""``client.eval_runs``: submit, list, inspect, stop and wait for hosted eval runs."""

from __future__ import annotations

import collections
import time
import uuid
from collections.abc import AsyncIterator, Callable, Generator, Iterator, Mapping
from typing import Any, Protocol

from osmosis_client._plan import drive_async, drive_sync
from osmosis_client.errors import (
    APIConnectionError,
    APIStatusError,
    OsmosisError,
    RateLimitError,
    ServerError,
)
from osmosis_client.platform._transport import AMBIGUOUS_CREATE_HINT, RequestOptions, encode_segment
from osmosis_client.platform.models import (
    CreatedRun,
    EvalRun,
    EvalRunPage,
    LogEntry,
    LogPage,
    RunMetrics,
    page_from_wire,
    parse,
    run_from_detail,
)
from osmosis_client.platform.resources._base import AsyncResource, Call, SyncResource

PAGE_LIMIT = 50
WAIT_FIRST_DELAY = 2.0
WAIT_MAX_DELAY = 15.0
WAIT_FACTOR = 1.5
LOG_PAGE_LIMIT = 200  # the platform's maximum per page
FOLLOW_FIRST_DELAY = 1.0
FOLLOW_MAX_DELAY = 10.0
#: consecutive failed polls (429, 5xx, no connection — after the transport's own
#: retries) a follow survives, backing off up to FOLLOW_MAX_DELAY, before giving up
FOLLOW_MAX_FAILURES = 20
#: while following, older pages read to catch up when a whole page is new
FOLLOW_CATCH_UP_PAGES = 10
FOLLOW_SEEN_MIN = 10_000  # entries a follow remembers to drop repeats, at least

#: called with each fresh state while waiting (metrics only while running)
OnUpdate = Callable[[EvalRun, "RunMetrics | None"], None]
#: what a wait plan yields: a call to execute or seconds to sleep
WaitPlan = Generator["Call[Any] | float", Any, EvalRun]


class SubmitConfig(Protocol):
    """Anything that can render the ``POST /api/cli/eval-runs`` body (an ``EvalConfig``)."""

    def to_submit_payload(self, commit_sha: str) -> dict[str, Any]: ...


class WaitTimeout(OsmosisError):
    """``wait`` gave up before the run reached a terminal status (the run keeps going)."""

    code = "WAIT_TIMEOUT"

    def __init__(self, run: EvalRun, timeout: float) -> None:
        super().__init__(
            f"run {run.name} is still {run.status} after {timeout:g}s",
            hint="it keeps running; wait for it again, or stop it",
            data={"run": run.name},
        )
        self.run = run


def _create(payload: Mapping[str, Any], idempotency_key: str) -> Call[CreatedRun]:
    return Call(
        RequestOptions(
            "POST",
            "/api/cli/eval-runs",
            json=dict(payload),
            scope="required",
            idempotency_key=idempotency_key,
            ambiguous_hint=AMBIGUOUS_CREATE_HINT,
        ),
        lambda data: parse(CreatedRun, data, what="created run"),
    )


def _list(limit: int, offset: int, status: str | None) -> Call[EvalRunPage]:
    params: dict[str, Any] = {"limit": min(max(limit, 1), PAGE_LIMIT), "offset": offset}
    if status:
        params["status"] = status

    def parse_page(data: Any) -> EvalRunPage:
        page = page_from_wire(data)
        if status:  # older platforms ignore `status`: filter what we got
            page.eval_runs = [r for r in page.eval_runs if r.status == status]
        return page

    return Call(
        RequestOptions("GET", "/api/cli/eval-runs", params=params, scope="required"), parse_page
    )


def _get(name_or_id: str) -> Call[EvalRun]:
    return Call(
        RequestOptions("GET", f"/api/cli/eval-runs/{encode_segment(name_or_id)}", scope="required"),
        run_from_detail,
    )


def _metrics(name_or_id: str) -> Call[RunMetrics]:
    return Call(
        RequestOptions(
            "GET",
            f"/api/cli/eval-runs/{encode_segment(name_or_id)}/metrics",
            scope="required",
        ),
        lambda data: parse(RunMetrics, data, what="run metrics"),
    )


def _stop(name_or_id: str) -> Call[None]:
    return Call(
        RequestOptions(
            "POST",
            f"/api/cli/eval-runs/{encode_segment(name_or_id)}/stop",
            json={},
            scope="required",
        ),
        lambda data: None,
    )


def _logs(name_or_id: str, limit: int, cursor: str | None) -> Call[LogPage]:
    params: dict[str, Any] = {
        "limit": min(max(limit, 1), LOG_PAGE_LIMIT),
        "direction": "older",
    }
    if cursor:
        params["cursor"] = cursor
    return Call(
        RequestOptions(
            "GET",
            f"/api/cli/eval-runs/{encode_segment(name_or_id)}/logs",
            params=params,
            scope="required",
        ),
        lambda data: parse(LogPage, data, what="run logs"),
    )


LogEntries = list[LogEntry]

#: the plans' steps: calls to execute, or seconds to sleep
Steps = Generator["Call[Any] | float", Any, Any]


def recent_logs_plan(
    name_or_id: str, count: int
) -> Generator[Call[Any] | float, Any, list[LogEntry]]:
    """The newest ``count`` entries, oldest first (reading pages newest to oldest)."""
    newest_first: list[LogEntry] = []
    cursor: str | None = None
    while len(newest_first) < count:
        page = yield _logs(name_or_id, count - len(newest_first), cursor)
        if isinstance(page, BaseException):
            raise page
        newest_first.extend(page.logs)
        cursor = page.next_cursor
        if cursor is None or not page.logs:
            break
    return list(reversed(newest_first[:count]))


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


def follow_logs_plan(
    name_or_id: str,
    limit: int,
    on_entries: Callable[[list[LogEntry]], None],
) -> Generator[Call[Any] | float, Any, EvalRun]:
    """Tail a run's logs until it ends: re-read the newest page, hand over the entries
    not seen yet (oldest first; deduplicated by timestamp + message + step), poll again
    after 1 s (backing off to 10 s while nothing is new). The run is read before its
    logs, so the entries written as it ended are read after it is seen terminal."""
    # the entries already handed over; bounded: an entry can only come back while it is
    # among the newest pages, and every read refreshes those (the oldest are forgotten)
    seen: collections.OrderedDict[tuple[str, str, str | None], None] = collections.OrderedDict()
    bound = max(FOLLOW_SEEN_MIN, 4 * FOLLOW_CATCH_UP_PAGES * limit)
    failures = [0]
    delay = FOLLOW_FIRST_DELAY
    first = True
    while True:
        run: EvalRun = yield from _tolerant(_get(name_or_id), failures)
        fresh: list[LogEntry] = []
        cursor: str | None = None
        for _ in range(1 if first else FOLLOW_CATCH_UP_PAGES):
            page: LogPage = yield from _tolerant(_logs(name_or_id, limit, cursor), failures)
            for entry in page.logs:
                if entry.key in seen:
                    seen.move_to_end(entry.key)
            unseen = [e for e in page.logs if e.key not in seen]
            fresh.extend(unseen)
            if len(unseen) < len(page.logs) or page.next_cursor is None:
                break
            cursor = page.next_cursor
        first = False
        fresh.reverse()
        ordered = []
        for entry in fresh:  # duplicates within one read are dropped too
            if entry.key not in seen:
                seen[entry.key] = None
                ordered.append(entry)
        while len(seen) > bound:
            seen.popitem(last=False)
        if ordered:
            on_entries(ordered)
        if run.is_terminal:
            return run
        delay = FOLLOW_FIRST_DELAY if ordered else min(delay * WAIT_FACTOR, FOLLOW_MAX_DELAY)
        yield delay


def next_offset(page: EvalRunPage) -> int | None:
    """Where the next page starts, or ``None`` when this was the last one."""
    if page.has_more and page.next_offset is not None:
        return page.next_offset
    return None


def _payload(config: SubmitConfig | Mapping[str, Any], commit_sha: str) -> Mapping[str, Any]:
    if isinstance(config, Mapping):
        return config
    return config.to_submit_payload(commit_sha)


def wait_plan(
    name_or_id: str,
    timeout: float | None,
    on_update: OnUpdate | None,
    monotonic: Callable[[], float],
) -> WaitPlan:
    """Poll until terminal, backing off 2 s → 15 s; yields calls and sleeps."""
    deadline = None if timeout is None else monotonic() + timeout
    delay = WAIT_FIRST_DELAY
    while True:
        outcome = yield _get(name_or_id)
        if isinstance(outcome, BaseException):
            raise outcome
        run: EvalRun = outcome
        metrics = None
        if run.status == "running" and on_update is not None:
            metrics = yield _metrics(name_or_id)
            if isinstance(metrics, APIStatusError):
                metrics = None  # progress is a nicety; older platforms lack the route
        if on_update is not None:
            on_update(run, metrics)
        if run.is_terminal:
            return run
        if deadline is not None:
            remaining = deadline - monotonic()
            if remaining <= 0:
                raise WaitTimeout(run, timeout or 0.0)
            yield min(delay, remaining)
        else:
            yield delay
        delay = min(delay * WAIT_FACTOR, WAIT_MAX_DELAY)


class EvalRuns(SyncResource):
    def create(
        self,
        config: SubmitConfig | Mapping[str, Any],
        commit_sha: str,
        idempotency_key: str | None = None,
    ) -> CreatedRun:
        """Submit a run pinned to ``commit_sha``; retries reuse one Idempotency-Key."""
        key = idempotency_key or str(uuid.uuid4())
        return self._client._execute(_create(_payload(config, commit_sha), key))

    def list(
        self, limit: int = PAGE_LIMIT, offset: int = 0, status: str | None = None
    ) -> EvalRunPage:
        """One page of runs, newest first (at most 50 per page)."""
        return self._client._execute(_list(limit, offset, status))

    def pages(
        self, status: str | None = None, page_size: int = PAGE_LIMIT
    ) -> Iterator[EvalRunPage]:
        """Pages of runs, newest first, following ``next_offset`` until the last one."""
        offset: int | None = 0
        while offset is not None:
            page = self.list(page_size, offset, status)
            yield page
            offset = next_offset(page)

    def iter_all(self, status: str | None = None) -> Iterator[EvalRun]:
        """Every run, page by page."""
        for page in self.pages(status):
            yield from page.eval_runs

    def get(self, name_or_id: str) -> EvalRun:
        return self._client._execute(_get(name_or_id))

    def metrics(self, name_or_id: str) -> RunMetrics:
        return self._client._execute(_metrics(name_or_id))

    def stop(self, name_or_id: str) -> EvalRun:
        """Ask the platform to stop a run; returns its state afterwards (409 if terminal)."""
        self._client._execute(_stop(name_or_id))
        return self.get(name_or_id)

    def wait(
        self,
        name_or_id: str,
        timeout: float | None = None,
        on_update: OnUpdate | None = None,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> EvalRun:
        """Poll until the run is terminal; ``WaitTimeout`` after ``timeout`` seconds."""
        plan = wait_plan(name_or_id, timeout, on_update, monotonic)
        return drive_sync(plan, self._client._execute, self._client._sleep, APIStatusError)

    def logs(self, name_or_id: str, limit: int = 50, cursor: str | None = None) -> LogPage:
        """One page of the run's logs, newest first (``next_cursor``: the older page)."""
        return self._client._execute(_logs(name_or_id, limit, cursor))

    def recent_logs(self, name_or_id: str, count: int = 50) -> LogEntries:
        """The newest ``count`` entries, oldest first."""
        plan = recent_logs_plan(name_or_id, count)
        return drive_sync(plan, self._client._execute, self._client._sleep)

    def follow_logs(
        self,
        name_or_id: str,
        on_entries: Callable[[LogEntries], None],
        limit: int = 50,
    ) -> EvalRun:
        """Hand over new log entries as they appear until the run ends; returns the
        final run. Survives 429/5xx/lost connections (up to 20 polls in a row)."""
        plan = follow_logs_plan(name_or_id, limit, on_entries)
        return drive_sync(
            plan,
            self._client._execute,
            self._client._sleep,
            (APIStatusError, APIConnectionError),
        )


class AsyncEvalRuns(AsyncResource):
    async def create(
        self,
        config: SubmitConfig | Mapping[str, Any],
        commit_sha: str,
        idempotency_key: str | None = None,
    ) -> CreatedRun:
        key = idempotency_key or str(uuid.uuid4())
        return await self._client._execute(_create(_payload(config, commit_sha), key))

    async def list(
        self, limit: int = PAGE_LIMIT, offset: int = 0, status: str | None = None
    ) -> EvalRunPage:
        return await self._client._execute(_list(limit, offset, status))

    async def pages(
        self, status: str | None = None, page_size: int = PAGE_LIMIT
    ) -> AsyncIterator[EvalRunPage]:
        offset: int | None = 0
        while offset is not None:
            page = await self.list(page_size, offset, status)
            yield page
            offset = next_offset(page)

    async def iter_all(self, status: str | None = None) -> AsyncIterator[EvalRun]:
        async for page in self.pages(status):
            for run in page.eval_runs:
                yield run

    async def get(self, name_or_id: str) -> EvalRun:
        return await self._client._execute(_get(name_or_id))

    async def metrics(self, name_or_id: str) -> RunMetrics:
        return await self._client._execute(_metrics(name_or_id))

    async def stop(self, name_or_id: str) -> EvalRun:
        await self._client._execute(_stop(name_or_id))
        return await self.get(name_or_id)

    async def wait(
        self,
        name_or_id: str,
        timeout: float | None = None,
        on_update: OnUpdate | None = None,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> EvalRun:
        plan = wait_plan(name_or_id, timeout, on_update, monotonic)
        return await drive_async(plan, self._client._execute, self._client._sleep, APIStatusError)

    async def logs(self, name_or_id: str, limit: int = 50, cursor: str | None = None) -> LogPage:
        return await self._client._execute(_logs(name_or_id, limit, cursor))

    async def recent_logs(self, name_or_id: str, count: int = 50) -> LogEntries:
        plan = recent_logs_plan(name_or_id, count)
        return await drive_async(plan, self._client._execute, self._client._sleep)

    async def follow_logs(
        self,
        name_or_id: str,
        on_entries: Callable[[LogEntries], None],
        limit: int = 50,
    ) -> EvalRun:
        plan = follow_logs_plan(name_or_id, limit, on_entries)
        return await drive_async(
            plan,
            self._client._execute,
            self._client._sleep,
            (APIStatusError, APIConnectionError),
        )
