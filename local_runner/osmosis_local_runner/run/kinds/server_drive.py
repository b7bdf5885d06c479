"""One rollout over the wire (rollout-protocol.md part B): ``POST /rollout``, then long
polls of its result with the lease — each retried the way the protocol allows, and every
way it can end named: :class:`Transient` (retryable with ``--max-retries``),
:class:`ServerGone`, the protocol's ``Refused`` / ``BadAnswer``."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from osmosis_client.errors import OsmosisError
from osmosis_local_runner.errors import RunAborted
from osmosis_local_runner.server.process import ServerProcess
from osmosis_local_runner.server.protocol import Accepted, Refused, Result, RolloutServerClient

LEASE_MARGIN = 10.0  # stop retrying polls this long before the lease would lapse
SUBMIT_RETRIES = 5
T = TypeVar("T")


class Transient(Exception):
    """An infrastructure failure of one attempt (retryable with ``--max-retries``)."""

    def __init__(self, message: str, category: str | None = None) -> None:
        super().__init__(message)
        self.category = category


class ServerGone(Exception):
    """The server process exited under an attempt."""


async def submit(
    server: ServerProcess,
    client: RolloutServerClient,
    body: dict[str, Any],
    abort: Callable[[OsmosisError], None],
) -> Accepted:
    """``POST /rollout``, retried on transient failures; a 401 stops the run."""

    def refused(exc: Refused) -> None:
        if exc.status == 401:
            abort(
                RunAborted(
                    "the rollout server requires an API key (401 on POST /rollout)",
                    hint="create the server without an api_key for local runs",
                    code="ROLLOUT_SERVER_AUTH",
                )
            )
            raise exc
        if exc.status == 409:
            raise Transient(f"rollout id {body['rollout_id']} is already registered") from exc

    failures = 0
    while True:
        outcome = await _tried(server, client.submit(body), refused)
        if isinstance(outcome, Accepted):
            return outcome
        if isinstance(outcome, Refused) and outcome.status == 429:
            await asyncio.sleep(outcome.retry_after if outcome.retry_after is not None else 1.0)
            continue
        failures += 1
        if failures > SUBMIT_RETRIES:
            raise Transient(f"POST /rollout kept failing ({describe(outcome)})")
        await asyncio.sleep(min(2.0, 0.1 * 2**failures))


async def poll(
    server: ServerProcess,
    client: RolloutServerClient,
    rollout_id: str,
    accepted: Accepted,
) -> Result:
    """Long polls until a terminal status; transport errors and 502/503/504 are
    retried while the lease holds."""

    def refused(exc: Refused) -> None:
        if exc.status == 404:
            raise Transient(f"the rollout server no longer knows rollout {rollout_id}") from exc
        if exc.status == 403:
            raise Transient("the rollout server refused the polling lease") from exc

    loop = asyncio.get_running_loop()
    renewed = loop.time()
    failures = 0
    while True:
        asked = client.result(rollout_id, accepted.lease, wait=accepted.wait)
        outcome = await _tried(server, asked, refused)
        if isinstance(outcome, Result):
            renewed = loop.time()
            failures = 0
            if outcome.terminal:
                return outcome
            continue
        # a transport error or 502/503/504: retry while the lease still holds
        failures += 1
        if loop.time() - renewed > accepted.lease_timeout - LEASE_MARGIN:
            raise Transient(
                f"lost contact with the rollout server ({describe(outcome)})",
                "lease_expired",
            )
        await asyncio.sleep(min(2.0, 0.1 * 2**failures))


async def _tried(
    server: ServerProcess, request: Awaitable[T], refused: Callable[[Refused], None]
) -> T | Exception:
    """One request: its answer, or the failure to retry after — a transient refusal
    (409/429/502/503/504) or a lost connection. ``refused`` raises for the statuses the
    caller ends on; any other refusal is raised; a server that exited, ``ServerGone``."""
    import aiohttp

    try:
        return await request
    except Refused as exc:
        refused(exc)
        if not exc.transient:
            raise
        return exc
    except (aiohttp.ClientError, asyncio.TimeoutError, OSError) as exc:
        if server.exited:
            raise ServerGone from exc
        return exc


#: how long a cancelled rollout may take to reach its terminal state
CANCEL_SETTLE = 10.0


async def cancel(
    server: ServerProcess, client: RolloutServerClient, accepted: Accepted, rollout_id: str
) -> Result | None:
    """Cancel one rollout, then poll (briefly) for its terminal state; a rollout that
    finished just in time comes back as its result."""
    from osmosis_local_runner.run.execute.scheduler import deadline
    from osmosis_local_runner.server.protocol import BadAnswer

    await client.cancel(ids=[rollout_id])
    try:
        with deadline(CANCEL_SETTLE):
            return await poll(server, client, rollout_id, accepted)
    except (TimeoutError, Transient, ServerGone, Refused, BadAnswer):
        pass
    return None


def describe(exc: BaseException) -> str:
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
