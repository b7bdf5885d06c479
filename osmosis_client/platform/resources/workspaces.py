"""``client.workspaces``: the workspaces the token's user belongs to."""

from __future__ import annotations

from osmosis_client.platform._transport import RequestOptions
from osmosis_client.platform.models import Workspace, WorkspaceList, parse
from osmosis_client.platform.resources._base import AsyncResource, Call, SyncResource


def _list() -> Call[list[Workspace]]:
    return Call(
        RequestOptions("GET", "/api/cli/workspaces"),
        lambda data: parse(WorkspaceList, data, what="workspace list").workspaces,
    )


class Workspaces(SyncResource):
    def list(self) -> list[Workspace]:
        """``GET /api/cli/workspaces``."""
        return self._client._execute(_list())


class AsyncWorkspaces(AsyncResource):
    async def list(self) -> list[Workspace]:
        return await self._client._execute(_list())
