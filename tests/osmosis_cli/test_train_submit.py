"""``osmosis train submit`` and ``client.training_runs.submit`` (issue 37): values typed
and located before any request, the source pinned as ``eval submit`` pins it, secrets
resolved as published, the rollout never imported, the published envelope."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
import respx

from osmosis_client import AsyncClient, Client
from osmosis_client.errors import ConfigError, InvalidInputError
from osmosis_client.platform.training.training_config import load_training_config
from osmosis_client.platform.training.training_submission import submit_training
from tests.conftest import PLATFORM
from tests.gitrepo import git, make_project
from tests.osmosis_cli.conftest import Invoke

CONFIG = "configs/training/multiply.toml"
TRAINING = """\
[experiment]
rollout = "demo"
entrypoint = "main.py"
model_path = "Qwen/Qwen3.6-35B-A3B"
dataset = "multiply"

[training]
lr = 1e-6
n_samples_per_prompt = 8
rollout_batch_size = 16

[sampling]

[checkpoints]
checkpoint_save_freq = 20

[env]
LOG_LEVEL = "debug"

[secrets]
required = ["OPENAI_API_KEY"]
"""
CREATED = {
    "id": "tr_1",
    "name": "multiply-001",
    "status": "pending",
    "created_at": "2026-11-27T10:00:00Z",
    "platform_url": "https://platform.test/training/tr_1",
}
STORED = {
    "environment_secrets": [{"id": "s1", "name": "OPENAI_API_KEY", "scope": "workspace"}],
    "total_count": 1,
    "has_more": False,
}


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    # the rollout would write a marker (and fail) if anything imported it
    marker = tmp_path / "imported"
    rollout = f"open({str(marker)!r}, 'w').close()\nraise RuntimeError('boom at import')\n"
    path = make_project(tmp_path, files={CONFIG: TRAINING, "rollouts/demo/main.py": rollout})
    monkeypatch.chdir(path)
    monkeypatch.setenv("OSMOSIS_TOKEN", "ci-token-secret")
    monkeypatch.setenv("OSMOSIS_WORKSPACE", "acme")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    return path


@pytest.fixture
def api(router: respx.MockRouter) -> respx.MockRouter:
    router.get("/api/cli/workspaces").respond(
        200,
        json={
            "workspaces": [
                {"id": "w1", "name": "acme", "connected_repo": {"repo_full_name": "Org/Demo"}}
            ]
        },
    )
    router.get("/api/cli/environment-secrets").respond(200, json=STORED)
    return router


def test_submit_pins_head_and_sends_only_what_the_file_sets(
    invoke: Invoke, project: Path, api: respx.MockRouter
) -> None:
    create = api.post("/api/cli/training-runs").respond(201, json=CREATED)
    result = invoke("train", "submit", CONFIG, "--yes", "--json")
    assert result.exit_code == 0, result.stderr
    head = git(project, "rev-parse", "HEAD")
    body = json.loads(create.calls.last.request.content)
    assert body == {
        "experiment_config": {
            "rollout": "demo",
            "entrypoint": "main.py",
            "model_path": "Qwen/Qwen3.6-35B-A3B",
            "dataset": "multiply",
            "commit_sha": head,
        },
        "training_config": {"lr": 1e-6, "n_samples_per_prompt": 8, "rollout_batch_size": 16},
        "checkpoints_config": {"checkpoint_save_freq": 20},
        "env_config": {"LOG_LEVEL": "debug"},
        "secrets": {"required": ["OPENAI_API_KEY"]},
    }
    assert create.calls.last.request.headers["Idempotency-Key"]
    document = result.json()
    assert (document["operation"], document["message"]) == (
        "train.submit",
        "Training run submitted: multiply-001",
    )
    resource = document["resource"]
    assert (resource["model_name"], resource["dataset_name"]) == (
        "Qwen/Qwen3.6-35B-A3B",
        "multiply",
    )
    assert resource["config"]["commit_sha"] == head
    assert resource["git"] == {"identity": "org/demo", "remote_url": "git@github.com:Org/Demo.git"}
    assert resource["workspace"] == {"name": "acme"}
    assert {"action": "train_info", "name": "multiply-001"} in document["next_steps_structured"]
    assert not (project.parent / "imported").exists()  # the rollout was never imported
    assert "ci-token-secret" not in result.stdout + result.stderr


def test_bad_values_are_refused_at_their_line_before_any_request(
    invoke: Invoke, project: Path, api: respx.MockRouter
) -> None:
    create = api.post("/api/cli/training-runs")
    text = TRAINING.replace("lr = 1e-6", 'lr = "fast"').replace(
        "rollout_batch_size = 16", "rollout_batch_size = 16\ntotal_epochs = -3\nbogus = 1"
    )
    (project / CONFIG).write_text(text + '\n[rollout.secrets]\nDAYTONA_API_KEY = "X"\n')
    result = invoke("train", "submit", CONFIG, "--yes")
    assert result.exit_code == 2 and not create.called
    assert f"{CONFIG}:8:1: training.lr: must be a number, got 'fast'" in result.stderr
    assert f"{CONFIG}:11:1: training.total_epochs: must be >= 1, got -3" in result.stderr
    assert f"{CONFIG}:12:1: training.bogus: Unrecognized key" in result.stderr
    assert "rollout: Unrecognized section (put env vars in [env]" in result.stderr
    assert "Traceback" not in result.stderr
    error = invoke("train", "submit", CONFIG, "--yes", "--json").error()
    assert error["details"]["error"] == "Invalid training config"
    assert {i["key"] for i in error["details"]["issues"]} >= {"training.lr", "rollout"}


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ('[experiment]\nrollout = "demo"\n', "experiment.entrypoint: is required"),
        (TRAINING.replace('rollout = "demo"', 'rollout = "a/b"'), "experiment.rollout: must be a"),
        (TRAINING.replace('"main.py"', '"gone.py"'), "demo/gone.py does not exist"),
        (TRAINING + "[advanced]\nx = 1\n[sampling.y]\n", "sampling.y: Unrecognized key"),
        (TRAINING.replace('LOG_LEVEL = "debug"', 'OPENAI_API_KEY = "x"'), "is also set in [env]"),
        (TRAINING.replace("LOG_LEVEL", "_OSMOSIS_X"), "reserved by the platform"),
        (TRAINING.replace("LOG_LEVEL", "ROLLOUT_PORT"), "is set by the platform"),
        (TRAINING.replace("[sampling]", "[sampling]\nrollout_top_p = true"), "must be a number"),
        (TRAINING.replace("lr = 1e-6", "lr = inf"), "must be a finite number"),
        (
            TRAINING.replace("lr = 1e-6", "lr = 1" + "0" * 400),
            "training.lr: is too large for a TOML",
        ),
        (TRAINING.replace("= 8", "= 1" + "0" * 30), "n_samples_per_prompt: is too large"),
        (TRAINING + "[advanced]\nx = nan\n", "advanced.x: must be a finite number, got nan"),
        (TRAINING + "[advanced]\nx = [1, -inf]\n", "advanced.x: must be a finite number, got -inf"),
        (TRAINING + '[advanced]\nx = "<your-value>"\n', "advanced.x: <your-value> is a template"),
        (
            TRAINING.replace('"Qwen/Qwen3.6-35B-A3B"', '"<your-base-model>"'),
            "experiment.model_path: <your-base-model> is a template placeholder: set it to a base "
            "model from `osmosis model list`",
        ),
    ],
)
def test_every_problem_is_named(project: Path, text: str, problem: str) -> None:
    (project / CONFIG).write_text(text)
    with pytest.raises(ConfigError) as caught:
        load_training_config(project / CONFIG)
    assert any(problem in str(p) for p in caught.value.problems), caught.value.problems


def test_config_outside_configs_training_is_refused(
    invoke: Invoke, project: Path, api: respx.MockRouter
) -> None:
    (project / "configs" / "eval" / "t.toml").write_text(TRAINING)
    result = invoke("train", "submit", "configs/eval/t.toml", "--yes")
    assert result.exit_code == 2
    assert "must live under configs/training/" in result.stderr


def test_dirty_rollout_and_unpushed_head_are_refused(
    invoke: Invoke, project: Path, api: respx.MockRouter
) -> None:
    create = api.post("/api/cli/training-runs").respond(201, json=CREATED)
    (project / "rollouts" / "demo" / "main.py").write_text("# changed\n")
    dirty = invoke("train", "submit", CONFIG, "--yes")
    assert dirty.exit_code == 2 and "--allow-dirty" in dirty.stderr
    git(project, "commit", "-qam", "local")
    unpushed = invoke("train", "submit", CONFIG, "--yes")
    assert unpushed.exit_code == 2 and "push first" in unpushed.stderr
    assert not create.called


def test_no_terminal_and_no_yes_sends_nothing(
    invoke: Invoke, project: Path, api: respx.MockRouter
) -> None:
    create = api.post("/api/cli/training-runs")
    result = invoke("train", "submit", CONFIG)
    assert result.exit_code == 2 and not create.called
    assert "--yes" in result.stderr


def test_secrets_found_here_are_the_runs_own_and_missing_ones_are_named(
    invoke: Invoke, project: Path, api: respx.MockRouter, monkeypatch: pytest.MonkeyPatch
) -> None:
    create = api.post("/api/cli/training-runs").respond(201, json=CREATED)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-run-value")
    result = invoke("train", "submit", CONFIG, "--yes", "--json")
    assert result.exit_code == 0, result.stderr
    assert json.loads(create.calls.last.request.content)["secrets"] == {
        "required": ["OPENAI_API_KEY"],
        "provided": {"OPENAI_API_KEY": "sk-run-value"},
    }
    assert "sk-run-value" not in result.stdout + result.stderr
    monkeypatch.delenv("OPENAI_API_KEY")
    api.get("/api/cli/environment-secrets").respond(200, json={"environment_secrets": []})
    missing = invoke("train", "submit", CONFIG, "--yes")
    assert missing.exit_code == 2 and create.call_count == 1
    assert "Could not find secret(s): OPENAI_API_KEY" in missing.stderr
    assert "osmosis secret set OPENAI_API_KEY" in missing.stderr


def test_plain_output(invoke: Invoke, project: Path, api: respx.MockRouter) -> None:
    api.post("/api/cli/training-runs").respond(201, json={**CREATED, "platform_url": None})
    result = invoke("train", "submit", CONFIG, "--yes", "--plain")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.splitlines() == [
        "Training run submitted: multiply-001",
        "Status: pending",
        "Rollout: demo",
        "Model: Qwen/Qwen3.6-35B-A3B",
        "Dataset: multiply",
        "Check status with: osmosis train info multiply-001",
    ]


def test_the_sdk_submits_in_one_call(project: Path, api: respx.MockRouter) -> None:
    create = api.post("/api/cli/training-runs").respond(201, json=CREATED)
    with Client(base_url=PLATFORM, token="t", workspace="acme", max_retries=0) as client:
        done = submit_training(client, CONFIG, secrets={"OPENAI_API_KEY": "v", "OTHER": "x"})
        with pytest.raises(InvalidInputError, match="must live under"):
            submit_training(client, "configs/eval/demo.toml")
    assert (done.run.name, done.pin.commit_sha) == (
        "multiply-001",
        git(project, "rev-parse", "HEAD"),
    )
    sent = json.loads(create.calls.last.request.content)["secrets"]
    assert sent["provided"] == {"OPENAI_API_KEY": "v"}  # only what the config requires


@pytest.mark.parametrize("face", ["sync", "async"])
def test_submit_route_sync_and_async(face: str) -> None:
    payload: dict[str, Any] = {
        "experiment_config": {
            "rollout": "r",
            "entrypoint": "m.py",
            "model_path": "m",
            "dataset": "d",
        }
    }
    options = {"base_url": PLATFORM, "token": "t", "workspace": "acme", "max_retries": 0}
    with respx.mock(base_url=PLATFORM) as router:
        route = router.post("/api/cli/training-runs").respond(201, json=CREATED)
        if face == "sync":
            with Client(**options) as client:
                created = client.training_runs.submit(payload, idempotency_key="k1")
        else:

            async def go() -> Any:
                async with AsyncClient(**options) as client:
                    return await client.training_runs.submit(payload, idempotency_key="k1")

            created = asyncio.run(go())
    assert created.name == "multiply-001"
    request = route.calls.last.request
    assert request.headers["Idempotency-Key"] == "k1"
    assert request.headers["X-Osmosis-Workspace"] == "acme"
    assert json.loads(request.content) == payload


def test_people_see_the_summary_then_the_run(
    invoke: Invoke, project: Path, api: respx.MockRouter
) -> None:
    api.post("/api/cli/training-runs").respond(201, json=CREATED)
    result = invoke("train", "submit", CONFIG, "--yes")
    assert result.exit_code == 0, result.stderr
    assert "Rollout:    rollouts/demo/main.py" in result.stderr
    assert "secret OPENAI_API_KEY: workspace" in result.stderr
    # every value the request carries is shown before it is sent
    assert "Training:   lr=1e-06, n_samples_per_prompt=8, rollout_batch_size=16" in result.stderr
    assert "Checkpoints: checkpoint_save_freq=20" in result.stderr
    assert "Env:        LOG_LEVEL=debug" in result.stderr
    assert "Training run submitted: multiply-001" in result.stdout
    assert "View: https://platform.test/training/tr_1" in result.stdout


def test_the_templates_placeholder_is_refused_at_its_place_before_any_request(
    invoke: Invoke, project: Path, api: respx.MockRouter
) -> None:
    create = api.post("/api/cli/training-runs")
    text = TRAINING.replace('"Qwen/Qwen3.6-35B-A3B"', '"<your-base-model>"')
    (project / CONFIG).write_text(text)
    git(project, "commit", "-qam", "placeholder")
    result = invoke("train", "submit", CONFIG, "--yes")
    assert result.exit_code == 2 and not create.called
    assert f"{CONFIG}:4:1: experiment.model_path: <your-base-model> is a template" in result.stderr
