"""``client.benchmark_runs``: runs of benchmarks — submit, list, detail, logs, stop, and
the outputs' manifest and download URLs (published-cli-0.3.8-train.md §4.4-4.9, 4.12).
Downloads themselves are ``osmosis_client.platform.benchmark.benchmark_download``'s.

Better than the published client: ``stop`` returns the run as the platform has it
afterwards (0.3.8 reports ``stopped`` without asking).
"""

from __future__ import annotations

import builtins
import uuid
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from osmosis_client.errors import NotFoundError
from osmosis_client.platform.benchmark.benchmark_models import (
    BenchmarkRunDetail,
    BenchmarkRunPage,
    CreatedBenchmarkRun,
)
from osmosis_client.platform.eval.sample_models import SampleFile, SamplesManifest, SampleURL
from osmosis_client.platform.models import LogPage
from osmosis_client.platform.resources import _base as base
from osmosis_client.platform.resources.run_routes import model_routes

if TYPE_CHECKING:
    from osmosis_client.platform.benchmark.benchmark_config import BenchmarkConfig

ROUTE = "/api/cli/benchmark-runs"
ROUTES = model_routes(
    ROUTE, "benchmark run", CreatedBenchmarkRun, BenchmarkRunPage, BenchmarkRunDetail
)
NO_OUTPUTS_ROUTE = (
    "Benchmark run output route was not found. The run may have been deleted or the "
    "platform may not support benchmark downloads yet."
)


def submit_payload(
    config: BenchmarkConfig | Mapping[str, Any], secrets: Mapping[str, str] | None
) -> dict[str, Any]:
    payload = dict(config) if isinstance(config, Mapping) else config.to_submit_payload()
    return base.with_secrets(payload, secrets)


def _outputs_gone(exc: NotFoundError) -> NotFoundError:
    exc.message = NO_OUTPUTS_ROUTE
    return exc


def _names(page: BenchmarkRunPage) -> list[str | None]:
    return [r.name for r in page.benchmark_runs]


def _run_id(detail: BenchmarkRunDetail) -> str:
    return str(detail.benchmark_run.id)


def _ended(detail: BenchmarkRunDetail) -> bool:
    return detail.benchmark_run.terminal


class BenchmarkRuns(base.SyncResource):
    def submit(
        self,
        config: BenchmarkConfig | Mapping[str, Any],
        idempotency_key: str | None = None,
        *,
        secrets: Mapping[str, str] | None = None,
    ) -> CreatedBenchmarkRun:
        """Start a run from a validated config (or a ready payload); retries reuse one
        Idempotency-Key. ``secrets``: values for ``[secrets].required`` names, this run's
        own."""
        key = idempotency_key or str(uuid.uuid4())
        return self._client._execute(ROUTES.create(submit_payload(config, secrets), key))

    def list(
        self, limit: int = base.PAGE_LIMIT, offset: int = 0, benchmark: str | None = None
    ) -> BenchmarkRunPage:
        """One page of runs, newest first; ``benchmark``: one benchmark's (its id)."""
        return self._client._execute(ROUTES.list(limit, offset, benchmark=benchmark))

    def pages(
        self, page_size: int = base.PAGE_LIMIT, benchmark: str | None = None
    ) -> Iterator[BenchmarkRunPage]:
        return base.walk_pages(lambda offset: self.list(page_size, offset, benchmark))

    def get(self, name_or_id: str) -> BenchmarkRunDetail:
        """The run with its configuration, agents, progress, totals and metrics."""
        return self._drive(ROUTES.named(name_or_id, _names))

    def logs(self, name_or_id: str, limit: int = 50, cursor: str | None = None) -> LogPage:
        return self._client._execute(ROUTES.logs(name_or_id, limit, cursor))

    def follow_logs(
        self, name_or_id: str, on_entries: base.OnEntries, limit: int = 50
    ) -> BenchmarkRunDetail:
        """Hand over new log entries as they appear until the run ends; returns the run
        as it ended. Survives 429/5xx/lost connections (up to 20 polls in a row)."""
        return self._drive(ROUTES.follow(name_or_id, limit, on_entries, _ended))

    def stop(self, name_or_id: str) -> BenchmarkRunDetail:
        """Stop a run (looked up first: ``NOT_FOUND`` sends nothing); returns the run as
        the platform has it afterwards. 409 once it has ended."""
        return self._drive(ROUTES.stopped(name_or_id, _names, _run_id))

    def outputs_manifest(self, run_id: str, types: Sequence[str]) -> SamplesManifest:
        """The files of a run's outputs of ``types`` (summary, results, artifacts, logs)."""
        try:
            return self._client._execute(ROUTES.manifest(run_id, types))
        except NotFoundError as exc:
            raise _outputs_gone(exc) from exc

    def download_urls(self, run_id: str, files: Sequence[SampleFile]) -> builtins.list[SampleURL]:
        """Presigned URLs for up to 500 manifest files."""
        try:
            return self._client._execute(ROUTES.download_urls(run_id, files))
        except NotFoundError as exc:
            raise _outputs_gone(exc) from exc


class AsyncBenchmarkRuns(base.AsyncResource):
    async def submit(
        self,
        config: BenchmarkConfig | Mapping[str, Any],
        idempotency_key: str | None = None,
        *,
        secrets: Mapping[str, str] | None = None,
    ) -> CreatedBenchmarkRun:
        key = idempotency_key or str(uuid.uuid4())
        return await self._client._execute(ROUTES.create(submit_payload(config, secrets), key))

    async def list(
        self, limit: int = base.PAGE_LIMIT, offset: int = 0, benchmark: str | None = None
    ) -> BenchmarkRunPage:
        return await self._client._execute(ROUTES.list(limit, offset, benchmark=benchmark))

    def pages(
        self, page_size: int = base.PAGE_LIMIT, benchmark: str | None = None
    ) -> AsyncIterator[BenchmarkRunPage]:
        return base.awalk_pages(lambda offset: self.list(page_size, offset, benchmark))

    async def get(self, name_or_id: str) -> BenchmarkRunDetail:
        return await self._drive(ROUTES.named(name_or_id, _names))

    async def logs(self, name_or_id: str, limit: int = 50, cursor: str | None = None) -> LogPage:
        return await self._client._execute(ROUTES.logs(name_or_id, limit, cursor))

    async def follow_logs(
        self, name_or_id: str, on_entries: base.OnEntries, limit: int = 50
    ) -> BenchmarkRunDetail:
        return await self._drive(ROUTES.follow(name_or_id, limit, on_entries, _ended))

    async def stop(self, name_or_id: str) -> BenchmarkRunDetail:
        return await self._drive(ROUTES.stopped(name_or_id, _names, _run_id))

    async def outputs_manifest(self, run_id: str, types: Sequence[str]) -> SamplesManifest:
        try:
            return await self._client._execute(ROUTES.manifest(run_id, types))
        except NotFoundError as exc:
            raise _outputs_gone(exc) from exc

    async def download_urls(
        self, run_id: str, files: Sequence[SampleFile]
    ) -> builtins.list[SampleURL]:
        try:
            return await self._client._execute(ROUTES.download_urls(run_id, files))
        except NotFoundError as exc:
            raise _outputs_gone(exc) from exc


__all__ = ["AsyncBenchmarkRuns", "BenchmarkRuns"]
