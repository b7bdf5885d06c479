"""The device code on a local desktop's clipboard: never over SSH, bounded, never
failing the login, and "copied" said only when a tool took it."""

from __future__ import annotations

import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import respx

from osmosis_cli.terminal import clipboard
from osmosis_cli.terminal.output import Output
from tests.osmosis_cli.conftest import ACME, Invoke
from tests.osmosis_cli.test_auth import device_routes


@pytest.fixture
def xclip(tmp_path: Path) -> tuple[Path, Path]:
    """A fake `xclip` that keeps what it was given."""
    kept = tmp_path / "clipboard.txt"
    tool = tmp_path / "xclip"
    tool.write_text(
        f"#!{sys.executable}\nimport sys\nopen({str(kept)!r}, 'w').write(sys.stdin.read())\n"
    )
    tool.chmod(tool.stat().st_mode | stat.S_IEXEC)
    return tool, kept


def test_a_local_desktop_gets_the_code(xclip: tuple[Path, Path]) -> None:
    tool, kept = xclip
    found = {"xclip": str(tool)}
    assert clipboard.copy("WDJB-MJHT", {"DISPLAY": ":0"}, found.get) is True
    assert kept.read_text() == "WDJB-MJHT"


def test_never_over_ssh_nor_without_a_clipboard(xclip: tuple[Path, Path]) -> None:
    tool, kept = xclip
    found = {"xclip": str(tool)}
    assert clipboard.copy("X", {"DISPLAY": ":0", "SSH_CONNECTION": "1 2 3 4"}, found.get) is False
    assert clipboard.copy("X", {}, found.get) is False  # no display: no clipboard to use
    assert not kept.exists()


def test_a_hung_or_failing_tool_is_not_copied_and_the_next_one_is_tried() -> None:
    tried: list[str] = []

    def run(command: list[str], **kwargs: Any) -> None:
        tried.append(command[0])
        assert kwargs["timeout"] == clipboard.TIMEOUT
        if command[0] == "/bin/wl-copy":
            raise subprocess.TimeoutExpired(command, kwargs["timeout"])
        raise subprocess.CalledProcessError(1, command)

    env = {"WAYLAND_DISPLAY": "w", "DISPLAY": ":0"}
    assert clipboard.copy("X", env, lambda name: f"/bin/{name}", run) is False
    assert tried == ["/bin/wl-copy", "/bin/xclip", "/bin/xsel"]


def test_login_says_copied_only_when_it_was(
    invoke: Invoke, router: respx.MockRouter, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(Output, "interactive", property(lambda self: not self.json_mode))
    given: list[str] = []
    monkeypatch.setattr(clipboard, "copy", lambda text: given.append(text) or True)
    device_routes(router, [ACME])
    result = invoke("login", "--no-browser")
    assert result.exit_code == 0, result.stderr
    assert given == ["WDJB-MJHT"]
    assert "Your one-time code (copied to the clipboard): WDJB-MJHT" in result.stderr
    monkeypatch.setattr(clipboard, "copy", lambda text: False)
    device_routes(router, [ACME])
    again = invoke("login", "--no-browser")
    assert again.exit_code == 0 and "First copy your one-time code: WDJB-MJHT" in again.stderr
