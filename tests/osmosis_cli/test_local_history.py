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
    (killed / "manifest.json").write_text(
        json.dumps({"created_at": "2026-01-01T00:00:00Z", "inputs": {"model_path": "m"}})
    )
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
    result = invoke(
        *RUN[:3],
        "--model",
        "m",
        "--base-url",
        "http://127.0.0.1:9/v1",
        "--name",
        "nowhere",
        "--limit",
        "2",
    )
    assert result.exit_code == 1 and "refused the connection" in result.stderr
    assert not (project / ".osmosis" / "evals" / "nowhere").exists()
    assert invoke("--json", "eval", "list", "--local").items() == []


def test_runs_are_labelled_by_their_names_never_results(
    invoke: Invoke, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 36: `eval report runA runB` was titled "results vs results (2)"; JUnit and
    step summaries said "results" too."""
    for name in ("ckpt-100", "ckpt-200"):
        assert invoke(*RUN, "--name", name, "--limit", "3", "-q").exit_code == 0
    runs = project / ".osmosis" / "evals"
    a, b = runs / "ckpt-100" / "results.json", runs / "ckpt-200" / "results.json"
    report = invoke("eval", "report", str(a), str(b), "-o", "r.html")
    assert report.exit_code == 0, report.stderr
    page = (project / "r.html").read_text()
    assert "ckpt-100 vs ckpt-200" in page and "results (2)" not in page
    summary = project / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    assert invoke("eval", "compare", str(a), str(b)).exit_code == 0
    assert "`ckpt-100` → `ckpt-200`" in summary.read_text()
    junit = project / "junit.xml"
    assert (
        invoke(*RUN, "--name", "ckpt-300", "--limit", "2", "-q", "--junit", str(junit)).exit_code
        == 0
    )
    assert 'name="ckpt-300' in junit.read_text()


def test_a_standalone_document_is_labelled_by_its_config_and_model(
    invoke: Invoke, project: Path
) -> None:
    """A config run written with ``-o`` is called by the config it ran and its model, not
    by its file name; a seed-form run left at ``results.json`` by its model."""
    for out in ("a.json", "b.json"):
        assert invoke(*RUN, "-o", out, "--limit", "2", "-q").exit_code == 0
    report = invoke("eval", "report", "a.json", "b.json", "-o", "r.html")
    assert report.exit_code == 0, report.stderr
    page = (project / "r.html").read_text()
    label = "quickstart · mock/calculator"
    assert f"{label} vs {label} (2)" in page


@pytest.mark.parametrize(
    ("path", "config", "label"),
    [
        ("runs/ckpt-9/results.json", {"config_name": "nightly", "model": "m"}, "ckpt-9"),
        ("a.json", {"config_name": "nightly", "model": "org/m"}, "nightly · org/m"),
        ("baseline.json", {"model": "org/m"}, "baseline"),
        ("results.json", {"model": "org/m"}, "org/m"),
        ("results.json", None, "results"),  # nothing better is known
    ],
)
def test_label_of(path: str, config: dict[str, str] | None, label: str) -> None:
    from osmosis_local_runner.results.documents.labels import label_of

    assert label_of(Path(path), config) == label
