"""Device-flow polling with a fake clock: no test ever sleeps."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import httpx
import pytest
import respx

from osmosis_client import Client
from osmosis_client.errors import DeviceFlowError, ProtocolError
from osmosis_client.platform.login import device_flow
from osmosis_client.platform.models import DeviceAuthorization
from tests.conftest import PLATFORM
from tests.helpers import FakeClock

NOW = datetime(2026, 11, 22, 12, 0, tzinfo=timezone.utc)
GRANT = {
    "token": "tok-granted",
    "token_id": "tid-1",
    "expires_at": "2027-02-20T12:00:00Z",
    "user": {"id": "u1", "email": "ada@example.com", "name": "Ada"},
}


def pending(error: str = "authorization_pending") -> httpx.Response:
    return httpx.Response(400, json={"error": error})


@pytest.fixture
def authorization() -> DeviceAuthorization:
    return DeviceAuthorization.model_validate(
        {
            "device_code": "dev-code",
            "user_code": "ABCD-EFGH",
            "verification_uri": f"{PLATFORM}/device",
            "expires_in": 60,
            "interval": 5,
        }
    )


def poll(clock: FakeClock, authorization: DeviceAuthorization):  # type: ignore[no-untyped-def]
    with Client(base_url=PLATFORM) as client:
        return device_flow.poll(
            client, authorization, sleep=clock.sleep, monotonic=clock.monotonic, now=lambda: NOW
        )


def test_start_sends_device_name_and_workspace(router: respx.MockRouter) -> None:
    route = router.post("/api/cli/device/authorize").respond(
        200,
        json={
            "device_code": "d",
            "user_code": "U",
            "verification_uri": "https://x/device",
            "verification_uri_complete": "https://x/device?code=U",
            "expires_in": 900,
            "interval": 5,
        },
    )
    with Client(base_url=PLATFORM) as client:
        auth = device_flow.start(client, device_name="laptop", workspace="acme")
    assert auth.url == "https://x/device?code=U"
    sent = route.calls.last.request
    assert json.loads(sent.read()) == {"deviceName": "laptop", "workspace": "acme"}
    assert "Authorization" not in sent.headers
    assert "dev" not in repr(auth.device_code) or "**" in repr(auth.device_code)


def test_pending_then_success_sleeps_one_interval_before_each_poll(
    router: respx.MockRouter, clock: FakeClock, authorization: DeviceAuthorization
) -> None:
    route = router.post("/api/cli/device/token").mock(
        side_effect=[pending(), pending(), httpx.Response(200, json=GRANT)]
    )
    grant = poll(clock, authorization)
    assert grant.token.get_secret_value() == "tok-granted"
    assert grant.user.email == "ada@example.com"
    assert clock.sleeps == [5, 5, 5]
    assert route.call_count == 3
    assert json.loads(route.calls.last.request.read()) == {"device_code": "dev-code"}


def test_slow_down_adds_five_seconds_to_interval(
    router: respx.MockRouter, clock: FakeClock, authorization: DeviceAuthorization
) -> None:
    router.post("/api/cli/device/token").mock(
        side_effect=[
            pending("slow_down"),
            pending(),
            pending("slow_down"),
            httpx.Response(200, json=GRANT),
        ]
    )
    poll(clock, authorization)
    assert clock.sleeps == [5, 10, 10, 15]


@pytest.mark.parametrize(
    ("error", "code"), [("expired_token", "EXPIRED_TOKEN"), ("access_denied", "ACCESS_DENIED")]
)
def test_terminal_errors_stop_polling(
    router: respx.MockRouter,
    clock: FakeClock,
    authorization: DeviceAuthorization,
    error: str,
    code: str,
) -> None:
    route = router.post("/api/cli/device/token").mock(side_effect=[pending(), pending(error)])
    with pytest.raises(DeviceFlowError) as info:
        poll(clock, authorization)
    assert info.value.code == code
    assert route.call_count == 2


def test_server_errors_mid_poll_back_off_and_continue(
    router: respx.MockRouter, clock: FakeClock, authorization: DeviceAuthorization
) -> None:
    route = router.post("/api/cli/device/token").mock(
        side_effect=[
            httpx.Response(503),
            httpx.ConnectError("reset"),
            httpx.Response(429, headers={"Retry-After": "12"}),
            httpx.Response(200, json=GRANT),
        ]
    )
    poll(clock, authorization)
    assert route.call_count == 4
    assert clock.sleeps[0] == 5
    assert all(s >= 5 for s in clock.sleeps)
    assert clock.sleeps[3] == 12  # Retry-After honoured


def test_expires_in_exhausted_stops_without_overrunning(
    router: respx.MockRouter, clock: FakeClock, authorization: DeviceAuthorization
) -> None:
    route = router.post("/api/cli/device/token").mock(return_value=pending())
    with pytest.raises(DeviceFlowError) as info:
        poll(clock, authorization)
    assert info.value.code == "EXPIRED_TOKEN"
    assert sum(clock.sleeps) <= 60
    assert route.call_count == 12


def test_missing_expiry_means_ninety_days_and_past_expiry_is_rejected(
    router: respx.MockRouter, clock: FakeClock, authorization: DeviceAuthorization
) -> None:
    body = {k: v for k, v in GRANT.items() if k != "expires_at"}
    router.post("/api/cli/device/token").respond(200, json=body)
    grant = poll(clock, authorization)
    assert grant.expiry(NOW) == NOW + timedelta(days=90)
    assert grant.token_type == "Bearer"

    router.post("/api/cli/device/token").respond(
        200, json={**GRANT, "expires_at": "2020-01-01T00:00:00Z"}
    )
    with pytest.raises(ProtocolError):
        poll(FakeClock(), authorization)


def test_naive_expiry_is_a_protocol_error(
    router: respx.MockRouter, clock: FakeClock, authorization: DeviceAuthorization
) -> None:
    router.post("/api/cli/device/token").respond(
        200, json={**GRANT, "expires_at": "2027-01-01T00:00:00"}
    )
    with pytest.raises(ProtocolError):
        poll(clock, authorization)
