"""The installed `osmosis eval run` killed mid-run: SIGKILL then --resume, and Ctrl-C."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import osmosis_command

pytestmark = pytest.mark.slow
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "quickstart"
ARGS = [
    "eval",
    "run",
    "configs/eval/quickstart.toml",
    "--model",
    "mock/calculator@25",
    "--batch-size",
    "2",
    "-o",
    "out.json",
    "-q",
]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    path = tmp_path / "qs"
    shutil.copytree(EXAMPLE, path, ignore=shutil.ignore_patterns(".osmosis"))
    return path


def start(project: Path, *extra: str) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OSMOSIS_")} | {
        "OSMOSIS_WARM": "0"
    }
    env["OSMOSIS_CONFIG_DIR"] = str(project / "cfg")
    return subprocess.Popen(
        [*osmosis_command(), *ARGS, *extra],
        cwd=project,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def journal_lines(project: Path) -> list[str]:
    path = project / "out.json.journal.jsonl"
    return path.read_text().splitlines()[1:] if path.exists() else []


def wait_for_lines(project: Path, count: int, timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while len(journal_lines(project)) < count:
        assert time.monotonic() < deadline, "the run made no progress"
        time.sleep(0.02)


def keys(lines: list[str]) -> list[tuple[int, int]]:
    return [(json.loads(x)["row_index"], json.loads(x)["run_index"]) for x in lines]


def test_sigkill_then_resume_runs_every_attempt_exactly_once(project: Path) -> None:
    proc = start(project)
    wait_for_lines(project, 10)
    proc.kill()
    proc.wait(10)
    before = keys(journal_lines(project))
    assert 10 <= len(before) < 60
    assert not (project / "out.json").exists()  # killed before the final write

    resumed = start(project, "--resume")
    _, err = resumed.communicate(timeout=60)
    assert resumed.returncode == 0, err
    after = keys(journal_lines(project))
    assert after[: len(before)] == before  # nothing finished was redone
    assert len(after) == len(set(after)) == 60
    doc = json.loads((project / "out.json").read_text())
    assert doc["summary"]["status"] == "finished"
    assert sorted(
        (r["row_index"], run["run_index"]) for r in doc["rows"] for run in r["runs"]
    ) == sorted(after)


def test_sigint_stops_cleanly_with_exit_130(project: Path) -> None:
    proc = start(project)
    wait_for_lines(project, 6)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    doc = json.loads((project / "out.json").read_text())
    assert doc["summary"]["status"] == "stopped"
    finished = keys(journal_lines(project))
    assert doc["summary"]["total_runs"] == len(finished) < 60
    # the command as typed, with --resume: it works as printed (no flag to remember)
    resume = next(line for line in err.splitlines() if line.startswith("Resume with: "))
    assert resume.endswith(" -o out.json -q --resume") and "configs/eval/quickstart.toml" in resume


class HangingModel:
    """A model endpoint (stdlib) that answers its first ``answered`` requests, then holds
    every later one open without a byte; it notes when a held connection is closed."""

    def __init__(self, answered: int) -> None:
        import socket
        import threading

        self.answered = answered
        self.requests = 0
        self.held = 0
        self.closed = 0
        self._lock = threading.Lock()
        self._server = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self._server.getsockname()[1]}/v1"
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        import threading

        while True:
            try:
                conn, _ = self._server.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: Any) -> None:
        with conn:
            reader = conn.makefile("rb")
            while True:
                head = b""
                while not head.endswith(b"\r\n\r\n"):
                    line = reader.readline()
                    if not line:
                        return
                    head += line
                length = int(
                    next(
                        (
                            h.split(b":")[1]
                            for h in head.split(b"\r\n")
                            if h.lower().startswith(b"content-length")
                        ),
                        b"0",
                    )
                )
                body = json.loads(reader.read(length))
                with self._lock:
                    self.requests += 1
                    answer = self.requests <= self.answered
                    if not answer:
                        self.held += 1
                if not answer:
                    while conn.recv(4096):
                        pass  # until the client closes it
                    with self._lock:
                        self.closed += 1
                    return
                question = body["messages"][-1]["content"]
                reply = json.dumps(
                    {
                        "choices": [{"message": {"role": "assistant", "content": question[-3:]}}],
                        "usage": {"total_tokens": 3},
                    }
                ).encode()
                conn.sendall(
                    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                    b"Content-Length: %d\r\n\r\n" % len(reply) + reply
                )

    def close(self) -> None:
        self._server.close()


def wait_until(condition: Any, what: str, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.02)


def test_the_first_ctrl_c_stops_a_run_whose_model_calls_hang(project: Path) -> None:
    """Issue 33: the first Ctrl-C waited for every hanging call to time out (30 s and
    more). Now the in-flight calls are cancelled, their connections closed, exit 130,
    and --resume asks the model about each remaining attempt once."""
    model = HangingModel(answered=6)  # 6 attempts, then every call hangs
    env = {k: v for k, v in os.environ.items() if not k.startswith("OSMOSIS_")}
    env |= {"OSMOSIS_WARM": "0", "OSMOSIS_CONFIG_DIR": str(project / "cfg")}
    command = [*osmosis_command(), *ARGS[:3], "--model", "m", "--base-url", model.url]
    command += ["--batch-size", "4", "-o", "out.json", "-q"]
    try:
        proc = subprocess.Popen(
            command,
            cwd=project,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        wait_until(lambda: model.held >= 4, "the run never had 4 calls in flight")
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=15)  # bounded: the calls would hang for minutes
        assert proc.returncode == 130, err
        wait_until(lambda: model.closed >= model.held, "a held connection was left open", 10)
        finished = keys(journal_lines(project))
        assert len(finished) == 6 and "Traceback" not in err
        assert json.loads((project / "out.json").read_text())["summary"]["status"] == "stopped"
        before, model.answered = model.requests, 1_000_000
        resumed = subprocess.run(
            [*command, "--resume"],
            cwd=project,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert resumed.returncode in (0, 1), resumed.stderr  # 1: some answers are wrong
        after = keys(journal_lines(project))
        assert len(after) == len(set(after)) == 60
        assert model.requests - before == 60 - 6  # each remaining attempt once
    finally:
        with contextlib.suppress(NameError):
            proc.kill()
        model.close()
