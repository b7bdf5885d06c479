"""``client.rollouts``: the rollouts the platform synced from the workspace's repository
(``GET /api/cli/rollouts``, published-cli-0.3.8.md §7.2)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

from osmosis_client.platform.models import RolloutPage
from osmosis_client.platform.resources import _base as base

PAGE_LIMIT = 50


def list_call(limit: int, offset: int, branch: str | None) -> base.Call[RolloutPage]:
    read = base.reader(RolloutPage, "rollout list")
    return base.page_call("/api/cli/rollouts", read, limit, offset, branch=branch)


class Rollouts(base.SyncResource):
    def list(
        self, limit: int = PAGE_LIMIT, offset: int = 0, branch: str | None = None
    ) -> RolloutPage:
        """One page of rollouts (at most 50); ``branch``: as synced from that branch."""
        return self._client._execute(list_call(limit, offset, branch))

    def pages(
        self, branch: str | None = None, page_size: int = PAGE_LIMIT
    ) -> Iterator[RolloutPage]:
        """Pages, following ``next_offset`` until the last one."""
        return base.walk_pages(lambda offset: self.list(page_size, offset, branch))


class AsyncRollouts(base.AsyncResource):
    async def list(
        self, limit: int = PAGE_LIMIT, offset: int = 0, branch: str | None = None
    ) -> RolloutPage:
        return await self._client._execute(list_call(limit, offset, branch))

    def pages(
        self, branch: str | None = None, page_size: int = PAGE_LIMIT
    ) -> AsyncIterator[RolloutPage]:
        return base.awalk_pages(lambda offset: self.list(page_size, offset, branch))
