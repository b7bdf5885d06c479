"""``client.auth``: device authorization, token polling, verify and revoke."""

from __future__ import annotations

from typing import Any

from osmosis_client.platform._transport import RequestOptions, encode_segment
from osmosis_client.platform.models import DeviceAuthorization, TokenGrant, VerifyResult, parse
from osmosis_client.platform.resources._base import AsyncResource, Call, SyncResource


def _authorize(device_name: str, workspace: str | None) -> Call[DeviceAuthorization]:
    body: dict[str, Any] = {"deviceName": device_name}
    if workspace:
        body["workspace"] = workspace
    return Call(
        RequestOptions("POST", "/api/cli/device/authorize", json=body, authenticated=False),
        lambda data: parse(DeviceAuthorization, data, what="device authorization"),
    )


def _poll(device_code: str) -> Call[TokenGrant]:
    # The device flow does its own backoff between polls: no transport retries here.
    return Call(
        RequestOptions(
            "POST",
            "/api/cli/device/token",
            json={"device_code": device_code},
            authenticated=False,
            retry=False,
        ),
        lambda data: parse(TokenGrant, data, what="token response"),
    )


def _verify() -> Call[VerifyResult]:
    return Call(
        RequestOptions("GET", "/api/cli/verify", scope="git"),
        lambda data: parse(VerifyResult, data, what="verify response"),
    )


def _revoke(token_id: str) -> Call[None]:
    return Call(
        RequestOptions("DELETE", f"/api/cli/tokens/{encode_segment(token_id)}"),
        lambda data: None,
    )


class Auth(SyncResource):
    def device_authorize(
        self, device_name: str, workspace: str | None = None
    ) -> DeviceAuthorization:
        """Start a device login (``POST /api/cli/device/authorize``)."""
        return self._client._execute(_authorize(device_name, workspace))

    def poll_token(self, device_code: str) -> TokenGrant:
        """One poll of ``POST /api/cli/device/token``; pending states raise ``BadRequestError``."""
        return self._client._execute(_poll(device_code))

    def verify(self) -> VerifyResult:
        """Who the current token belongs to (``GET /api/cli/verify``)."""
        return self._client._execute(_verify())

    def revoke(self, token_id: str) -> None:
        """Revoke a token (``DELETE /api/cli/tokens/{id}``)."""
        self._client._execute(_revoke(token_id))


class AsyncAuth(AsyncResource):
    async def device_authorize(
        self, device_name: str, workspace: str | None = None
    ) -> DeviceAuthorization:
        return await self._client._execute(_authorize(device_name, workspace))

    async def poll_token(self, device_code: str) -> TokenGrant:
        return await self._client._execute(_poll(device_code))

    async def verify(self) -> VerifyResult:
        return await self._client._execute(_verify())

    async def revoke(self, token_id: str) -> None:
        await self._client._execute(_revoke(token_id))
