"""``client.benchmarks``: the benchmark catalog — list, pages, one benchmark with its
tasks and leaderboard (published-cli-0.3.8-train.md §4.2-4.3). Runs of them are
``client.benchmark_runs``."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

from osmosis_client.platform._transport import RequestOptions, encode_segment
from osmosis_client.platform.benchmark.benchmark_models import BenchmarkDetail, BenchmarkPage
from osmosis_client.platform.models import parse
from osmosis_client.platform.resources import _base as base

ROUTE = "/api/cli/benchmarks"


def list_call(limit: int, offset: int) -> base.Call[BenchmarkPage]:
    return base.page_call(ROUTE, base.reader(BenchmarkPage, "benchmark list"), limit, offset)


def get_call(key: str) -> base.Call[BenchmarkDetail]:
    return base.Call(
        RequestOptions("GET", f"{ROUTE}/{encode_segment(key)}", scope="required"),
        lambda data: parse(BenchmarkDetail, data, what="benchmark"),
    )


class Benchmarks(base.SyncResource):
    def list(self, limit: int = base.PAGE_LIMIT, offset: int = 0) -> BenchmarkPage:
        """One page of the catalog (at most 50)."""
        return self._client._execute(list_call(limit, offset))

    def pages(self, page_size: int = base.PAGE_LIMIT) -> Iterator[BenchmarkPage]:
        return base.walk_pages(lambda offset: self.list(page_size, offset))

    def get(self, key: str) -> BenchmarkDetail:
        """A benchmark by key, id or name: its tasks, task sets, what a run needs
        (harness, judge) and its leaderboard; not found, the nearest key said."""
        plan = base.named_plan(key, get_call(key), list_call(base.PAGE_LIMIT, 0), _keys)
        return self._drive(plan)


class AsyncBenchmarks(base.AsyncResource):
    async def list(self, limit: int = base.PAGE_LIMIT, offset: int = 0) -> BenchmarkPage:
        return await self._client._execute(list_call(limit, offset))

    def pages(self, page_size: int = base.PAGE_LIMIT) -> AsyncIterator[BenchmarkPage]:
        return base.awalk_pages(lambda offset: self.list(page_size, offset))

    async def get(self, key: str) -> BenchmarkDetail:
        plan = base.named_plan(key, get_call(key), list_call(base.PAGE_LIMIT, 0), _keys)
        return await self._drive(plan)


def _keys(page: BenchmarkPage) -> list[str]:
    return [b.source_ref for b in page.benchmarks]


__all__ = ["AsyncBenchmarks", "Benchmarks"]
