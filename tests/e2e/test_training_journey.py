"""A training run on the loopback platform (issue 37): the installed ``osmosis train
submit`` refuses a mistyped value before any request, submits the pinned commit,
follows the run to finished, saves its metrics; a training script does the same from
Python (submit, follow, fetch the checkpoint)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from osmosis_client import Client
from osmosis_client.platform.training.training_submission import submit_training
from tests import envelopes
from tests.e2e.conftest import Run
from tests.e2e.platform_double import PlatformDouble
from tests.gitrepo import git, make_project

pytestmark = pytest.mark.slow

TRAINING = """\
[experiment]
rollout = "demo"
entrypoint = "main.py"
model_path = "Qwen/Qwen3.6-35B-A3B"
dataset = "multiply"

[training]
lr = 1e-6
rollout_batch_size = 16
"""


def until_finished(run_osmosis: Run, env: dict[str, str], name: str) -> dict[str, object]:
    deadline = time.monotonic() + 20
    while True:
        shown = run_osmosis("--json", "train", "info", name, extra_env=env)
        assert shown.returncode == 0, shown.stderr
        data = envelopes.data(shown.stdout)
        if data["training_run"]["status"] == "finished" or time.monotonic() > deadline:
            return data
        time.sleep(0.1)


def test_submitted_followed_to_finished_and_its_metrics_saved(
    run_osmosis: Run, platform: PlatformDouble, tmp_path: Path
) -> None:
    project = make_project(tmp_path / "repo", files={"configs/training/multiply.toml": TRAINING})
    env = {"OSMOSIS_TOKEN": platform.state.token, "OSMOSIS_WORKSPACE": "acme"}
    config = "configs/training/multiply.toml"

    (project / config).write_text(TRAINING.replace("lr = 1e-6", 'lr = "fast"'))
    mistyped = run_osmosis("train", "submit", config, "--yes", extra_env=env, cwd=project)
    assert mistyped.returncode == 2
    assert f"{config}:8:1: training.lr: must be a number, got 'fast'" in mistyped.stderr
    assert not platform.requests("POST", "/api/cli/training-runs")
    git(project, "checkout", "--", config)

    submitted = run_osmosis(
        "--json", "train", "submit", config, "--yes", extra_env=env, cwd=project
    )
    assert submitted.returncode == 0, submitted.stderr
    resource = envelopes.stdout_document(submitted.stdout)["resource"]
    (sent,) = platform.requests("POST", "/api/cli/training-runs")
    assert sent.body["experiment_config"]["commit_sha"] == git(project, "rev-parse", "HEAD")
    assert sent.body["training_config"] == {"lr": 1e-6, "rollout_batch_size": 16}

    data = until_finished(run_osmosis, env, resource["name"])
    assert data["training_run"]["status"] == "finished"
    assert data["checkpoints"][0]["checkpoint_name"] == f"{resource['name']}-step-40"
    saved = tmp_path / "out" / "metrics.json"
    written = run_osmosis("train", "info", resource["name"], "-o", str(saved), extra_env=env)
    assert written.returncode == 0, written.stderr
    metrics = json.loads(saved.read_text())
    assert metrics["training_run"]["name"] == resource["name"]
    assert len(metrics["metrics"][0]["data"]) == 5
    again = run_osmosis("train", "info", resource["name"], "-o", str(saved), extra_env=env)
    assert again.returncode == 2  # never clobbered silently (0.3.8: exit 0 and a warning)

    late = run_osmosis("train", "stop", resource["name"], "--yes", extra_env=env)
    assert late.returncode == 1 and "already finished" in late.stderr
    for result in (mistyped, submitted, written, late):
        assert platform.state.token not in result.stdout + result.stderr
        assert "Traceback" not in result.stderr


def test_a_training_script_submits_follows_and_fetches_the_checkpoint(
    platform: PlatformDouble, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = make_project(tmp_path / "repo", files={"configs/training/multiply.toml": TRAINING})
    monkeypatch.chdir(project)
    with Client(base_url=platform.url, token=platform.state.token, workspace="acme") as client:
        created = submit_training(client, "configs/training/multiply.toml").run
        deadline = time.monotonic() + 20
        while not (run := client.training_runs.get(created.name)).training_run.terminal:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        (checkpoint,) = client.training_runs.checkpoints(created.name).checkpoints
        metrics = client.training_runs.metrics(run.training_run.id)
    assert run.training_run.status == "finished" and checkpoint.checkpoint_step == 40
    assert metrics.overview.metric_summaries[0].latest == 0.5
