"""``client.rollouts``: the rollouts the platform synced from the workspace's repository
(``GET /api/cli/rollouts``, published-cli-0.3.8.md §7.2)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

from osmosis_client.platform._transport import RequestOptions
from osmosis_client.platform.models import RolloutPage, parse
from osmosis_client.platform.resources._base import (
    AsyncResource,
    Call,
    SyncResource,
    awalk_pages,
    walk_pages,
)

PAGE_LIMIT = 50


def list_call(limit: int, offset: int, branch: str | None) -> Call[RolloutPage]:
    params: dict[str, Any] = {"limit": min(max(limit, 1), PAGE_LIMIT), "offset": offset}
    if branch:
        params["branch"] = branch
    return Call(
        RequestOptions("GET", "/api/cli/rollouts", params=params, scope="required"),
        lambda data: parse(RolloutPage, data, what="rollout list"),
    )


class Rollouts(SyncResource):
    def list(
        self, limit: int = PAGE_LIMIT, offset: int = 0, branch: str | None = None
    ) -> RolloutPage:
        """One page of rollouts (at most 50); ``branch``: as synced from that branch."""
        return self._client._execute(list_call(limit, offset, branch))

    def pages(
        self, branch: str | None = None, page_size: int = PAGE_LIMIT
    ) -> Iterator[RolloutPage]:
        """Pages, following ``next_offset`` until the last one."""
        return walk_pages(lambda offset: self.list(page_size, offset, branch))


class AsyncRollouts(AsyncResource):
    async def list(
        self, limit: int = PAGE_LIMIT, offset: int = 0, branch: str | None = None
    ) -> RolloutPage:
        return await self._client._execute(list_call(limit, offset, branch))

    def pages(
        self, branch: str | None = None, page_size: int = PAGE_LIMIT
    ) -> AsyncIterator[RolloutPage]:
        return awalk_pages(lambda offset: self.list(page_size, offset, branch))
