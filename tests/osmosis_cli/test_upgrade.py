"""``osmosis upgrade``: the installer that installed us, only our package, never the
published ``osmosis-ai``; PyPI read over httpx (respx here)."""

from __future__ import annotations

import json
import stat
import sys
from pathlib import Path

import httpx
import pytest
import respx

from osmosis_cli import upgrade as up
from tests import envelopes
from tests.osmosis_cli.conftest import Invoke

PYPI = "https://pypi.org/pypi/osmosis-client/json"
RELEASES = {
    "info": {"version": "0.3.0"},
    "releases": {"0.1.0": [], "0.2.1": [], "0.3.0": [], "0.4.0rc1": [], "junk": []},
}


@pytest.fixture
def installed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(up, "installed", lambda: up.Installed("0.2.1", editable=False))


@pytest.fixture
def installer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fake `uv` on PATH that records its argv (and fails when asked to)."""
    record = tmp_path / "argv.json"
    fake = tmp_path / "bin" / "uv"
    fake.parent.mkdir()
    fake.write_text(
        f"#!{sys.executable}\nimport json, os, sys\n"
        f"json.dump(sys.argv[1:], open({str(record)!r}, 'w'))\n"
        "print('Resolved 1 package'); sys.exit(int(os.environ.get('FAKE_UV_EXIT', '0')))\n"
    )
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setattr(up.shutil, "which", lambda name: str(fake) if name == "uv" else None)
    return record


def test_up_to_date_is_no_update(invoke: Invoke, installed: None) -> None:
    with respx.mock(assert_all_called=True) as pypi:
        pypi.get(PYPI).respond(200, json={**RELEASES, "releases": {"0.2.1": []}})
        result = invoke("--json", "upgrade")
    assert result.exit_code == 0, result.stderr
    document = result.json()
    assert document["status"] == "no_update"
    assert document["resource"]["update_available"] is False


def test_check_says_what_is_newer_and_runs_nothing(
    invoke: Invoke, installed: None, installer: Path
) -> None:
    with respx.mock() as pypi:
        pypi.get(PYPI).respond(200, json=RELEASES)
        result = invoke("upgrade", "--check")
    assert result.exit_code == 0, result.stderr
    assert "osmosis-client 0.3.0 is available (installed: 0.2.1)" in result.stderr  # not the rc
    assert not installer.exists()


def test_upgrade_runs_one_installer_for_our_package_only(
    invoke: Invoke, installed: None, installer: Path
) -> None:
    with respx.mock() as pypi:
        pypi.get(PYPI).respond(200, json=RELEASES)
        result = invoke("--json", "upgrade")
    assert result.exit_code == 0, result.stderr
    argv = json.loads(installer.read_text())
    assert argv == ["pip", "install", "--python", sys.executable, "--upgrade", "osmosis-client"]
    assert not any("osmosis-ai" in a for a in argv)
    resource = result.json()["resource"]
    assert resource["latest_version"] == "0.3.0" and "Resolved 1 package" in resource["stdout"]


def test_a_failing_installer_says_what_to_run_by_hand(
    invoke: Invoke, installed: None, installer: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_UV_EXIT", "3")
    with respx.mock() as pypi:
        pypi.get(PYPI).respond(200, json=RELEASES)
        result = invoke("upgrade")
    assert result.exit_code == 1
    assert "the upgrade of osmosis-client failed (exit 3" in result.stderr
    assert "run it yourself:" in result.stderr and "Traceback" not in result.stderr


def test_pypi_unreachable_is_one_line(invoke: Invoke, installed: None) -> None:
    with respx.mock() as pypi:
        pypi.get(PYPI).mock(side_effect=httpx.ConnectError("no route"))
        result = invoke("--json", "upgrade")
    assert result.exit_code == 1
    assert envelopes.error_of(result.stderr)["code"] == "PLATFORM_ERROR"


def test_an_editable_checkout_is_never_replaced_from_the_index(
    invoke: Invoke, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(up, "installed", lambda: up.Installed("0.1.0", True, "file:///src"))
    with respx.mock() as pypi:  # nothing is asked of the index
        result = invoke("upgrade")
        assert not pypi.calls
    assert result.exit_code == 2 and "git pull" in result.stderr


@pytest.mark.parametrize(
    ("executable", "method", "which", "command"),
    [
        (
            "/home/a/.local/share/uv/tools/osmosis-client/bin/python",
            "uv_tool",
            {"uv": "/u/uv"},
            ["/u/uv", "tool", "upgrade", "osmosis-client"],
        ),
        (
            "/home/a/.local/pipx/venvs/osmosis-client/bin/python",
            "pipx",
            {"pipx": "/p/pipx"},
            ["/p/pipx", "upgrade", "osmosis-client"],
        ),
        (
            "/srv/venv/bin/python",
            "pip",
            {},
            ["/srv/venv/bin/python", "-m", "pip", "install", "--upgrade", "osmosis-client"],
        ),
    ],
)
def test_the_installer_is_found_from_the_interpreters_path(
    executable: str, method: str, which: dict[str, str], command: list[str]
) -> None:
    assert up.method_of(executable) == method
    assert up.command_for(method, executable, which.get) == command
