"""A suite killed with SIGKILL mid-entry: ``--resume`` (no path: it finds the suite)
finishes it without redoing a finished entry or a finished attempt."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.child_output import leftover
from tests.e2e.conftest import osmosis_command

pytestmark = pytest.mark.slow
QUICKSTART = Path(__file__).resolve().parents[2] / "examples" / "quickstart"
ARGS = [
    "eval",
    "run",
    "configs/eval/suite.toml",
    "--model",
    "mock/calculator@40",
    "--batch-size",
    "2",
    "-q",
]


def start(root: Path, *extra: str) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OSMOSIS_")} | {
        "OSMOSIS_WARM": "0"
    }
    env["OSMOSIS_CONFIG_DIR"] = str(root / "cfg")
    return subprocess.Popen(
        [*osmosis_command(), *ARGS, *extra],
        cwd=root,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_sigkill_mid_entry_then_resume(tmp_path: Path) -> None:
    root = tmp_path / "qs"
    shutil.copytree(QUICKSTART, root, ignore=shutil.ignore_patterns(".osmosis"))
    proc = start(root)
    suites = root / ".osmosis" / "suites"
    deadline = time.monotonic() + 60
    second: Path | None = None
    while True:
        assert proc.poll() is None, leftover(proc)
        assert time.monotonic() < deadline, "the suite never reached its second entry"
        journals = sorted(suites.glob("*/*.journal.jsonl")) if suites.exists() else []
        done = [j for j in journals if j.name.startswith("exact.")]
        others = [j for j in journals if not j.name.startswith("exact.")]
        if done and others and len(others[0].read_text().splitlines()) >= 3:
            second = others[0]
            break
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=60)
    directory = second.parent
    first_doc = (directory / "exact.json").read_bytes()
    kept = [json.loads(line) for line in second.read_text().splitlines()[1:]]
    resumed = start(root, "--resume")
    _, err = resumed.communicate(timeout=120)
    assert resumed.returncode == 0, err
    assert (directory / "exact.json").read_bytes() == first_doc  # not run again
    suite = json.loads((directory / "suite.json").read_text())
    assert suite["status"] == "finished" and len(suite["entries"]) == 5
    assert all(e["summary"]["status"] == "finished" for e in suite["entries"])
    lines = [json.loads(line) for line in second.read_text().splitlines()[1:]]
    keys = [(r["row_index"], r["run_index"]) for r in lines]
    assert len(keys) == len(set(keys))  # no attempt ran twice
    assert lines[: len(kept)] == kept  # the finished ones were kept as they were
