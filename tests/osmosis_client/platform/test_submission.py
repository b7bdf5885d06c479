"""Hosted submission from Python (``osmosis_client.platform.eval.submission``): the same
policy ``osmosis eval submit`` renders — pins refused or warned about, the connected
repository checked, one Idempotency-Key per run, a suite recorded — with no CLI."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
import respx

from osmosis_client import Client, InvalidInputError
from osmosis_client.platform.eval.submission import (
    PinRules,
    plan_submission,
    submit_eval,
    submit_planned,
    submit_suite,
    suite_run_ids,
)
from tests.conftest import PLATFORM
from tests.gitrepo import git, make_project
from tests.osmosis_client.platform.test_eval_runs import CREATED

SUITE = """rollout = "demo"
entrypoint = "main.py"
dataset = "my-dataset"

[[ablation]]
[ablation.sweep]
model_path = ["openai/gpt-5-mini", "openai/gpt-5"]
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    path = make_project(tmp_path)
    (path / "configs" / "eval" / "suite.toml").write_text(SUITE)
    git(path, "add", "-A")
    git(path, "commit", "-qm", "suite")
    git(path, "remote", "set-url", "origin", str(tmp_path / "remote.git"))
    git(path, "push", "-q", "origin", "main")
    git(path, "remote", "set-url", "origin", "git@github.com:Org/Demo.git")
    return path


def _platform(router: respx.MockRouter, connected: str | None = "org/demo") -> list[httpx.Request]:
    repo = {"repo_full_name": connected} if connected else None
    router.get("/api/cli/workspaces").respond(
        200, json={"workspaces": [{"id": "w1", "name": "acme", "connected_repo": repo}]}
    )
    sent: list[httpx.Request] = []

    def create(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        n = len(sent)
        return httpx.Response(201, json={**CREATED, "id": f"r{n}", "name": f"run-{n}"})

    router.post("/api/cli/eval-runs").mock(side_effect=create)
    return sent


def _client() -> Client:
    return Client(base_url=PLATFORM, token="t", workspace="acme", max_retries=0)


def test_submit_suite_creates_one_run_per_entry_and_records_them(project: Path) -> None:
    with respx.mock(base_url=PLATFORM) as router, _client() as client:
        sent = _platform(router)
        done = submit_suite(
            client, project / "configs/eval/suite.toml", records=project / "records"
        )
    assert [s.run.name for s in done] == ["run-1", "run-2"]
    assert [s.entry for s in done] == ["demo-gpt-5-mini", "demo-gpt-5"]
    head = git(project, "rev-parse", "HEAD").strip()
    bodies = [json.loads(r.content) for r in sent]
    assert {b["experiment_config"]["commit_sha"] for b in bodies} == {head}
    assert bodies[1]["advanced_config"]["osmosis_suite"] == {"name": "suite", "entry": "demo-gpt-5"}
    assert len({r.headers["Idempotency-Key"] for r in sent}) == 2
    assert suite_run_ids("suite", project / "records") == {"r1", "run-1", "r2", "run-2"}


def test_submit_eval_refuses_a_workspace_connected_to_another_repo(project: Path) -> None:
    with respx.mock(base_url=PLATFORM, assert_all_called=False) as router, _client() as client:
        sent = _platform(router, connected="org/other")
        with pytest.raises(InvalidInputError) as caught:
            submit_eval(client, project / "configs/eval/demo.toml")
    assert caught.value.code == "REPO_MISMATCH" and not sent


def test_unattended_rules_refuse_a_dirty_rollout_and_attended_ones_warn(project: Path) -> None:
    (project / "rollouts/demo/main.py").write_text("# changed\n")
    config = project / "configs/eval/demo.toml"
    with pytest.raises(InvalidInputError) as caught:
        plan_submission(config)  # unattended by default: nobody reads a warning
    assert caught.value.code == "DIRTY_TREE"
    plan = plan_submission(config, PinRules(unattended=False))
    assert "rollouts/demo/main.py" in plan.warnings[0]
    assert plan.suite is None and len(plan.runs) == 1


def test_a_failure_half_way_keeps_the_record_of_runs_created(project: Path) -> None:
    plan = plan_submission(project / "configs/eval/suite.toml")
    with respx.mock(base_url=PLATFORM) as router, _client() as client:
        calls = iter([httpx.Response(201, json={**CREATED, "id": "r1", "name": "run-1"})])
        router.post("/api/cli/eval-runs").mock(
            side_effect=lambda r: next(calls, httpx.Response(400, json={"error": "no"}))
        )
        seen: list[str] = []
        with pytest.raises(Exception, match="no"):
            submit_planned(
                client,
                plan,
                records=project / "records",
                on_submitted=lambda s: seen.append(s.run.name),
            )
    assert seen == ["run-1"]
    assert suite_run_ids("suite", project / "records") == {"r1", "run-1"}


def test_a_secret_echoed_in_an_error_is_redacted(project: Path) -> None:
    secret = "".join(["hun", "ter2"])  # never in this file's source (tracebacks show it)
    with respx.mock(base_url=PLATFORM, assert_all_called=False) as router, _client() as client:
        router.post("/api/cli/eval-runs").respond(400, json={"error": f"bad value {secret}"})
        plan = plan_submission(project / "configs/eval/demo.toml")
        with pytest.raises(Exception) as caught:
            submit_planned(client, plan, secrets={"OPENAI_API_KEY": secret, "OTHER": "x"})
    assert secret not in str(caught.value) and "[REDACTED]" in str(caught.value)
    # nowhere in what a traceback shows: the error, its data, its causes and contexts
    import traceback

    shown = "".join(traceback.format_exception(caught.value))
    chain: list[BaseException] = []
    error: BaseException | None = caught.value
    while error is not None and error not in chain:
        chain.append(error)
        error = error.__cause__ or error.__context__
    assert secret not in shown
    assert all(secret not in repr(getattr(e, "data", "")) for e in chain)


def test_submit_suite_refuses_a_single_config(project: Path) -> None:
    with _client() as client, pytest.raises(InvalidInputError, match="not a suite"):
        submit_suite(client, project / "configs/eval/demo.toml")
