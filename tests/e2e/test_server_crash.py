"""`osmosis eval run` in server mode killed with SIGKILL: the rollout server goes away
on its own (death signal), --resume loses nothing, and a server that survived anyway
(its death signal blocked) is reaped by the next run. Uses the rollout server double,
so it runs on any Python."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.child_output import leftover
from tests.server_workspace import RELAXED_CLI, server_pids, server_workspace

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not Path("/proc").is_dir(), reason="needs Linux /proc"),
]
CLI = RELAXED_CLI


def start(root: Path, *args: str) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OSMOSIS_")} | {
        "OSMOSIS_WARM": "0"
    }
    env["OSMOSIS_CONFIG_DIR"] = str(root / "cfg")
    command = [*CLI, "eval", "run", "configs/eval/fake.toml", "--rollout-python", sys.executable]
    return subprocess.Popen(
        [*command, "-o", "out.json", "-q", *args],
        cwd=root,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def journal_lines(root: Path) -> list[str]:
    path = root / "out.json.journal.jsonl"
    return path.read_text().splitlines()[1:] if path.exists() else []


def kill_when(root: Path, proc: subprocess.Popen[str], lines: int) -> None:
    deadline = time.monotonic() + 30
    while len(journal_lines(root)) < lines:
        assert proc.poll() is None, leftover(proc)
        assert time.monotonic() < deadline
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=60)


def wait_gone(marker: str, timeout: float = 15) -> None:
    deadline = time.monotonic() + timeout
    while server_pids(marker):
        assert time.monotonic() < deadline, "a rollout server outlived its controller"
        time.sleep(0.05)


def test_sigkill_then_resume(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    server_workspace(
        root,
        env={"FAKE_SLOW_ROWS": "3,4,5,6,7", "FAKE_SLOW_SECONDS": "0.4"},
        evaluation={"batch_size": 2},
    )
    proc = start(root)
    kill_when(root, proc, 3)
    before = [json.loads(line) for line in journal_lines(root)]
    wait_gone(str(root / "rollouts"))
    resumed = start(root, "--resume")
    _, err = resumed.communicate(timeout=60)
    assert resumed.returncode == 0, err
    doc = json.loads((root / "out.json").read_text())
    assert [row["row_index"] for row in doc["rows"]] == list(range(8))
    assert doc["summary"]["eval_fns"]["grader"]["mean"] == 1.0
    ids = {row["row_index"]: row["runs"][0]["rollout_id"] for row in doc["rows"]}
    assert all(ids[r["row_index"]] == r["rollout_id"] for r in before)  # kept, not redone
    assert not server_pids(str(root / "rollouts"))


def test_a_server_that_outlives_its_run_is_reaped_by_the_next(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    # SIGTERM ignored: the death signal (SIGTERM) cannot stop this server
    server_workspace(
        root,
        env={"FAKE_IGNORE_TERM": "1", "FAKE_SLOW_ROWS": "2,3,4,5,6,7", "FAKE_SLOW_SECONDS": "5"},
        evaluation={"batch_size": 2},
    )
    proc = start(root)
    kill_when(root, proc, 2)
    time.sleep(0.5)
    survivors = server_pids(str(root / "rollouts"))
    assert survivors, "expected the SIGTERM-proof server to survive its controller"
    records = list((root / ".osmosis" / "servers").glob("*.json"))
    assert len(records) == 1 and (root / "out.run" / "server.json").is_file()
    server_workspace(root, env={"FAKE_SLOW_ROWS": ""}, evaluation={"batch_size": 2})
    resumed = start(root, "--resume")
    _, err = resumed.communicate(timeout=60)
    assert resumed.returncode == 0, err
    assert "stopped 1 rollout server(s) left behind by a killed run" in err
    wait_gone(str(root / "rollouts"), timeout=30)
    assert not list((root / ".osmosis" / "servers").glob("*.json"))
