"""workspace list / current / switch."""

from __future__ import annotations

import pytest
import respx

from tests.osmosis_cli.conftest import ACME, BETA, Invoke
from tests.osmosis_cli.test_auth import device_routes


@pytest.fixture
def logged_in(invoke: Invoke, router: respx.MockRouter) -> respx.MockRouter:
    device_routes(router, [ACME])
    assert invoke("login").exit_code == 0
    router.get("/api/cli/workspaces").respond(200, json={"workspaces": [ACME, BETA]})
    return router


def test_list_local_json_and_human(invoke: Invoke, logged_in: respx.MockRouter) -> None:
    doc = invoke("workspace", "list", "--json").json()
    assert doc == {
        "schema_version": 1,
        "items": [{"name": "acme", "id": "w1", "role": "admin", "active": True, "logged_in": True}],
        "total_count": 1,
        "has_more": False,
        "next_offset": None,
    }
    human = invoke("workspace", "list")
    lines = human.stdout.splitlines()
    assert lines[0].split("\t")[1:] == ["NAME", "ROLE", "LOGGED IN", "ID"]
    assert lines[1].split("\t") == ["*", "acme", "admin", "yes", "w1"]
    plain = invoke("--plain", "workspace", "list")  # no header: rows only
    assert plain.stdout.splitlines() == ["*\tacme\tadmin\tyes\tw1"]


def test_list_remote_marks_logged_in(invoke: Invoke, logged_in: respx.MockRouter) -> None:
    items = invoke("workspace", "list", "--remote", "--json").items()
    assert items == [
        {"name": "acme", "id": "w1", "role": "admin", "active": True, "logged_in": True},
        {"name": "beta", "id": "w2", "role": "member", "active": False, "logged_in": False},
    ]


def test_switch_changes_scope_header(invoke: Invoke, logged_in: respx.MockRouter) -> None:
    assert invoke("workspace", "switch", "beta").exit_code == 0
    assert invoke("workspace", "current", "--json").data()["name"] == "beta"
    assert invoke("workspace", "switch", "acme").exit_code == 0
    current = invoke("workspace", "current")
    assert current.stdout.strip() == "acme (admin) on https://platform.test"


def test_switch_to_foreign_workspace_exits_2(invoke: Invoke, logged_in: respx.MockRouter) -> None:
    result = invoke("workspace", "switch", "gamma")
    assert result.exit_code == 2
    assert "acme, beta" in result.stderr


def test_list_when_empty(invoke: Invoke) -> None:
    assert invoke("workspace", "list", "--json").items() == []
    assert "osmosis login" in invoke("workspace", "list").stderr
