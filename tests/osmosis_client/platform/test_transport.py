"""The transport through both client faces: headers, retries, error mapping, parsing."""

from __future__ import annotations

import json
from collections.abc import Callable

import httpx
import pytest
import respx

from osmosis_client import AsyncClient, Client, __version__
from osmosis_client.errors import (
    APIConnectionError,
    APITimeoutError,
    AuthenticationError,
    BadRequestError,
    ConflictError,
    NotFoundError,
    PermissionDeniedError,
    ProtocolError,
    RateLimitError,
    ServerError,
    UpgradeRequiredError,
    WorkspaceRequiredError,
)
from tests.conftest import PLATFORM
from tests.osmosis_client.platform.conftest import Api

WORKSPACES = {"workspaces": [{"id": "w1", "name": "acme", "role": "admin", "connected_repo": None}]}
MakeApi = Callable[..., Api]


def test_every_call_sends_identity_and_auth_headers(
    make_api: MakeApi, router: respx.MockRouter
) -> None:
    route = router.get("/api/cli/workspaces").respond(200, json=WORKSPACES)
    api = make_api(token="tok-secret", workspace="acme")
    result = api.call(lambda c: c.workspaces.list())
    assert [w.name for w in result] == ["acme"]
    request = route.calls.last.request
    assert request.headers["User-Agent"].startswith(f"osmosis-client/{__version__}")
    assert request.headers["X-Osmosis-CLI-Version"] == __version__
    assert request.headers["Accept"] == "application/json"
    assert request.headers["Authorization"] == "Bearer tok-secret"
    # workspaces carry no scope header
    assert "X-Osmosis-Workspace" not in request.headers
    assert "X-Osmosis-Git" not in request.headers


def test_eval_run_calls_carry_exactly_one_scope_header(
    make_api: MakeApi, router: respx.MockRouter
) -> None:
    page = {"eval_runs": [], "total_count": 0, "has_more": False, "next_offset": None}
    route = router.get("/api/cli/eval-runs").respond(200, json=page)
    api = make_api(token="t", workspace="acme", git_repo="owner/repo")
    api.call(lambda c: c.eval_runs.list())
    headers = route.calls.last.request.headers
    assert headers["X-Osmosis-Workspace"] == "acme"
    assert "X-Osmosis-Git" not in headers

    api = make_api(token="t", git_repo="owner/repo")
    api.call(lambda c: c.eval_runs.list())
    headers = route.calls.last.request.headers
    assert headers["X-Osmosis-Git"] == "owner/repo"
    assert "X-Osmosis-Workspace" not in headers


def test_scoped_call_without_workspace_or_git_fails_before_any_request(
    make_api: MakeApi, router: respx.MockRouter
) -> None:
    route = router.get("/api/cli/eval-runs")
    with pytest.raises(WorkspaceRequiredError):
        make_api(token="t").call(lambda c: c.eval_runs.list())
    assert not route.called


@pytest.mark.parametrize("status", [408, 429, 500, 502, 503, 504])
def test_retryable_statuses_are_retried_four_times(
    make_api: MakeApi, router: respx.MockRouter, status: int
) -> None:
    route = router.get("/api/cli/workspaces").respond(status, json={"message": "busy"})
    api = make_api(token="t")
    with pytest.raises((ServerError, RateLimitError, Exception)):
        api.call(lambda c: c.workspaces.list())
    assert route.call_count == 5
    assert len(api.clock.sleeps) == 4
    for i, delay in enumerate(api.clock.sleeps):
        assert 0.0 <= delay <= min(30.0, 0.5 * 2**i)


def test_success_after_transient_failures(make_api: MakeApi, router: respx.MockRouter) -> None:
    route = router.get("/api/cli/workspaces").mock(
        side_effect=[
            httpx.Response(503),
            httpx.ConnectError("boom"),
            httpx.Response(200, json=WORKSPACES),
        ]
    )
    api = make_api(token="t")
    assert api.call(lambda c: c.workspaces.list())[0].id == "w1"
    assert route.call_count == 3


@pytest.mark.parametrize(
    ("status", "error"),
    [
        (400, BadRequestError),
        (401, AuthenticationError),
        (403, PermissionDeniedError),
        (404, NotFoundError),
        (409, ConflictError),
        (422, BadRequestError),
    ],
)
def test_client_errors_are_not_retried_and_typed(
    make_api: MakeApi, router: respx.MockRouter, status: int, error: type[Exception]
) -> None:
    route = router.get("/api/cli/workspaces").respond(
        status, json={"code": "SOME_CODE", "message": "nope"}
    )
    api = make_api(token="t")
    with pytest.raises(error) as info:
        api.call(lambda c: c.workspaces.list())
    assert route.call_count == 1
    assert api.clock.sleeps == []
    assert info.value.code == "SOME_CODE"  # type: ignore[attr-defined]
    assert "nope" in str(info.value)


def test_retry_after_seconds_is_honoured(make_api: MakeApi, router: respx.MockRouter) -> None:
    router.get("/api/cli/workspaces").mock(
        side_effect=[
            httpx.Response(429, headers={"Retry-After": "7"}),
            httpx.Response(200, json=WORKSPACES),
        ]
    )
    api = make_api(token="t")
    api.call(lambda c: c.workspaces.list())
    assert api.clock.sleeps == [7.0]


def test_retry_after_http_date_is_honoured(make_api: MakeApi, router: respx.MockRouter) -> None:
    # the policy's wall clock is pinned at 1_700_000_000 (see conftest)
    router.get("/api/cli/workspaces").mock(
        side_effect=[
            httpx.Response(503, headers={"Retry-After": "Tue, 14 Nov 2023 22:13:23 GMT"}),
            httpx.Response(200, json=WORKSPACES),
        ]
    )
    api = make_api(token="t")
    api.call(lambda c: c.workspaces.list())
    assert api.clock.sleeps == [pytest.approx(3.0)]


def test_upgrade_required_says_upgrade(make_api: MakeApi, router: respx.MockRouter) -> None:
    router.get("/api/cli/workspaces").respond(
        426, json={"status": "unsupported", "message": "osmosis-client >= 0.2 required"}
    )
    with pytest.raises(UpgradeRequiredError) as info:
        make_api(token="t").call(lambda c: c.workspaces.list())
    assert "too old" in info.value.message
    assert ">= 0.2" in info.value.message
    assert "pip install -U osmosis-client" in (info.value.hint or "")


def test_error_alias_and_non_json_bodies(make_api: MakeApi, router: respx.MockRouter) -> None:
    router.get("/api/cli/workspaces").respond(
        403, json={"error": "WORKSPACE_SCOPE_HEADER_ACCESS_DENIED"}
    )
    with pytest.raises(PermissionDeniedError) as info:
        make_api(token="t").call(lambda c: c.workspaces.list())
    assert info.value.code == "WORKSPACE_SCOPE_HEADER_ACCESS_DENIED"
    assert "not a member" in info.value.message

    router.get("/api/cli/verify").respond(404, text="<html>" + "x" * 500 + "</html>")
    with pytest.raises(NotFoundError) as info2:
        make_api(token="t").call(lambda c: c.auth.verify())
    assert len(info2.value.message) < 230
    assert info2.value.message.startswith("HTTP 404: <html>")


def test_validation_issues_are_kept(make_api: MakeApi, router: respx.MockRouter) -> None:
    router.get("/api/cli/workspaces").respond(
        400,
        json={
            "code": "VALIDATION",
            "message": "invalid config",
            "issues": [
                {"key": "evaluation.n", "message": "must be >= 1", "key_correction": "n"},
                "plain issue",
            ],
        },
    )
    with pytest.raises(BadRequestError) as info:
        make_api(token="t").call(lambda c: c.workspaces.list())
    assert info.value.issues == [
        "evaluation.n: must be >= 1 (did you mean 'n'?)",
        "plain issue",
    ]


@pytest.mark.parametrize("body", ["not json", "[1, 2", ""])
def test_malformed_success_body_is_a_protocol_error(
    make_api: MakeApi, router: respx.MockRouter, body: str
) -> None:
    router.get("/api/cli/workspaces").respond(200, text=body)
    with pytest.raises(ProtocolError):
        make_api(token="t").call(lambda c: c.workspaces.list())


def test_missing_required_fields_are_a_protocol_error(
    make_api: MakeApi, router: respx.MockRouter
) -> None:
    router.get("/api/cli/workspaces").respond(200, json={"workspaces": [{"name": "no-id"}]})
    with pytest.raises(ProtocolError) as info:
        make_api(token="t").call(lambda c: c.workspaces.list())
    assert "workspaces.0.id" in info.value.message


def test_unknown_fields_are_ignored(make_api: MakeApi, router: respx.MockRouter) -> None:
    body = {"workspaces": [{"id": 7, "name": "a", "future": True}], "extra": 1}
    router.get("/api/cli/workspaces").respond(200, json=body)
    (ws,) = make_api(token="t").call(lambda c: c.workspaces.list())
    assert ws.id == "7"


def test_connection_errors_after_retries(make_api: MakeApi, router: respx.MockRouter) -> None:
    route = router.get("/api/cli/workspaces").mock(side_effect=httpx.ConnectError("refused"))
    with pytest.raises(APIConnectionError) as info:
        make_api(token="t").call(lambda c: c.workspaces.list())
    assert route.call_count == 5
    assert "platform.test" in info.value.message


def test_timeouts_map_to_timeout_error(make_api: MakeApi, router: respx.MockRouter) -> None:
    router.get("/api/cli/workspaces").mock(side_effect=httpx.ReadTimeout("slow"))
    with pytest.raises(APITimeoutError):
        make_api(token="t").call(lambda c: c.workspaces.list())


def test_version_status_warns_once(
    make_api: MakeApi, router: respx.MockRouter, caplog: pytest.LogCaptureFixture
) -> None:
    router.get("/api/cli/workspaces").respond(
        200,
        json=WORKSPACES,
        headers={
            "X-Osmosis-Version-Status": "deprecated",
            "X-Osmosis-Version-Message": "0.1 is deprecated; upgrade",
        },
    )
    api = make_api(token="t")
    with caplog.at_level("WARNING", logger="osmosis_client"):
        api.call(lambda c: c.workspaces.list())
        api.call(lambda c: c.workspaces.list())
    assert [r.getMessage() for r in caplog.records] == ["0.1 is deprecated; upgrade"]


def test_token_never_in_repr_or_errors(make_api: MakeApi, router: respx.MockRouter) -> None:
    router.get("/api/cli/workspaces").respond(401, json={"code": "TOKEN_EXPIRED"})
    api = make_api(token="tok-very-secret")
    assert "tok-very-secret" not in repr(api.client)
    with pytest.raises(AuthenticationError) as info:
        api.call(lambda c: c.workspaces.list())
    assert "tok-very-secret" not in json.dumps(info.value.to_dict())
    assert info.value.message == "your login has expired"
    assert "log in" in (info.value.hint or "")


def test_path_segments_are_percent_encoded(make_api: MakeApi, router: respx.MockRouter) -> None:
    route = router.get(url__regex=r".*/api/cli/eval-runs/.*").respond(404, json={})
    api = make_api(token="t", workspace="acme")
    for name, encoded in [("../x", "..%2Fx"), ("a/b", "a%2Fb"), ("%2e", "%252e")]:
        with pytest.raises(NotFoundError):
            api.call(lambda c, n=name: c.eval_runs.get(n))
        assert route.calls.last.request.url.raw_path.decode().endswith(f"/eval-runs/{encoded}")


def test_every_request_carries_the_clients_timeout() -> None:
    # httpx before 0.28 sends a bare Request with no timeout unless it carries one
    from osmosis_client.platform._transport import RequestOptions

    for kind in (Client, AsyncClient):
        client = kind(base_url=PLATFORM, token="t", timeout=0.3)
        request = client._transport.build_request(RequestOptions("GET", "/api/cli/workspaces"))
        assert request.extensions["timeout"] == httpx.Timeout(0.3).as_dict()
    default = Client(base_url=PLATFORM, token="t")._transport
    assert (
        default.build_request(RequestOptions("GET", "/x")).extensions["timeout"]["connect"] == 5.0
    )
