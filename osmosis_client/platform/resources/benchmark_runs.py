"""``client.benchmark_runs``: runs of benchmarks — submit, list, detail, logs, stop, and
the outputs' manifest and download URLs (published-cli-0.3.8-train.md §4.4-4.9, 4.12).
Downloads themselves are ``osmosis_client.platform.benchmark_download``'s.

Better than the published client: ``stop`` returns the run as the platform has it
afterwards (0.3.8 reports ``stopped`` without asking).
"""

from __future__ import annotations

import builtins
import uuid
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from osmosis_client.errors import NotFoundError
from osmosis_client.platform._transport import RequestOptions, encode_segment
from osmosis_client.platform.benchmark_models import (
    BenchmarkRunDetail,
    BenchmarkRunPage,
    CreatedBenchmarkRun,
)
from osmosis_client.platform.models import LogPage, parse
from osmosis_client.platform.resources._base import (
    PAGE_LIMIT,
    AsyncResource,
    Call,
    SyncResource,
    awalk_pages,
    log_page_call,
    page_params,
    walk_pages,
    with_secrets,
)
from osmosis_client.platform.resources.eval_calls import DOWNLOAD_URL_BATCH
from osmosis_client.platform.sample_models import SampleFile, SamplesManifest, SampleURL, SampleURLs

if TYPE_CHECKING:
    from osmosis_client.platform.benchmark_config import BenchmarkConfig

ROUTE = "/api/cli/benchmark-runs"
NO_OUTPUTS_ROUTE = (
    "Benchmark run output route was not found. The run may have been deleted or the "
    "platform may not support benchmark downloads yet."
)


def submit_call(payload: Mapping[str, Any], idempotency_key: str) -> Call[CreatedBenchmarkRun]:
    return Call(
        RequestOptions("POST", ROUTE, json=dict(payload), scope="required",
                       idempotency_key=idempotency_key, ambiguous="benchmark_run"),
        lambda data: parse(CreatedBenchmarkRun, data, what="created benchmark run"),
    )  # fmt: skip


def list_call(limit: int, offset: int, benchmark: str | None) -> Call[BenchmarkRunPage]:
    params = page_params(limit, offset)
    if benchmark:
        params["benchmark"] = benchmark
    return Call(
        RequestOptions("GET", ROUTE, params=params, scope="required"),
        lambda data: parse(BenchmarkRunPage, data, what="benchmark run list"),
    )


def get_call(name: str) -> Call[BenchmarkRunDetail]:
    return Call(
        RequestOptions("GET", f"{ROUTE}/{encode_segment(name)}", scope="required"),
        lambda data: parse(BenchmarkRunDetail, data, what="benchmark run"),
    )


def logs_call(name: str, limit: int, cursor: str | None) -> Call[LogPage]:
    return log_page_call(ROUTE, name, limit, cursor, "benchmark run logs")


def stop_call(run_id: str) -> Call[Any]:
    return Call(
        RequestOptions("POST", f"{ROUTE}/{encode_segment(run_id)}/stop", json={},
                       scope="required"),
        lambda data: data,  # the run's state is read afterwards
    )  # fmt: skip


def manifest_call(run_id: str, types: Sequence[str]) -> Call[SamplesManifest]:
    return Call(
        RequestOptions("GET", f"{ROUTE}/{encode_segment(run_id)}/outputs/manifest",
                       params={"types": ",".join(types)}, scope="required"),
        lambda data: parse(SamplesManifest, data, what="benchmark outputs manifest"),
    )  # fmt: skip


def urls_call(run_id: str, files: Sequence[SampleFile]) -> Call[list[SampleURL]]:
    if len(files) > DOWNLOAD_URL_BATCH:
        raise ValueError(f"at most {DOWNLOAD_URL_BATCH} paths per request")
    items = [{"path": f.path, **({"token": f.token} if f.token is not None else {})} for f in files]
    return Call(
        RequestOptions("POST", f"{ROUTE}/{encode_segment(run_id)}/outputs/download-urls",
                       json={"items": items}, scope="required"),
        lambda data: parse(SampleURLs, data, what="download URLs").urls,
    )  # fmt: skip


def submit_payload(
    config: BenchmarkConfig | Mapping[str, Any], secrets: Mapping[str, str] | None
) -> dict[str, Any]:
    payload = dict(config) if isinstance(config, Mapping) else config.to_submit_payload()
    return with_secrets(payload, secrets)


def _outputs_gone(exc: NotFoundError) -> NotFoundError:
    exc.message = NO_OUTPUTS_ROUTE
    return exc


class BenchmarkRuns(SyncResource):
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
        return self._client._execute(submit_call(submit_payload(config, secrets), key))

    def list(
        self, limit: int = PAGE_LIMIT, offset: int = 0, benchmark: str | None = None
    ) -> BenchmarkRunPage:
        """One page of runs, newest first; ``benchmark``: one benchmark's (its id)."""
        return self._client._execute(list_call(limit, offset, benchmark))

    def pages(
        self, page_size: int = PAGE_LIMIT, benchmark: str | None = None
    ) -> Iterator[BenchmarkRunPage]:
        return walk_pages(lambda offset: self.list(page_size, offset, benchmark))

    def get(self, name_or_id: str) -> BenchmarkRunDetail:
        """The run with its configuration, agents, progress, totals and metrics."""
        return self._client._execute(get_call(name_or_id))

    def logs(self, name_or_id: str, limit: int = 50, cursor: str | None = None) -> LogPage:
        return self._client._execute(logs_call(name_or_id, limit, cursor))

    def stop(self, name_or_id: str) -> BenchmarkRunDetail:
        """Stop a run (looked up first: ``NOT_FOUND`` sends nothing); returns the run as
        the platform has it afterwards. 409 once it has ended."""
        run = self.get(name_or_id).benchmark_run
        self._client._execute(stop_call(str(run.id)))
        return self.get(str(run.id))

    def outputs_manifest(self, run_id: str, types: Sequence[str]) -> SamplesManifest:
        """The files of a run's outputs of ``types`` (summary, results, artifacts, logs)."""
        try:
            return self._client._execute(manifest_call(run_id, types))
        except NotFoundError as exc:
            raise _outputs_gone(exc) from exc

    def download_urls(self, run_id: str, files: Sequence[SampleFile]) -> builtins.list[SampleURL]:
        """Presigned URLs for up to 500 manifest files."""
        try:
            return self._client._execute(urls_call(run_id, files))
        except NotFoundError as exc:
            raise _outputs_gone(exc) from exc


class AsyncBenchmarkRuns(AsyncResource):
    async def submit(
        self,
        config: BenchmarkConfig | Mapping[str, Any],
        idempotency_key: str | None = None,
        *,
        secrets: Mapping[str, str] | None = None,
    ) -> CreatedBenchmarkRun:
        key = idempotency_key or str(uuid.uuid4())
        return await self._client._execute(submit_call(submit_payload(config, secrets), key))

    async def list(
        self, limit: int = PAGE_LIMIT, offset: int = 0, benchmark: str | None = None
    ) -> BenchmarkRunPage:
        return await self._client._execute(list_call(limit, offset, benchmark))

    def pages(
        self, page_size: int = PAGE_LIMIT, benchmark: str | None = None
    ) -> AsyncIterator[BenchmarkRunPage]:
        return awalk_pages(lambda offset: self.list(page_size, offset, benchmark))

    async def get(self, name_or_id: str) -> BenchmarkRunDetail:
        return await self._client._execute(get_call(name_or_id))

    async def logs(self, name_or_id: str, limit: int = 50, cursor: str | None = None) -> LogPage:
        return await self._client._execute(logs_call(name_or_id, limit, cursor))

    async def stop(self, name_or_id: str) -> BenchmarkRunDetail:
        run = (await self.get(name_or_id)).benchmark_run
        await self._client._execute(stop_call(str(run.id)))
        return await self.get(str(run.id))

    async def outputs_manifest(self, run_id: str, types: Sequence[str]) -> SamplesManifest:
        try:
            return await self._client._execute(manifest_call(run_id, types))
        except NotFoundError as exc:
            raise _outputs_gone(exc) from exc

    async def download_urls(
        self, run_id: str, files: Sequence[SampleFile]
    ) -> builtins.list[SampleURL]:
        try:
            return await self._client._execute(urls_call(run_id, files))
        except NotFoundError as exc:
            raise _outputs_gone(exc) from exc


__all__ = ["AsyncBenchmarkRuns", "BenchmarkRuns"]
