"""Registering a running agent-loop server with the platform — after ``/health`` answers
locally (the platform health-checks it at once); a failure is a warning, never a stop."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from osmosis_cli.context import AppState
    from osmosis_cli.terminal.output import Output
    from osmosis_client.rollout.agent_loop.server import RolloutServer

PUBLIC_ADDRESS_SERVICE = "https://api.ipify.org"


async def register_server(
    out: Output,
    app_state: AppState,
    server: RolloutServer,
    host: str,
    port: int,
    key: str | None,
    public_host: str | None,
) -> None:
    """Register after /health answers locally (the platform health-checks us at once).
    A failed registration is a warning: the server keeps serving."""
    import asyncio

    from osmosis_client.errors import OsmosisError

    if not await _healthy(port):
        out.warn("the server does not answer /health locally; not registering")
        return
    address = public_host or await _advertised(out, host)
    if address is None:
        return
    auth = app_state.resolve()
    name = str(getattr(server.loop, "name", ""))
    try:
        client = app_state.client(auth)
        with client:
            register = client.rollout_servers.register
            result = await asyncio.to_thread(register, address, port, name, key)
    except OsmosisError as exc:
        out.warn(f"registration with the platform failed ({exc.message}); still serving")
        return
    check = result.health_check_result
    detail = f" — {check.error}" if check and check.error else ""
    out.info(f"Registered with the platform as {result.id}: {result.status}{detail}")


async def _healthy(port: int) -> bool:
    import asyncio

    import aiohttp

    async with aiohttp.ClientSession() as session:
        for _ in range(50):
            try:
                async with session.get(f"http://127.0.0.1:{port}/health") as response:
                    if response.status == 200:
                        return True
            except aiohttp.ClientError:
                pass
            await asyncio.sleep(0.1)
    return False


async def _advertised(out: Output, host: str) -> str | None:
    """The address to register: -H when it is specific, else this machine's public
    address — looked up (and said so) only because registration needs it."""
    if host not in ("0.0.0.0", "::", ""):
        return host
    import ipaddress

    import httpx

    from osmosis_client._tls import ssl_context

    out.info(
        f"looking up this machine's public address at {PUBLIC_ADDRESS_SERVICE} to register "
        "it (pass --public-host to skip)"
    )
    try:
        async with httpx.AsyncClient(timeout=5.0, verify=ssl_context()) as client:
            response = await client.get(PUBLIC_ADDRESS_SERVICE)
            response.raise_for_status()
            return str(ipaddress.ip_address(response.text[:64].strip()))
    except (httpx.HTTPError, ValueError) as exc:
        out.warn(f"could not learn the public address ({type(exc).__name__}); not registering")
        return None
