"""login / logout / whoami through typer's runner, in --json and human modes."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
import respx

from tests.helpers import MemoryKeyring
from tests.osmosis_cli.conftest import ACME, BETA, USER, Invoke

AUTHZ = {
    "device_code": "dev-code",
    "user_code": "WDJB-MJHT",
    "verification_uri": "https://platform.test/device",
    "verification_uri_complete": "https://platform.test/device?code=WDJB-MJHT",
    "expires_in": 600,
    "interval": 5,
}
GRANT = {
    "token": "tok-secret-1",
    "token_id": "tid-1",
    "expires_at": "2030-01-01T00:00:00Z",
    "user": USER,
}


def device_routes(router: respx.MockRouter, workspaces: list[dict[str, object]]) -> None:
    router.post("/api/cli/device/authorize").respond(200, json=AUTHZ)
    router.post("/api/cli/device/token").mock(
        side_effect=[
            httpx.Response(400, json={"error": "authorization_pending"}),
            httpx.Response(200, json=GRANT),
        ]
    )
    router.get("/api/cli/workspaces").respond(200, json={"workspaces": workspaces})
    router.get("/api/cli/verify").respond(
        200, json={"token_id": "tid-1", "expires_at": "2030-01-01T00:00:00Z", "user": USER}
    )


def test_device_login_with_single_workspace_then_whoami(
    invoke: Invoke, router: respx.MockRouter, memory_keyring: MemoryKeyring
) -> None:
    device_routes(router, [ACME])
    result = invoke("login", "--no-browser")
    assert result.exit_code == 0, result.stderr
    assert "WDJB-MJHT" in result.stderr
    assert "https://platform.test/device?code=WDJB-MJHT" in result.stderr
    assert "Active workspace: acme" in result.stderr
    assert "tok-secret-1" not in result.stdout + result.stderr
    assert list(memory_keyring.items.values()) == ["tok-secret-1"]

    who = invoke("whoami", "--json")
    assert who.exit_code == 0
    data = who.data()
    assert {k: data[k] for k in ("user", "workspace", "platform_url", "token_source")} == {
        "user": USER,
        "workspace": {"name": "acme", "id": "w1", "role": "admin"},
        "platform_url": "https://platform.test",
        "token_source": "keyring",
    }
    assert data["expires_at"] == "2030-01-01T00:00:00+00:00"
    # the published CLI's keys too, for scripts written against it
    assert (data["email"], data["name"], data["source"]) == (USER["email"], "Ada", "credentials")
    assert data["account"]["persistent_login"] is True
    assert router.routes[3].calls.last.request.headers["Authorization"] == "Bearer tok-secret-1"

    human = invoke("whoami")
    assert "ada@example.com" in human.stdout
    assert "Workspace: acme as admin" in human.stdout


def test_login_with_unknown_workspace_exits_2_listing_names(
    invoke: Invoke, router: respx.MockRouter
) -> None:
    device_routes(router, [ACME, BETA])
    result = invoke("login", "--workspace", "gamma")
    assert result.exit_code == 2
    assert "acme, beta" in result.stderr
    assert result.stderr.count("\n") == 5  # code, url, waiting, logged-in, then one error line
    assert result.stderr.strip().splitlines()[-1].startswith("error: ")


def test_login_with_several_workspaces_and_no_tty_picks_none(
    invoke: Invoke, router: respx.MockRouter
) -> None:
    device_routes(router, [ACME, BETA])
    result = invoke("login")
    assert result.exit_code == 0
    assert "No workspace selected" in result.stderr
    current = invoke("workspace", "current")
    assert current.exit_code == 2
    assert "osmosis workspace switch" in current.stderr
    # the stored user-scoped token serves a switch without a new login
    switched = invoke("workspace", "switch", "beta")
    assert switched.exit_code == 0, switched.stderr
    assert invoke("workspace", "current", "--json").data()["name"] == "beta"


def test_login_with_workspace_flag(invoke: Invoke, router: respx.MockRouter) -> None:
    device_routes(router, [ACME, BETA])
    result = invoke("login", "--workspace", "beta")
    assert result.exit_code == 0
    sent = router.routes[0].calls.last.request.read()
    assert json.loads(sent)["workspace"] == "beta"
    assert invoke("workspace", "current", "--json").data() == {
        "name": "beta",
        "id": "w2",
        "role": "member",
        "platform_url": "https://platform.test",
    }


def test_login_denied_exits_3(invoke: Invoke, router: respx.MockRouter) -> None:
    router.post("/api/cli/device/authorize").respond(200, json=AUTHZ)
    router.post("/api/cli/device/token").respond(400, json={"error": "access_denied"})
    result = invoke("login")
    assert result.exit_code == 3
    assert "denied" in result.stderr


def test_login_with_token_reads_stdin_and_never_echoes(
    invoke: Invoke, router: respx.MockRouter, isolated_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OSMOSIS_TOKEN_STORE", "file")
    router.get("/api/cli/verify").respond(
        200, json={"token_id": "tid-9", "expires_at": "2030-01-01T00:00:00Z", "user": USER}
    )
    router.get("/api/cli/workspaces").respond(200, json={"workspaces": [ACME]})
    result = invoke("login", "-f", "--with-token", input="tok-from-stdin\n")  # 0.2's -f
    assert result.exit_code == 0, result.stderr
    assert "tok-from-stdin" not in result.stdout + result.stderr
    assert router.routes[0].calls.last.request.headers["Authorization"] == "Bearer tok-from-stdin"
    assert "tok-from-stdin" in (isolated_env / "secrets" / "tokens.json").read_text()
    assert "tok-from-stdin" not in (isolated_env / "credentials.json").read_text()


def test_login_with_empty_stdin_is_invalid(invoke: Invoke) -> None:
    result = invoke("login", "--with-token", input="")
    assert result.exit_code == 2
    assert "no token on stdin" in result.stderr


def test_login_with_bad_token_exits_3(invoke: Invoke, router: respx.MockRouter) -> None:
    router.get("/api/cli/verify").respond(401, json={"code": "TOKEN_INVALID", "message": "bad"})
    result = invoke("login", "--with-token", input="nope\n")
    assert result.exit_code == 3


def test_whoami_not_logged_in_exits_3_json_error(invoke: Invoke) -> None:
    result = invoke("whoami", "--json")
    assert result.exit_code == 3
    assert result.stdout == ""
    error = result.error()
    assert error["code"] == "AUTH_REQUIRED"  # the published vocabulary
    assert error["reason"] == "TOKEN_MISSING"  # ours, finer
    assert "osmosis login" in error["hint"]


def test_whoami_with_env_token(
    invoke: Invoke, router: respx.MockRouter, monkeypatch: pytest.MonkeyPatch, isolated_env: Path
) -> None:
    monkeypatch.setenv("OSMOSIS_TOKEN", "ci-token")
    monkeypatch.setenv("OSMOSIS_WORKSPACE", "acme")
    router.get("/api/cli/verify").respond(
        200, json={"expires_at": "2030-01-01T00:00:00Z", "user": USER}
    )
    doc = invoke("whoami", "--json").data()
    assert doc["token_source"] == "env"
    assert (doc["source"], doc["persistent_login"]) == ("environment", False)
    assert doc["workspace"]["name"] == "acme"
    assert not isolated_env.exists()  # nothing written


def test_logout_revokes_unused_token(
    invoke: Invoke, router: respx.MockRouter, memory_keyring: MemoryKeyring
) -> None:
    device_routes(router, [ACME])
    invoke("login")
    revoke = router.delete("/api/cli/tokens/tid-1").respond(204)
    result = invoke("logout")
    assert result.exit_code == 0
    assert revoke.called
    assert revoke.calls.last.request.headers["Authorization"] == "Bearer tok-secret-1"
    assert memory_keyring.items == {}
    assert invoke("whoami").exit_code == 3


def test_logout_tolerates_already_revoked_and_offline(
    invoke: Invoke, router: respx.MockRouter
) -> None:
    device_routes(router, [ACME])
    invoke("login")
    router.delete("/api/cli/tokens/tid-1").respond(404)
    assert invoke("logout").exit_code == 0


def test_logout_all_needs_yes_without_tty(invoke: Invoke, router: respx.MockRouter) -> None:
    device_routes(router, [ACME])
    invoke("login")
    refused = invoke("logout", "--all")
    assert refused.exit_code == 2
    assert "--yes" in refused.stderr
    router.delete("/api/cli/tokens/tid-1").respond(204)
    assert invoke("logout", "--all", "--yes").exit_code == 0
    assert invoke("whoami").exit_code == 3


def test_logout_when_not_logged_in_is_a_no_op(invoke: Invoke) -> None:
    result = invoke("logout")
    assert result.exit_code == 0  # as published: cleanup scripts may log out twice
    assert "Not logged in" in result.stderr
    machine = invoke("--json", "auth", "logout", "-y")
    assert machine.exit_code == 0
    assert machine.json()["status"] == "noop"


def test_whoami_without_workspace_asks_by_git_origin(
    invoke: Invoke, router: respx.MockRouter, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from tests.gitrepo import make_project

    monkeypatch.chdir(make_project(tmp_path))
    monkeypatch.setenv("OSMOSIS_TOKEN", "ci-token")
    route = router.get("/api/cli/verify").respond(
        200, json={"expires_at": "2030-01-01T00:00:00Z", "user": USER, "workspace": ACME}
    )
    doc = invoke("whoami", "--json").data()
    assert route.calls.last.request.headers["X-Osmosis-Git"] == "org/demo"
    assert doc["workspace"] == {"name": "acme", "id": "w1", "role": "admin"}
