"""The installed `osmosis eval run` killed mid-run: SIGKILL then --resume, and Ctrl-C."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

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
    env = {k: v for k, v in os.environ.items() if not k.startswith("OSMOSIS_")} | {"OSMOSIS_WARM": "0"}
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
