"""``client.rollout_servers``: registering an ``osmosis serve`` rollout server."""

from __future__ import annotations

from typing import Any

from osmosis_client.platform._transport import RequestOptions
from osmosis_client.platform.models import RegisteredServer, parse
from osmosis_client.platform.resources._base import AsyncResource, Call, SyncResource

REGISTER_TIMEOUT = 15.0


def _register(
    host: str, port: int, agent_loop_name: str, api_key: str | None
) -> Call[RegisteredServer]:
    body: dict[str, Any] = {"host": host, "port": port, "agent_loop_name": agent_loop_name}
    if api_key:
        body["api_key"] = api_key
    return Call(
        RequestOptions(
            "POST",
            "/api/cli/rollout-server/register",
            json=body,
            scope="required",
            timeout=REGISTER_TIMEOUT,
        ),
        lambda data: parse(RegisteredServer, data, what="rollout server registration"),
    )


class RolloutServers(SyncResource):
    def register(
        self, host: str, port: int, agent_loop_name: str, api_key: str | None = None
    ) -> RegisteredServer:
        """Tell the platform where this rollout server listens; it health-checks it."""
        return self._client._execute(_register(host, port, agent_loop_name, api_key))


class AsyncRolloutServers(AsyncResource):
    async def register(
        self, host: str, port: int, agent_loop_name: str, api_key: str | None = None
    ) -> RegisteredServer:
        return await self._client._execute(_register(host, port, agent_loop_name, api_key))
