"""``client.eval_runs``: submit, list, inspect, stop and wait for hosted eval runs."""

from __future__ import annotations

import time
import uuid
from collections.abc import AsyncIterator, Callable, Generator, Iterator, Mapping
from typing import Any, Protocol

from osmosis_client._plan import drive_async, drive_sync
from osmosis_client.errors import APIStatusError, OsmosisError
from osmosis_client.platform._transport import AMBIGUOUS_CREATE_HINT, RequestOptions, encode_segment
from osmosis_client.platform.models import (
    CreatedRun,
    EvalRun,
    EvalRunPage,
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
