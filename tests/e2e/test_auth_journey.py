"""The installed `osmosis` over real sockets: login → whoami → workspaces → logout."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from tests import envelopes
from tests.e2e.conftest import Run
from tests.e2e.platform_double import PlatformDouble

pytestmark = pytest.mark.slow


def test_version_and_help_smoke(run_osmosis: Run) -> None:
    version = run_osmosis("--version")
    assert version.returncode == 0
    assert version.stdout.startswith("osmosis-client ")
    helped = run_osmosis("--help")
    assert helped.returncode == 0
    assert "login" in helped.stdout
    bad = run_osmosis("frobnicate")
    assert bad.returncode == 2
    assert bad.stderr.startswith("error: ")
    assert "Traceback" not in bad.stderr


def test_login_whoami_switch_logout(
    run_osmosis: Run, platform: PlatformDouble, tmp_path: Path
) -> None:
    login = run_osmosis("login", "--workspace", "acme")
    assert login.returncode == 0, login.stderr
    assert "ABCD-1234" in login.stderr
    assert platform.state.polls == 3
    secret = platform.state.token
    cfg = tmp_path / "cfg"
    assert stat.S_IMODE(cfg.stat().st_mode) == 0o700
    assert stat.S_IMODE((cfg / "secrets" / "tokens.json").stat().st_mode) == 0o600
    assert "warning: the OS keyring is unavailable" not in login.stderr  # file store was asked for

    who = run_osmosis("whoami", "--json")
    assert who.returncode == 0, who.stderr
    doc = envelopes.data(who.stdout)
    assert doc["workspace"]["name"] == "acme"
    assert doc["token_source"] == "file"

    assert run_osmosis("workspace", "switch", "beta").returncode == 0
    listed = envelopes.items(run_osmosis("workspace", "list", "--remote", "--json").stdout)
    assert [(w["name"], w["active"]) for w in listed] == [
        ("acme", False),
        ("beta", True),
    ]

    out = run_osmosis("logout", "--all", "--yes")
    assert out.returncode == 0, out.stderr
    assert secret in platform.state.revoked
    assert run_osmosis("whoami").returncode == 3

    every_output = login.stdout + login.stderr + who.stdout + who.stderr + out.stderr
    assert secret not in every_output
    for received in platform.state.received:
        assert received.headers.get("User-Agent", "").startswith("osmosis-client/")


def test_env_token_only(run_osmosis: Run, platform: PlatformDouble, tmp_path: Path) -> None:
    who = run_osmosis("whoami", "--json", extra_env={"OSMOSIS_TOKEN": platform.state.token})
    assert who.returncode == 0, who.stderr
    assert envelopes.data(who.stdout)["token_source"] == "env"
    assert not (tmp_path / "cfg").exists()


def test_unreachable_platform_is_one_line(run_osmosis: Run) -> None:
    result = run_osmosis(
        "whoami",
        extra_env={
            "OSMOSIS_TOKEN": "x",
            "OSMOSIS_PLATFORM_URL": "http://127.0.0.1:9",
            "OSMOSIS_TOKEN_PLATFORM_URL": "http://127.0.0.1:9",
        },
    )
    assert result.returncode == 1
    assert result.stderr.count("\n") == 1
    assert result.stderr.startswith("error: cannot reach the platform")
