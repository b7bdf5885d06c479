"""`osmosis eval run` / `eval submit` on a published-SDK rollout, through the CLI: the plan
line, flags, -v, --json and one-line errors (the rollout server double stands in for
the SDK, so these run on any Python)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from osmosis_local_runner.server import environment
from tests.osmosis_cli.conftest import Invoke
from tests.server_workspace import server_workspace


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setattr(environment, "MIN_PYTHON", (3, 10))
    # --rollout-mode native imports main.py, whose folder (holding a stand-in osmosis_ai)
    # then joins sys.path: give it back afterwards
    monkeypatch.setattr(sys, "path", list(sys.path))
    root = tmp_path / "ws"
    server_workspace(root, env={"FAKE_PRINT_ENV": "FAKE_STREAM"}, evaluation={"limit": 3})
    monkeypatch.chdir(root)
    return root


RUN = ["eval", "run", "configs/eval/fake.toml", "--rollout-python", sys.executable]


def test_the_plan_says_server_mode_and_why(invoke: Invoke, workspace: Path) -> None:
    result = invoke(*RUN, "-o", "out.json")
    assert result.exit_code == 0, result.stderr
    assert (
        "  rollout: rollouts/fake/main.py — server mode "
        "(rollouts/fake/pyproject.toml depends on osmosis-ai); Python "
    ) in result.stderr
    assert "(--rollout-python)" in result.stderr
    assert "3 rows, 3 attempts (0 errored)" in result.stdout
    assert "server|" not in result.stderr  # the server's output only with -v


def test_json_prints_the_document_and_nothing_else(invoke: Invoke, workspace: Path) -> None:
    result = invoke(*RUN, "-o", "out.json", "--json")
    assert result.exit_code == 0, result.stderr
    doc = result.resource()
    assert doc["config"]["rollout_mode"] == "server"
    run = doc["rows"][0]["runs"][0]
    assert {"rollout_id", "err_category", "trajectory", "messages", "answer"} <= set(run)
    assert result.stderr == ""


def test_verbose_shows_the_server_output_live(invoke: Invoke, workspace: Path) -> None:
    result = invoke("-v", *RUN, "-o", "out.json")
    assert result.exit_code == 0, result.stderr
    assert "  server| rollout server double listening on" in result.stderr
    assert "  server| FAKE_STREAM=None" in result.stderr
    older = invoke(*RUN, "-o", "out2.json", "--debug")  # the older templates' spelling
    assert older.exit_code == 0, older.stderr
    assert "  server| rollout server double listening on" in older.stderr


def test_rollout_mode_native_imports_it_instead(invoke: Invoke, workspace: Path) -> None:
    result = invoke(*RUN, "--rollout-mode", "native", "-o", "out.json")
    assert result.exit_code == 2
    assert "rollouts/fake/main.py defines no Grader subclass" in result.stderr


def test_a_bad_rollout_mode_is_a_usage_error(invoke: Invoke, workspace: Path) -> None:
    result = invoke(*RUN, "--rollout-mode", "remote")
    assert result.exit_code == 2
    assert result.stderr.startswith("error: --rollout-mode must be 'server' or 'native'")


def test_a_missing_interpreter_is_one_line(invoke: Invoke, workspace: Path) -> None:
    result = invoke("eval", "run", "configs/eval/fake.toml", "--rollout-python", "/no/python")
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [
        "error: --rollout-python /no/python does not exist — name a Python 3.12+ interpreter "
        "(or pass --rollout-python PATH)"
    ]


def test_a_server_that_cannot_start_shows_its_last_lines(invoke: Invoke, workspace: Path) -> None:
    server_workspace(workspace, env={"FAKE_CRASH_AT_START": "boom: bad import"})
    result = invoke(*RUN, "-o", "out.json")
    assert result.exit_code == 1
    lines = result.stderr.splitlines()
    error = next(i for i, line in enumerate(lines) if line.startswith("error:"))
    assert lines[error].startswith(
        "error: the rollout server exited with code 3 before it was ready"
    )
    assert "  | boom: bad import" in lines[error + 1 :]
    # the output is below the error line, and the whole of it is in the named log file
    assert "its last lines are below; all of its output is in " in lines[error]
    log = Path(lines[error].rsplit("all of its output is in ", 1)[1])
    assert "above" not in lines[error]
    assert "boom: bad import" in (workspace / log if not log.is_absolute() else log).read_text()


def test_local_keys_choose_mode_and_python(invoke: Invoke, workspace: Path) -> None:
    server_workspace(
        workspace,
        evaluation={"limit": 2},
        local={"rollout_python": sys.executable, "mode": "server"},
        pyproject=False,
    )
    result = invoke("eval", "run", "configs/eval/fake.toml", "-o", "out.json")
    assert result.exit_code == 0, result.stderr
    assert "(set by [local] mode)" in result.stderr
    assert "([local] rollout_python)" in result.stderr


def test_max_retries_retries_a_transient_failure(invoke: Invoke, workspace: Path) -> None:
    server_workspace(
        workspace,
        env={"FAKE_DIE_ON_ROW": "1", "FAKE_DIE_MARK": str(workspace / "died")},
        evaluation={"limit": 3, "batch_size": 1},
    )
    result = invoke(*RUN, "-o", "out.json", "--max-retries", "1", "--json")
    assert result.exit_code == 0, result.stderr
    runs = {row["row_index"]: row["runs"][0] for row in result.resource()["rows"]}
    assert runs[1]["success"] and runs[1]["retries"] == 1


def test_results_keep_the_trajectory_path(invoke: Invoke, workspace: Path) -> None:
    result = invoke(*RUN, "-o", "results/out.json")
    assert result.exit_code == 0, result.stderr
    doc = json.loads((workspace / "results" / "out.json").read_text())
    path = doc["rows"][0]["runs"][0]["trajectory"]
    assert path.startswith("out.run/rollout_trials/")
    assert (workspace / "results" / path).is_file()


def test_serve_takes_0_2_flags(
    invoke: Invoke, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    result = invoke("serve", "-m", "nope_mod:x", "--reload", "--local-debug")
    assert result.exit_code == 2  # the module is missing: not an unknown option
    assert "--reload is not offered" in result.stderr and "No module named" in result.stderr


def test_serve_without_a_login_names_the_ways_forward(
    invoke: Invoke, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 34: exit 3 with no way forward; now the line names --local / --skip-register."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("OSMOSIS_TOKEN", raising=False)
    monkeypatch.setenv("OSMOSIS_CONFIG_DIR", str(tmp_path / "cfg"))
    result = invoke("serve", "-m", "server:agent_loop")
    assert result.exit_code == 3
    assert "--skip-register" in result.stderr and "--local" in result.stderr
