"""On a terminal, text from users, models and the platform is shown as text: never rich
markup (``[/x]`` used to crash a table, ``[link=…]`` to emit hyperlink escapes)."""

from __future__ import annotations

import io
import os
import pty
import select
import subprocess
import sys
from pathlib import Path

import pytest

from osmosis_cli.terminal.output import Output
from tests.results_docs import attempt, write

HOSTILE = ["[/x]", "[link=https://evil.example]click[/link]", "[bold red]shout[/]", ":smile:"]


class FakeTTY(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_table_cells_and_titles_are_never_markup() -> None:
    stdout = FakeTTY()
    out = Output(stdout=stdout, stderr=FakeTTY())
    out.table(["name", "value"], [[cell, "1"] for cell in HOSTILE], title="[/title]")
    text = stdout.getvalue()
    assert "\x1b]8;" not in text  # no OSC 8 hyperlink
    for cell in ["[/x]", "[link=https://evil.example]click[/link]", "[bold red]shout[/]"]:
        assert cell in text.replace("\n", "")
    assert ":smile:" in text and "[/title]" in text


def read_all(fd: int, proc: subprocess.Popen[bytes]) -> bytes:
    chunks = []
    while True:
        ready, _, _ = select.select([fd], [], [], 30.0)
        if not ready:
            break
        try:
            data = os.read(fd, 65536)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    proc.wait(timeout=30)
    return b"".join(chunks)


@pytest.mark.slow
def test_compare_on_a_terminal_shows_hostile_prompts_as_text(tmp_path: Path) -> None:
    extra = {i: [attempt(i, 0, 1.0, prompt=text, answer=text)] for i, text in enumerate(HOSTILE)}
    a = write(tmp_path / "a.json", {}, extra=extra)
    worse = {i: [attempt(i, 0, 0.0, prompt=text, answer=text)] for i, text in enumerate(HOSTILE)}
    b = write(tmp_path / "b.json", {}, extra=worse)
    controller, terminal = pty.openpty()
    env = {**os.environ, "COLUMNS": "200", "TERM": "xterm-256color"}
    env.pop("NO_COLOR", None)
    proc = subprocess.Popen(
        [sys.executable, "-m", "osmosis_cli.main", "eval", "compare", str(a), str(b)],
        stdout=terminal,
        stderr=terminal,
        stdin=subprocess.DEVNULL,
        env=env,
    )
    os.close(terminal)
    try:
        output = read_all(controller, proc).decode(errors="replace")
    finally:
        os.close(controller)
    assert proc.returncode == 0, output
    assert "\x1b]8;" not in output and "internal error" not in output
    assert "[/x]" in output and "click[/link]" in output
