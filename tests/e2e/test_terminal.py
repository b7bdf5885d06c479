"""A local run on a real terminal (a pseudo-terminal): Ctrl-C says "stopping" once, above
the live bar, and the run ends with the command that resumes it — which works."""

from __future__ import annotations

import os
import select
import shlex
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from tests.e2e.conftest import osmosis_command

pytestmark = [pytest.mark.slow, pytest.mark.skipif(os.name != "posix", reason="needs a pty")]

QUICKSTART = Path(__file__).resolve().parents[2] / "examples" / "quickstart"


def read_until(fd: int, done: bytes, seconds: float) -> bytes:
    """Everything the terminal shows until ``done`` appears or the process ends."""
    seen = b""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and done not in seen:
        ready, _, _ = select.select([fd], [], [], 0.2)
        if not ready:
            continue
        try:
            chunk = os.read(fd, 65536)
        except OSError:  # the other end closed: the process ended
            break
        if not chunk:
            break
        seen += chunk
    return seen


def test_ctrl_c_on_a_terminal_says_stopping_once_and_the_printed_resume_works(
    tmp_path: Path,
) -> None:
    import pty

    project = tmp_path / "qs"
    shutil.copytree(QUICKSTART, project, ignore=shutil.ignore_patterns(".osmosis"))
    args = [
        "eval",
        "run",
        "configs/eval/quickstart.toml",
        "--model",
        "mock/calculator@3000",
        "--limit",
        "4",
        "-o",
        "int.json",
    ]
    pid, fd = pty.fork()
    if pid == 0:  # the child: the CLI on the terminal
        os.chdir(project)
        os.execv(osmosis_command()[0], [*osmosis_command(), *args])
    try:
        shown = read_until(fd, b"0/12", 60)  # the live bar is up: attempts in flight
        assert b"0/12" in shown
        os.write(fd, b"\x03")  # Ctrl-C, as typed
        shown += read_until(fd, b"--resume", 60)
        shown += read_until(fd, b"\n", 5)
    finally:
        _, status = os.waitpid(pid, 0)
        os.close(fd)
    text = shown.decode("utf-8", "replace")
    assert os.waitstatus_to_exitcode(status) == 130
    assert text.count("stopping: cancelling in-flight attempts") == 1
    printed = text.split("Resume with: ", 1)[1].split("\r\n", 1)[0]
    command = shlex.split(printed)
    assert command[0] == "osmosis" and command[-1] == "--resume"
    resumed = subprocess.run(
        [*osmosis_command(), *command[1:], "--model", "mock/calculator"],  # no latency now
        cwd=project,
        capture_output=True,
        text=True,
        timeout=120,
    )
    # the model flag differs from the journal's: the run changed — refused, as it should be
    assert resumed.returncode == 2 and "the run changed" in resumed.stderr
    again = subprocess.run(
        [
            *osmosis_command(),
            "eval",
            "run",
            "configs/eval/quickstart.toml",
            "--resume",
            "-o",
            "int.json",
            "--deadline",
            "600",
        ],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert again.returncode == 0, again.stderr
    assert "--model mock/calculator@3000" in again.stderr  # taken from the journal
