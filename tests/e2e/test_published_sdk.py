"""`osmosis eval run` on rollouts written for the real published osmosis-ai 0.3 SDK
(examples/published-rollout), in the SDK's own Python >= 3.12 environment: scores,
tokens, a timed-out attempt, the OpenAI Agents integration (streaming) against a
loopback OpenAI-compatible server, kill -9 + --resume, and the uv path.

The SDK's environment is built once from the package index and cached outside the
checkout (tests/published_sdk.py)."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from tests.child_output import leftover
from tests.e2e.conftest import osmosis_command
from tests.gitrepo import git
from tests.published_sdk import (
    INDEX_TLS,
    PUBLISHED_VERSION,
    published_python,
    python312,
    uv,
    uv_env,
)
from tests.server_workspace import server_pids
from tests.stub_openai import StubOpenAI

pytestmark = pytest.mark.slow
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "published-rollout"
PYTHON312 = python312()
needs_312 = pytest.mark.skipif(
    PYTHON312 is None,
    reason="the published osmosis-ai 0.3 SDK needs Python >= 3.12, and none exists here",
)


@pytest.fixture(scope="module")
def sdk_python() -> Path:
    if PYTHON312 is None:
        pytest.skip("no Python >= 3.12 on this machine")
    return published_python(PYTHON312)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    path = tmp_path / "ws"
    shutil.copytree(EXAMPLE, path, ignore=shutil.ignore_patterns(".osmosis", ".venv", "*.run"))
    return path


def cli_env(workspace: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OSMOSIS_", "UV_"))}
    env.pop("VIRTUAL_ENV", None)
    env.update(OSMOSIS_CONFIG_DIR=str(workspace / "cfg"), HOME=str(workspace / "home"))
    # warm starts outlive a run by design: off unless a test asks, and kept in the workspace
    env.update(OSMOSIS_WARM="0", OSMOSIS_WARM_DIR=str(workspace / "warm"))
    env.update(extra)
    return env


def osmosis(
    workspace: Path, *args: str, timeout: float = 240, **extra: str
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*osmosis_command(), *args],
        cwd=workspace,
        env=cli_env(workspace, **extra),
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def document(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text())  # type: ignore[no-any-return]


def all_runs(doc: dict[str, Any]) -> list[dict[str, Any]]:
    return [run for row in doc["rows"] for run in row["runs"]]


@needs_312
def test_the_scaffold_rollout_scores_and_counts_tokens(workspace: Path, sdk_python: Path) -> None:
    done = osmosis(
        workspace,
        "eval",
        "run",
        "configs/eval/calculator.toml",
        "--rollout-python",
        str(sdk_python),
        "-o",
        "out/calc.json",
    )
    assert done.returncode == 0, done.stderr
    assert f"osmosis-ai {PUBLISHED_VERSION} (--rollout-python)" in done.stderr
    assert "rollouts/calculator/pyproject.toml depends on osmosis-ai" in done.stderr
    doc = document(workspace / "out" / "calc.json")
    assert doc["config"]["rollout_mode"] == "server"
    assert doc["summary"]["eval_fns"]["grader"]["mean"] == 1.0
    runs = all_runs(doc)
    assert len(runs) == 10 and doc["summary"]["total_tokens"] == sum(r["tokens"] for r in runs)
    assert all(r["tokens"] > 0 and r["err_category"] is None for r in runs)
    first = runs[0]
    assert [m["role"] for m in first["messages"]] == ["system", "user", "assistant"]
    trajectory = workspace / "out" / first["trajectory"]
    assert json.loads(trajectory.read_text())["extra"]["osmosis"]["reward"] == 1.0
    assert not server_pids(str(workspace))


@needs_312
def test_a_timed_out_attempt_fails_alone(workspace: Path, sdk_python: Path) -> None:
    config = workspace / "configs" / "eval" / "calculator.toml"
    slow = config.read_text().replace(
        "agent_workflow_timeout_s = 60", "agent_workflow_timeout_s = 1"
    )
    (config.parent / "slow.toml").write_text(slow)
    with StubOpenAI() as stub:
        stub.state.slow_prompts = {"What is 25 * 60?": 2.5}
        done = osmosis(
            workspace,
            "eval",
            "run",
            "configs/eval/slow.toml",
            "--rollout-python",
            str(sdk_python),
            "--model",
            "stub-model",
            "--base-url",
            stub.url,
            "--limit",
            "4",
            "-o",
            "out/slow.json",
        )
    assert done.returncode == 0, done.stderr
    runs = {r["answer"]: r for r in all_runs(document(workspace / "out" / "slow.json"))}
    timed_out = [r for r in runs.values() if r["error"]]
    assert len(timed_out) == 1
    assert timed_out[0]["err_category"] == "timeout" and "timed out" in timed_out[0]["error"]
    assert sum(r["success"] for r in runs.values()) == 3


@needs_312
def test_the_openai_agents_integration_streams_through_the_bridge(
    workspace: Path, sdk_python: Path
) -> None:
    with StubOpenAI() as stub:
        done = osmosis(
            workspace,
            "eval",
            "run",
            "configs/eval/agents-calculator.toml",
            "--rollout-python",
            str(sdk_python),
            "--model",
            "served-model",
            "--base-url",
            stub.url,
            "--limit",
            "3",
            "-o",
            "out/agents.json",
        )
        requests = list(stub.state.requests)
    assert done.returncode == 0, done.stderr
    doc = document(workspace / "out" / "agents.json")
    assert doc["summary"]["eval_fns"]["grader"]["mean"] == 1.0
    assert doc["summary"]["total_tokens"] == 3 * 2 * 10  # two calls per rollout, 10 each
    # the agent's calls reached the endpoint as the configured model, tools attached
    model_calls = [r for r in requests if r.get("messages", [{}])[-1].get("content") != "ping"]
    assert model_calls and all(r["model"] == "served-model" for r in model_calls)
    assert all(
        {"add", "divide"} <= {t["function"]["name"] for t in r["tools"]} for r in model_calls
    )
    messages = all_runs(doc)[0]["messages"]
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "tool", "assistant"]
    assert messages[2]["tool_calls"][0]["function"]["name"] in {"add", "subtract", "multiply"}


@needs_312
def test_kill_9_then_resume_loses_nothing_and_leaves_no_server(
    workspace: Path, sdk_python: Path
) -> None:
    args = [
        "eval",
        "run",
        "configs/eval/calculator.toml",
        "--rollout-python",
        str(sdk_python),
        "--model",
        "mock/calculator@400",
        "--batch-size",
        "2",
        "-o",
        "out/k.json",
        "-q",
    ]
    journal = workspace / "out" / "k.json.journal.jsonl"
    proc = subprocess.Popen(
        [*osmosis_command(), *args],
        cwd=workspace,
        env=cli_env(workspace),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 90
        while not journal.exists() or len(journal.read_text().splitlines()) < 4:
            assert proc.poll() is None, leftover(proc)
            assert time.monotonic() < deadline, "the run never got going"
            time.sleep(0.05)
        assert server_pids(str(workspace / "rollouts" / "calculator"))
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
    finally:
        if proc.poll() is None:
            proc.kill()
    before = journal.read_text().splitlines()[1:]
    # the server notices its controller died (death signal) and goes away on its own
    deadline = time.monotonic() + 20
    while server_pids(str(workspace / "rollouts" / "calculator")):
        assert time.monotonic() < deadline, "the rollout server outlived its controller"
        time.sleep(0.1)
    done = osmosis(workspace, *args[:-1], "--resume")
    assert done.returncode == 0, done.stderr
    assert f"{len(before)} already done" in done.stderr
    doc = document(workspace / "out" / "k.json")
    runs = all_runs(doc)
    assert len(runs) == 10 and doc["summary"]["eval_fns"]["grader"]["mean"] == 1.0
    kept = {json.loads(line)["rollout_id"] for line in before}
    assert kept <= {r["rollout_id"] for r in runs}  # the finished ones were not redone
    assert not server_pids(str(workspace))


@needs_312
def test_uv_syncs_the_rollouts_own_project_once_and_leaves_the_tree_alone(
    workspace: Path, sdk_python: Path
) -> None:
    assert PYTHON312 is not None
    tool = uv()
    env = uv_env(PYTHON312)
    extra = {
        "PATH": f"{tool.parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "UV_PYTHON": env["UV_PYTHON"],
        "UV_CACHE_DIR": env["UV_CACHE_DIR"],
        "OSMOSIS_ROLLOUT_ENVS": str(workspace.parent / "envs"),
        **INDEX_TLS,  # without the lock, uv resolves from the package index
    }
    (workspace / "rollouts" / "calculator" / "uv.lock").unlink()  # uv would write one
    (workspace / ".gitignore").write_text("cfg/\nhome/\n")
    for command in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "init"]):
        git(workspace, *command)
    args = ["eval", "run", "configs/eval/calculator.toml", "--limit", "2"]
    first = osmosis(workspace, *args, "--name", "uv1", **extra)
    assert first.returncode == 0, first.stderr
    assert "syncing the rollout's environment: uv sync --project rollouts/calculator" in (
        first.stderr
    )
    # no lock: uv resolves the newest osmosis-ai the index offers, whichever that is
    assert re.search(r"osmosis-ai \d+\.\d+\.\d+\S* \(uv, synced\)", first.stderr), first.stderr
    second = osmosis(workspace, *args, "--name", "uv2", **extra)
    assert second.returncode == 0, second.stderr
    assert "(uv, in sync)" in second.stderr and "syncing" not in second.stderr
    results = workspace / ".osmosis" / "evals" / "uv2" / "results.json"
    assert document(results)["summary"]["eval_fns"]["grader"]["mean"] == 1
    status = git(workspace, "status", "--porcelain", "--untracked-files=all")
    assert status == ""  # no uv.lock, no .venv, no egg-info; .osmosis ignores itself


PLAN = """
import json, sys
from pathlib import Path
from osmosis_ai.eval.local.upload import build_eval_upload_plan
plan = build_eval_upload_plan(Path(sys.argv[1]))
print(json.dumps({"run": plan.run, "files": [f.path for f in plan.files]}))
"""


@needs_312
def test_the_published_uploader_accepts_our_run_directories(
    workspace: Path, sdk_python: Path
) -> None:
    """The published CLI's own validator (what `eval upload` checks before any network
    call) reads our run directory — native and server mode — as one of its own."""
    server = osmosis(
        workspace,
        "eval",
        "run",
        "configs/eval/calculator.toml",
        "--rollout-python",
        str(sdk_python),
        "--name",
        "srv",
        "--rows",
        "1,3-4",
    )
    assert server.returncode == 0, server.stderr
    quickstart = workspace.parent / "qs"
    shutil.copytree(
        EXAMPLE.parent / "quickstart", quickstart, ignore=shutil.ignore_patterns(".osmosis")
    )
    native = osmosis(quickstart, "eval", "run", "configs/eval/quickstart.toml", "--name", "nat")
    assert native.returncode == 0, native.stderr
    for run_dir, trajectories in (
        (workspace / ".osmosis" / "evals" / "srv", 3),
        (quickstart / ".osmosis" / "evals" / "nat", 0),
    ):
        checked = subprocess.run(
            [str(sdk_python), "-c", PLAN, str(run_dir)], capture_output=True, text=True, timeout=60
        )
        assert checked.returncode == 0, checked.stderr
        plan = json.loads(checked.stdout)
        files = plan["files"]
        assert {"index.jsonl", "progress.json", "logs.txt"} <= set(files)
        assert sum(f.endswith("/trajectory.json") for f in files) == trajectories
        assert plan["run"]["name"] == run_dir.name
        # our own import plan declares exactly what the published uploader would
        from osmosis_local_runner.run.share.import_plan import plan_import

        ours = plan_import(run_dir).body
        assert [f["path"] for f in ours["files"]] == sorted(files)
        assert ours["run"] == plan["run"]
    srv = workspace / ".osmosis" / "evals" / "srv"
    assert sorted(p.name for p in (srv / "trajectories").iterdir()) == [
        f"row_{r}_run_0.json" for r in range(3)
    ]
