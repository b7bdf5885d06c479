"""``osmosis benchmark submit`` and ``submit_benchmark`` (issue 37): a config anywhere,
every value typed before any request, the benchmark and its task selection checked
against the catalog, secrets the run reads by name required to be stored (each named),
``[secrets].required`` values sent as the run's own, the published envelope."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import respx

from osmosis_client import Client
from osmosis_client.errors import InvalidInputError
from osmosis_client.platform.benchmark.benchmark_submission import submit_benchmark
from tests.conftest import PLATFORM
from tests.osmosis_cli.conftest import Invoke
from tests.osmosis_cli.test_benchmark_commands import DETAIL

CONFIG = """\
[experiment]
benchmark = "terminal-bench-2-1"

[tasks]
task_names = ["terminal-bench/git-multibranch"]

[execution]
attempts_per_task = 2
judge_api_key_secret = "JUDGE_KEY"

[secrets]
required = ["WEATHER_API_KEY"]

[[agents]]
harness = "codex"

[agents.model]
type = "provider"
model = "openai/gpt-5.2"
api_key_secret = "OPENAI_API_KEY"
"""
CREATED = {
    "id": "br_9",
    "name": "tb21-run-009",
    "status": "pending",
    "workflow_id": "wf_9",
    "task_count": 1,
    "created_at": "2026-11-27T10:00:00Z",
}


def stored(*names: str) -> dict[str, object]:
    secrets = [{"id": f"s{i}", "name": n, "scope": "workspace"} for i, n in enumerate(names)]
    return {"environment_secrets": secrets, "total_count": len(secrets), "has_more": False}


@pytest.fixture
def config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("OSMOSIS_TOKEN", "t")
    monkeypatch.setenv("OSMOSIS_WORKSPACE", "acme")
    monkeypatch.delenv("WEATHER_API_KEY", raising=False)
    monkeypatch.chdir(tmp_path)  # no workspace checkout: a benchmark needs none
    path = tmp_path / "bench-outside.toml"
    path.write_text(CONFIG)
    return path


@pytest.fixture
def platform(router: respx.MockRouter) -> respx.MockRouter:
    router.get("/api/cli/benchmarks/terminal-bench-2-1").respond(200, json=DETAIL)
    router.get("/api/cli/benchmarks/hle").respond(
        200,
        json={
            **DETAIL,
            "benchmark": {**DETAIL["benchmark"], "name": "HLE", "source_ref": "hle", "tasks": []},
        },
    )
    router.get("/api/cli/benchmarks/nope").respond(404, json={"error": "not found"})
    router.get("/api/cli/benchmarks").respond(500)  # the catalog unreadable: no suggestion
    router.get("/api/cli/environment-secrets").respond(
        200, json=stored("OPENAI_API_KEY", "JUDGE_KEY", "WEATHER_API_KEY")
    )
    return router


def test_submit_sends_the_config_and_the_runs_own_values(
    invoke: Invoke, config: Path, platform: respx.MockRouter, monkeypatch: pytest.MonkeyPatch
) -> None:
    create = platform.post("/api/cli/benchmark-runs").respond(201, json=CREATED)
    monkeypatch.setenv("WEATHER_API_KEY", "w-value")
    result = invoke("benchmark", "submit", str(config), "--yes", "--json")
    assert result.exit_code == 0, result.stderr
    body = json.loads(create.calls.last.request.content)
    assert body == {
        "experiment_config": {"benchmark": "terminal-bench-2-1"},
        "agents": [
            {
                "harness": "codex",
                "env": {},
                "model": {
                    "type": "provider",
                    "model": "openai/gpt-5.2",
                    "api_key_secret": "OPENAI_API_KEY",
                },
            }
        ],
        "tasks_config": {"task_names": ["terminal-bench/git-multibranch"]},
        "execution_config": {"attempts_per_task": 2, "judge_api_key_secret": "JUDGE_KEY"},
        "secrets": {"required": ["WEATHER_API_KEY"], "provided": {"WEATHER_API_KEY": "w-value"}},
    }
    assert create.calls.last.request.headers["Idempotency-Key"]
    document = result.json()
    assert document["operation"] == "benchmark.submit"
    resource = document["resource"]
    assert (resource["name"], resource["workflow_id"], resource["task_count"]) == (
        "tb21-run-009",
        "wf_9",
        1,
    )
    assert resource["config"]["experiment"] == {"benchmark": "terminal-bench-2-1"}
    assert {"action": "benchmark_run_info", "name": "tb21-run-009"} in document[
        "next_steps_structured"
    ]
    assert "w-value" not in result.stdout + result.stderr


def test_stored_values_send_an_empty_provided(
    invoke: Invoke, config: Path, platform: respx.MockRouter
) -> None:
    create = platform.post("/api/cli/benchmark-runs").respond(201, json=CREATED)
    result = invoke("benchmark", "submit", str(config), "--yes", "--plain")
    assert result.exit_code == 0, result.stderr
    body = json.loads(create.calls.last.request.content)
    assert body["secrets"] == {"required": ["WEATHER_API_KEY"], "provided": {}}
    assert result.stdout.splitlines() == [
        "Benchmark run submitted: tb21-run-009",
        "Status: pending",
        "Benchmark: Terminal-Bench 2.1",
        "Check status with: osmosis benchmark runs info tb21-run-009",
    ]


def test_secrets_read_by_name_must_be_stored_and_each_is_named(
    invoke: Invoke, config: Path, platform: respx.MockRouter, monkeypatch: pytest.MonkeyPatch
) -> None:
    create = platform.post("/api/cli/benchmark-runs")
    platform.get("/api/cli/environment-secrets").respond(200, json=stored("WEATHER_API_KEY"))
    monkeypatch.setenv("JUDGE_KEY", "exported values do not reach a judge secret")
    result = invoke("benchmark", "submit", str(config), "--yes")
    assert result.exit_code == 2 and not create.called
    assert "Could not find secret(s): OPENAI_API_KEY, JUDGE_KEY" in result.stderr
    assert "`osmosis secret set OPENAI_API_KEY` / `osmosis secret set JUDGE_KEY`" in result.stderr
    error = invoke("benchmark", "submit", str(config), "--yes", "--json").error()
    assert error["details"]["missing"] == ["OPENAI_API_KEY", "JUDGE_KEY"]


def test_a_required_name_found_nowhere_stops_the_submit(
    invoke: Invoke, config: Path, platform: respx.MockRouter
) -> None:
    create = platform.post("/api/cli/benchmark-runs")
    platform.get("/api/cli/environment-secrets").respond(
        200, json=stored("OPENAI_API_KEY", "JUDGE_KEY")
    )
    result = invoke("benchmark", "submit", str(config), "--yes")
    assert result.exit_code == 2 and not create.called
    assert "WEATHER_API_KEY" in result.stderr


def test_bad_values_are_refused_before_any_request(
    invoke: Invoke, config: Path, platform: respx.MockRouter
) -> None:
    config.write_text(CONFIG.replace("attempts_per_task = 2", 'attempts_per_task = "many"'))
    result = invoke("benchmark", "submit", str(config), "--yes")
    assert result.exit_code == 2 and not platform.calls
    assert f"{config}:8:1: execution.attempts_per_task: must be an integer, got 'many'" in (
        result.stderr
    )


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (('"terminal-bench-2-1"', '"nope"'), "benchmark 'nope' not found"),
        (
            ('"terminal-bench/git-multibranch"', '"no-such-task"'),
            "has no task_names 'no-such-task'",
        ),
        (
            ('task_names = ["terminal-bench/git-multibranch"]', 'categories = ["math"]'),
            "has no categories 'math'",
        ),
    ],
)
def test_the_selection_is_checked_against_the_catalog(
    invoke: Invoke,
    config: Path,
    platform: respx.MockRouter,
    edit: tuple[str, str],
    message: str,
) -> None:
    create = platform.post("/api/cli/benchmark-runs")
    config.write_text(CONFIG.replace(*edit))
    result = invoke("benchmark", "submit", str(config), "--yes")
    assert result.exit_code == 2 and not create.called
    assert message in result.stderr


def test_hle_without_parity_is_warned_and_the_sdk_submits_in_one_call(
    invoke: Invoke, config: Path, platform: respx.MockRouter
) -> None:
    platform.post("/api/cli/benchmark-runs").respond(201, json=CREATED)
    config.write_text(
        CONFIG.replace('"terminal-bench-2-1"', '" HLE "').replace(
            'task_names = ["terminal-bench/git-multibranch"]', ""
        )
    )
    platform.get("/api/cli/benchmarks/%20HLE%20").respond(
        200,
        json={**DETAIL, "benchmark": {**DETAIL["benchmark"], "name": "HLE", "source_ref": "hle"}},
    )
    result = invoke("benchmark", "submit", str(config), "--yes")
    assert result.exit_code == 0, result.stderr
    assert 'we recommend [tasks] task_set = "parity"' in result.stderr
    with Client(base_url=PLATFORM, token="t", workspace="acme", max_retries=0) as client:
        assert submit_benchmark(client, config).name == "tb21-run-009"
        config.write_text(CONFIG.replace("attempts_per_task = 2", "attempts_per_task = 0"))
        with pytest.raises(InvalidInputError, match="problem"):
            submit_benchmark(client, config)


def test_people_see_the_summary_then_the_run(
    invoke: Invoke, config: Path, platform: respx.MockRouter
) -> None:
    platform.post("/api/cli/benchmark-runs").respond(201, json=CREATED)
    result = invoke("benchmark", "submit", str(config), "--yes")
    assert result.exit_code == 0, result.stderr
    assert "Benchmark:  Terminal-Bench 2.1 (terminal-bench-2-1)" in result.stderr
    assert "Agent 1:    codex → openai/gpt-5.2" in result.stderr
    assert "Attempts per task: 2 · max concurrent attempts: 4" in result.stderr
    assert "Benchmark run submitted: tb21-run-009" in result.stdout
