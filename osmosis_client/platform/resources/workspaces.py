"""``client.workspaces``: the workspaces the token's user belongs to."""

from __future__ import annotations

from typing import Any

from osmosis_client.platform._transport import RequestOptions
from osmosis_client.platform.models import Workspace, WorkspaceList, parse
from osmosis_client.platform.quickstart import QuickstartStatus
from osmosis_client.platform.resources._base import AsyncResource, Call, SyncResource


def _list() -> Call[list[Workspace]]:
    return Call(
        RequestOptions("GET", "/api/cli/workspaces"),
        lambda data: parse(WorkspaceList, data, what="workspace list").workspaces,
    )


QUICKSTART = "/api/cli/quickstart"


def _status(workspace_id: str) -> Call[QuickstartStatus]:
    options = RequestOptions("GET", QUICKSTART, params={"organizationId": workspace_id})
    return Call(options, lambda data: parse(QuickstartStatus, data, what="quickstart status"))


def _record(workspace_id: str, intent: str) -> Call[Any]:
    body = {"organizationId": workspace_id, "intent": intent}
    return Call(RequestOptions("POST", QUICKSTART, json=body), lambda data: data)


class Workspaces(SyncResource):
    def list(self) -> list[Workspace]:
        """``GET /api/cli/workspaces``."""
        return self._client._execute(_list())

    def quickstart_status(self, workspace_id: str) -> QuickstartStatus:
        """The workspace's onboarding: its repository, billing, a quickstart done."""
        return self._client._execute(_status(workspace_id))

    def record_quickstart(self, workspace_id: str, intent: str) -> None:
        """Tell the platform this workspace's quickstart was completed with ``intent``."""
        self._client._execute(_record(workspace_id, intent))


class AsyncWorkspaces(AsyncResource):
    async def list(self) -> list[Workspace]:
        return await self._client._execute(_list())

    async def quickstart_status(self, workspace_id: str) -> QuickstartStatus:
        return await self._client._execute(_status(workspace_id))

    async def record_quickstart(self, workspace_id: str, intent: str) -> None:
        await self._client._execute(_record(workspace_id, intent))
