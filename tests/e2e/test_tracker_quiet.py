"""Tracker libraries kept off the user's terminal (issue 51): Trackio's exit hook no
longer prints on stdout after a ``--json`` document (it finished our run a second time),
W&B's ~35 banner lines per run are shown only with ``-v`` — the real libraries, in the
real CLI process, offline."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.e2e.conftest import osmosis_command
from tests.helpers import quickstart_run

pytestmark = pytest.mark.slow
RUN = quickstart_run(2)


def _env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("WANDB_", "TRACKIO_"))}
    return env | {
        "TRACKIO_DIR": str(tmp_path / "trackio"),
        "WANDB_MODE": "offline",
        "WANDB_DIR": str(tmp_path / "wandb"),
        "WANDB_SILENT": "false",
    }


def _cli(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*osmosis_command(), *args], capture_output=True, text=True, timeout=240, env=_env(tmp_path)
    )


def test_tracker_banners_stay_off_the_terminal_and_off_stdout(
    quickstart_project: Path, tmp_path: Path
) -> None:
    (tmp_path / "wandb").mkdir()
    done = _cli(
        tmp_path,
        "--json",
        *RUN,
        "--name",
        "t",
        "--log-to",
        "trackio:proj",
        "--log-to",
        "wandb:proj",
    )
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)  # one document: nothing printed after it
    assert [t["status"] for t in document["resource"]["trackers"]] == ["logged", "logged"]
    assert "wandb:" not in done.stderr and "Trackio" not in done.stderr, done.stderr
    shown = _cli(tmp_path, "-v", "eval", "push", "t", "--to", "wandb:other")
    assert shown.returncode == 0, shown.stderr
    assert "wandb:" in shown.stderr  # -v: the library's own lines, for whoever wants them
