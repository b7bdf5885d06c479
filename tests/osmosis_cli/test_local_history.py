"""Local runs you can find (issue 36, part 2): ``eval list --local`` and ``eval info NAME
--local`` from the project's ``.osmosis/evals/``; without a login, ``eval list`` points
there; a run that never started an attempt leaves nothing behind."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.osmosis_cli.conftest import Invoke

RUN = ["eval", "run", "configs/eval/quickstart.toml", "--model", "mock/calculator"]


@pytest.fixture
def project(quickstart_project: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("OSMOSIS_TOKEN", raising=False)
    monkeypatch.setenv("OSMOSIS_CONFIG_DIR", str(quickstart_project / "cfg"))
    return quickstart_project


def test_local_runs_are_listed_and_shown(invoke: Invoke, project: Path) -> None:
    assert invoke(*RUN, "--name", "first", "--limit", "4", "-q").exit_code == 0
    assert invoke(*RUN, "--name", "second", "--limit", "2", "--n", "2", "-q").exit_code == 0
    killed = project / ".osmosis" / "evals" / "killed"
    killed.mkdir()
    (killed / "results.json.journal.jsonl").write_text('{"journal": 1}\n{"row_index": 0}\n')
    (killed / "manifest.json").write_text(json.dumps({"created_at": "2026-01-01T00:00:00Z",
                                                      "inputs": {"model_path": "m"}}))  # fmt: skip
    listed = invoke("--json", "eval", "list", "--local")
    assert listed.exit_code == 0, listed.stderr
    items = {item["name"]: item for item in listed.items()}
    assert set(items) == {"first", "second", "killed"}
    assert items["first"]["status"] == "finished" and items["first"]["rows"] == 4
    assert items["second"]["attempts"] == 4 and items["second"]["mean"] == 1.0
    assert items["killed"]["status"] == "stopped" and items["killed"]["attempts"] == 1
    human = invoke("eval", "list", "--local")
    assert human.exit_code == 0 and "first" in human.stdout and "finished" in human.stdout
    shown = invoke("--json", "eval", "info", "second", "--local")
    assert shown.exit_code == 0 and shown.data()["pass_at_1"] == 1.0
    missing = invoke("eval", "info", "nope", "--local")
    assert missing.exit_code == 2 and "no local run named 'nope'" in missing.stderr


def test_without_a_login_eval_list_points_at_local(invoke: Invoke, project: Path) -> None:
    result = invoke("eval", "list")
    assert result.exit_code == 3 and "--local" in result.stderr


def test_a_run_that_never_started_an_attempt_leaves_nothing(invoke: Invoke, project: Path) -> None:
    result = invoke(*RUN[:3], "--model", "m", "--base-url", "http://127.0.0.1:9/v1",
                    "--name", "nowhere", "--limit", "2")  # fmt: skip
    assert result.exit_code == 1 and "cannot reach the model endpoint" in result.stderr
    assert not (project / ".osmosis" / "evals" / "nowhere").exists()
    assert invoke("--json", "eval", "list", "--local").items() == []
