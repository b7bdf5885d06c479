"""The RFC 8628 device login: start, then poll until approved. HTTP only — no printing.

    auth = start(client, device_name="laptop")
    ...show auth.user_code and auth.url...
    grant = poll(client, auth)

``sleep``, ``monotonic`` and ``now`` are injectable so tests never sleep.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Callable
from datetime import datetime, timezone

from osmosis_client._retry import RetryPolicy
from osmosis_client.errors import (
    APIConnectionError,
    APIStatusError,
    BadRequestError,
    DeviceFlowError,
    ProtocolError,
)
from osmosis_client.platform._client import Client
from osmosis_client.platform.models import DeviceAuthorization, TokenGrant

SLOW_DOWN_STEP = 5.0
MIN_INTERVAL = 1.0


def default_device_name() -> str:
    try:
        return socket.gethostname() or "osmosis-client"
    except OSError:
        return "osmosis-client"


def start(
    client: Client, device_name: str | None = None, workspace: str | None = None
) -> DeviceAuthorization:
    """``POST /api/cli/device/authorize``."""
    return client.auth.device_authorize(device_name or default_device_name(), workspace)


def _utcnow() -> datetime:
    return datetime.now(timezone.utc)


def poll(
    client: Client,
    authorization: DeviceAuthorization,
    *,
    sleep: Callable[[float], None] = time.sleep,
    monotonic: Callable[[], float] = time.monotonic,
    now: Callable[[], datetime] = _utcnow,
    backoff: RetryPolicy | None = None,
    on_poll: Callable[[int], None] | None = None,
) -> TokenGrant:
    """Poll ``device/token`` until the user approves, denies, or the code expires.

    Sleeps one interval before each poll; ``slow_down`` adds 5 s to the interval;
    429, 5xx and connection errors back off and keep polling.
    """
    backoff = backoff or RetryPolicy(max_retries=1_000_000, max_delay=30.0)
    interval = max(authorization.interval, MIN_INTERVAL)
    deadline = monotonic() + authorization.expires_in
    device_code = authorization.device_code.get_secret_value()
    wait = interval
    failures = 0
    polls = 0
    while True:
        if monotonic() + wait > deadline:
            raise _expired()
        sleep(wait)
        polls += 1
        if on_poll is not None:
            on_poll(polls)
        try:
            grant = client.auth.poll_token(device_code)
        except BadRequestError as exc:
            reason = exc.body.get("error") or exc.code
            if reason == "authorization_pending":
                wait, failures = interval, 0
            elif reason == "slow_down":
                interval += SLOW_DOWN_STEP
                wait, failures = interval, 0
            elif reason == "expired_token":
                raise _expired() from exc
            elif reason == "access_denied":
                raise DeviceFlowError(
                    "the login was denied in the browser",
                    hint="log in again and approve the request",
                    code="ACCESS_DENIED",
                ) from exc
            else:
                raise
        except (APIStatusError, APIConnectionError) as exc:
            status = getattr(exc, "status_code", None)
            if status is not None and not backoff.is_retryable_status(status):
                raise
            retry_after = exc.retry_after if isinstance(exc, APIStatusError) else None
            delay = backoff.next_delay(failures, retry_after=retry_after)
            failures += 1
            wait = max(interval, delay or interval)
        else:
            _check_expiry(grant, now())
            return grant


def _check_expiry(grant: TokenGrant, now: datetime) -> None:
    if grant.expires_at is not None and grant.expires_at <= now:
        raise ProtocolError(
            "the platform issued a token that has already expired",
            hint="check your clock, then log in again",
            code="TOKEN_ALREADY_EXPIRED",
        )


def _expired() -> DeviceFlowError:
    return DeviceFlowError(
        "the login code expired before it was approved",
        hint="log in again and approve it sooner",
        code="EXPIRED_TOKEN",
    )
