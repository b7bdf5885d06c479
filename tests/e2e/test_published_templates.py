"""The workspace template's own command lines (published-cli-0.3.8.md §9), run here as a
new user runs them: `template apply` the OpenAI Agents and Strands multiply rollouts,
`rollout init` a fresh one, `rollout validate` them in the published SDK's environment,
and `eval run … --fresh` each one to a perfect score against an offline tool-calling
mock — in the published run layout.

The SDK's environment is built once from the package index and cached outside the
checkout (tests/published_sdk.py)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.test_published_sdk import needs_312, osmosis, sdk_python  # noqa: F401
from tests.gitrepo import git
from tests.server_workspace import server_pids

pytestmark = pytest.mark.slow


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A fresh git checkout with the published scaffold (`doctor --fix` would make it)."""
    path = tmp_path / "ws"
    for folder in ("rollouts", "configs/eval", "configs/training", "data"):
        (path / folder).mkdir(parents=True)
    git(path, "init", "-q")
    return path


def envelope(stdout: str) -> dict[str, Any]:
    lines = [line for line in stdout.splitlines() if line.strip()]
    assert len(lines) == 1, stdout  # one JSON document on stdout
    doc = json.loads(lines[0])
    assert doc["schema_version"] == 1
    return doc  # type: ignore[no-any-return]


def run_mean(workspace: Path, name: str) -> float:
    results = workspace / ".osmosis" / "evals" / name / "results.json"
    doc = json.loads(results.read_text())
    return doc["summary"]["eval_fns"]["grader"]["mean"]  # type: ignore[no-any-return]


@needs_312
@pytest.mark.parametrize("template", ["multiply-local-openai", "multiply-local-strands"])
def test_a_bundled_template_applies_validates_and_scores(
    workspace: Path,
    sdk_python: Path,  # noqa: F811
    template: str,
) -> None:
    applied = osmosis(workspace, "--json", "template", "apply", template)
    assert applied.returncode == 0, applied.stderr
    assert envelope(applied.stdout)["operation"] == "template.apply"
    assert (workspace / "rollouts" / template / "pyproject.toml").is_file()

    python = ("--rollout-python", str(sdk_python))
    checked = osmosis(workspace, "--json", "rollout", "validate", template, *python)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    (item,) = envelope(checked.stdout)["items"]
    assert item["valid"] and item["mode"] == "server"
    assert item["workflows"] and item["graders"]

    config = f"configs/eval/{template}.toml"
    args = ("eval", "run", config, "--limit", "3", "--model", "mock/tool-calculator")
    done = osmosis(workspace, "--json", *args, "--name", template, "--fresh", *python)
    assert done.returncode == 0, done.stderr
    result = envelope(done.stdout)
    assert result["operation"] == "eval.run" and result["status"] == "success"
    assert run_mean(workspace, template) == 1.0
    run_dir = workspace / ".osmosis" / "evals" / template
    assert {"index.jsonl", "summary.jsonl", "metrics.json", "manifest.json", "logs.txt"} <= {
        p.name for p in run_dir.iterdir()
    }
    assert not server_pids(str(workspace))


@needs_312
def test_rollout_init_makes_a_rollout_that_runs(
    workspace: Path,
    sdk_python: Path,  # noqa: F811
) -> None:
    made = osmosis(workspace, "rollout", "init", "adder")
    assert made.returncode == 0, made.stderr
    python = ("--rollout-python", str(sdk_python))
    checked = osmosis(workspace, "rollout", "validate", "configs/eval/adder.toml", *python)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "rollouts/adder/main.py (server mode): valid" in checked.stdout

    config = "configs/eval/adder.toml"
    args = ("eval", "run", config, "--model", "mock/calculator", "--name", "adder", *python)
    done = osmosis(workspace, *args)
    assert done.returncode == 0, done.stderr
    assert run_mean(workspace, "adder") == 1.0
    again = osmosis(workspace, *args)
    assert again.returncode == 0, again.stderr  # a finished run is shown, never a leftover error
    assert "was already complete; nothing ran" in again.stderr + again.stdout


@needs_312
def test_the_templates_edit_loop_is_forked_warm_on_the_published_sdk(
    workspace: Path,
    sdk_python: Path,  # noqa: F811
) -> None:
    """Warm starts with the real SDK (openai-agents, LiteLLM, FastAPI pre-imported): the
    next run's server is forked, an edit of the rollout is picked up, the score holds."""
    from tests.server_workspace import server_pids

    template = "multiply-local-openai"
    assert osmosis(workspace, "template", "apply", template).returncode == 0
    warm = {"OSMOSIS_WARM": "1", "OSMOSIS_WARM_IDLE": "60"}
    args = (
        "eval",
        "run",
        f"configs/eval/{template}.toml",
        "--limit",
        "2",
        "--model",
        "mock/tool-calculator",
        "--rollout-python",
        str(sdk_python),
    )
    try:
        first = osmosis(workspace, *args, "-o", "first.json", **warm)
        assert first.returncode == 0, first.stderr
        assert "keeping the installed packages" in first.stderr
        ready = workspace / "warm"
        deadline = time.monotonic() + 120
        while not any(ready.glob("*.ready")):  # it imports the SDK's packages once
            assert time.monotonic() < deadline and not any(ready.glob("*.refused")), [
                p.read_text() for p in ready.glob("*.refused")
            ]
            time.sleep(0.2)
        main = workspace / "rollouts" / template / "main.py"
        text = main.read_text()
        marker = "from __future__ import annotations\n"
        edit = "print('EDITED-FOR-THE-WARM-TEST', flush=True)\n"
        main.write_text(text.replace(marker, marker + edit, 1) if marker in text else edit + text)
        again = osmosis(workspace, *args, "-o", "again.json", **warm)
        assert again.returncode == 0, again.stderr
        log = (workspace / "again.run" / "server.log").read_text()
        assert "forked by the warm interpreter" in log and "EDITED-FOR-THE-WARM-TEST" in log
        summary = json.loads((workspace / "again.json").read_text())["summary"]
        assert summary["eval_fns"]["grader"]["mean"] == 1.0
    finally:
        for socket in (workspace / "warm").glob("*.sock"):
            socket.unlink()  # the warm interpreter exits at its next check
        deadline = time.monotonic() + 30
        while server_pids(str(workspace / "warm")) and time.monotonic() < deadline:
            time.sleep(0.2)
    assert not server_pids(str(workspace / "warm"))
