"""``client.eval_runs``: submit, list, inspect, stop and wait for hosted eval runs."""

from __future__ import annotations

import builtins
import time
import uuid
from collections.abc import AsyncIterator, Callable, Generator, Iterator, Mapping, Sequence
from typing import Any, Protocol

from osmosis_client._plan import drive_async, drive_sync
from osmosis_client.errors import (
    APIStatusError,
    OsmosisError,
)
from osmosis_client.platform.eval.sample_models import (
    RetriedRun,
    SampleFile,
    SamplesManifest,
    SampleURL,
)
from osmosis_client.platform.models import (
    CreatedRun,
    EvalRun,
    EvalRunPage,
    LogPage,
    RunMetrics,
)
from osmosis_client.platform.resources._base import (
    AsyncResource,
    Call,
    SyncResource,
    awalk_pages,
    walk_pages,
    with_secrets,
)
from osmosis_client.platform.resources.eval_calls import (
    PAGE_LIMIT,
    create_call,
    download_urls_call,
    get_call,
    list_call,
    logs_call,
    manifest_call,
    metrics_call,
    retry_call,
    stop_call,
)
from osmosis_client.platform.resources.eval_logs import (
    LogEntries,
    follow_logs_plan,
    recent_logs_plan,
)

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


def _payload(
    config: SubmitConfig | Mapping[str, Any],
    commit_sha: str,
    secrets: Mapping[str, str] | None = None,
) -> Mapping[str, Any]:
    payload = dict(config) if isinstance(config, Mapping) else config.to_submit_payload(commit_sha)
    return with_secrets(payload, secrets)


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
        outcome = yield get_call(name_or_id)
        if isinstance(outcome, BaseException):
            raise outcome
        run: EvalRun = outcome
        metrics = None
        if run.status == "running" and on_update is not None:
            metrics = yield metrics_call(name_or_id)
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
        *,
        secrets: Mapping[str, str] | None = None,
    ) -> CreatedRun:
        """Submit a run pinned to ``commit_sha``; retries reuse one Idempotency-Key.
        ``secrets``: values for this run only (``secrets.provided``), overriding stored
        secrets of the same names."""
        key = idempotency_key or str(uuid.uuid4())
        return self._client._execute(create_call(_payload(config, commit_sha, secrets), key))

    def list(
        self, limit: int = PAGE_LIMIT, offset: int = 0, status: str | None = None
    ) -> EvalRunPage:
        """One page of runs, newest first (at most 50 per page)."""
        return self._client._execute(list_call(limit, offset, status))

    def pages(
        self, status: str | None = None, page_size: int = PAGE_LIMIT
    ) -> Iterator[EvalRunPage]:
        """Pages of runs, newest first, following ``next_offset`` until the last one."""
        return walk_pages(lambda offset: self.list(page_size, offset, status))

    def iter_all(self, status: str | None = None) -> Iterator[EvalRun]:
        """Every run, page by page."""
        for page in self.pages(status):
            yield from page.eval_runs

    def get(self, name_or_id: str) -> EvalRun:
        return self._client._execute(get_call(name_or_id))

    def metrics(self, name_or_id: str) -> RunMetrics:
        return self._client._execute(metrics_call(name_or_id))

    def samples_manifest(
        self, run_id: str, types: Sequence[str], rows: str | None = None
    ) -> SamplesManifest:
        """The files of a run's outputs (``types``: metrics, trajectories, artifacts,
        logs; ``rows``: e.g. ``"3,7,10-20"``). Takes the run's id."""
        return self._client._execute(manifest_call(run_id, types, rows))

    def download_urls(self, run_id: str, files: Sequence[SampleFile]) -> builtins.list[SampleURL]:
        """Presigned URLs for up to 500 manifest files."""
        return self._client._execute(download_urls_call(run_id, files))

    def retry(self, name_or_id: str, secrets: Mapping[str, str] | None = None) -> RetriedRun:
        """Retry a run's failed and skipped samples (all of it when there are none);
        ``secrets``: values for the run-scoped secrets the platform asked for."""
        return self._client._execute(retry_call(name_or_id, secrets))

    def stop(self, name_or_id: str) -> EvalRun:
        """Ask the platform to stop a run; returns its state afterwards (409 if terminal)."""
        self._client._execute(stop_call(name_or_id))
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
        return self._client._execute(logs_call(name_or_id, limit, cursor))

    def recent_logs(self, name_or_id: str, count: int = 50) -> LogEntries:
        """The newest ``count`` entries, oldest first."""
        return self.recent_log_page(name_or_id, count).logs

    def recent_log_page(self, name_or_id: str, count: int = 50) -> LogPage:
        """The newest ``count`` entries, oldest first, and the older page's cursor."""
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
        return self._drive(follow_logs_plan(name_or_id, limit, on_entries))


class AsyncEvalRuns(AsyncResource):
    async def create(
        self,
        config: SubmitConfig | Mapping[str, Any],
        commit_sha: str,
        idempotency_key: str | None = None,
        *,
        secrets: Mapping[str, str] | None = None,
    ) -> CreatedRun:
        key = idempotency_key or str(uuid.uuid4())
        return await self._client._execute(create_call(_payload(config, commit_sha, secrets), key))

    async def list(
        self, limit: int = PAGE_LIMIT, offset: int = 0, status: str | None = None
    ) -> EvalRunPage:
        return await self._client._execute(list_call(limit, offset, status))

    def pages(
        self, status: str | None = None, page_size: int = PAGE_LIMIT
    ) -> AsyncIterator[EvalRunPage]:
        return awalk_pages(lambda offset: self.list(page_size, offset, status))

    async def iter_all(self, status: str | None = None) -> AsyncIterator[EvalRun]:
        async for page in self.pages(status):
            for run in page.eval_runs:
                yield run

    async def get(self, name_or_id: str) -> EvalRun:
        return await self._client._execute(get_call(name_or_id))

    async def metrics(self, name_or_id: str) -> RunMetrics:
        return await self._client._execute(metrics_call(name_or_id))

    async def samples_manifest(
        self, run_id: str, types: Sequence[str], rows: str | None = None
    ) -> SamplesManifest:
        return await self._client._execute(manifest_call(run_id, types, rows))

    async def download_urls(
        self, run_id: str, files: Sequence[SampleFile]
    ) -> builtins.list[SampleURL]:
        return await self._client._execute(download_urls_call(run_id, files))

    async def retry(self, name_or_id: str, secrets: Mapping[str, str] | None = None) -> RetriedRun:
        return await self._client._execute(retry_call(name_or_id, secrets))

    async def stop(self, name_or_id: str) -> EvalRun:
        await self._client._execute(stop_call(name_or_id))
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
        return await self._client._execute(logs_call(name_or_id, limit, cursor))

    async def recent_logs(self, name_or_id: str, count: int = 50) -> LogEntries:
        return (await self.recent_log_page(name_or_id, count)).logs

    async def recent_log_page(self, name_or_id: str, count: int = 50) -> LogPage:
        plan = recent_logs_plan(name_or_id, count)
        return await drive_async(plan, self._client._execute, self._client._sleep)

    async def follow_logs(
        self,
        name_or_id: str,
        on_entries: Callable[[LogEntries], None],
        limit: int = 50,
    ) -> EvalRun:
        return await self._drive(follow_logs_plan(name_or_id, limit, on_entries))
