"""Experiment trackers (issue 47): destinations checked before a run, the payload every
tracker gets, and what becomes of each — a failure recorded, never raised, a run sent
twice sending nothing. The sinks here are stand-ins; the real MLflow, W&B and Trackio
are in tests/e2e/test_trackers_real.py."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from osmosis_client.errors import InvalidInputError
from osmosis_local_runner.api import load_run, push_run, run_eval
from osmosis_local_runner.trackers import logging as tracking, parse_destination
from osmosis_local_runner.trackers.payload import COLUMNS, MAX_CELL, payload_of


@pytest.fixture
def sent(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, Any, str | None, int | None]]:
    """Every sink replaced by one that records what it was sent (``fail`` in the target:
    it raises, as an unreachable tracker does)."""
    calls: list[tuple[str, Any, str | None, int | None]] = []

    def sink(kind: str) -> Any:
        def send(payload: Any, to: Any, step: int | None) -> dict[str, Any]:
            target = to.target
            if target and "fail" in target:
                raise ConnectionError(f"cannot reach {target}")
            calls.append((kind, payload, target, step))
            return {"run_id": f"{kind}-run-{len(calls)}", "into": "own"}

        return send

    monkeypatch.setattr(
        tracking, "SINKS", {k: sink(k) for k in ("mlflow", "wandb", "trackio", "hf")}
    )
    monkeypatch.setattr("osmosis_local_runner.trackers.check_available", lambda d: None)
    return calls


@pytest.mark.parametrize(
    ("text", "kind", "target"),
    [
        ("mlflow", "mlflow", None),
        ("mlflow:http://127.0.0.1:5000", "mlflow", "http://127.0.0.1:5000"),
        ("mlflow:sqlite:///mlflow.db", "mlflow", "sqlite:///mlflow.db"),
        ("wandb:my-team/rl-evals", "wandb", "my-team/rl-evals"),
        ("trackio:evals", "trackio", "evals"),
    ],
)
def test_destinations_parse(text: str, kind: str, target: str | None) -> None:
    found = parse_destination(text)
    assert (found.kind, found.target) == (kind, target)


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("mlfow:http://x", "unknown tracker 'mlfow'"),
        ("wandb:", "names no target"),
        ("wandb:a/b/c", "not a wandb project name"),
        ("trackio:two words", "not a trackio project name"),
    ],
)
def test_a_bad_destination_is_refused_before_anything_runs(text: str, said: str) -> None:
    with pytest.raises(InvalidInputError, match=said) as caught:
        parse_destination(text)
    assert caught.value.code == "USAGE"


def test_a_password_in_a_tracking_uri_is_never_shown_or_kept() -> None:
    found = parse_destination("mlflow:https://ada:s3cret@mlflow.example.com")
    assert "s3cret" not in str(found) and "s3cret" not in found.key
    assert found.target == "https://ada:s3cret@mlflow.example.com"  # sent as given


def test_a_missing_extra_is_said_with_the_install_command(
    monkeypatch: pytest.MonkeyPatch, quickstart_project: Path
) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "wandb" else real(name, *a)
    )
    with pytest.raises(InvalidInputError, match="needs the wandb package") as caught:
        run_eval(
            "configs/eval/quickstart.toml",
            name="x",
            model="mock/calculator",
            limit=1,
            log_to="wandb:evals",
        )
    assert "osmosis-client[wandb]" in str(caught.value.hint)
    assert not (quickstart_project / ".osmosis" / "evals" / "x").exists()  # nothing ran


def test_the_payload_holds_the_metrics_params_and_one_table_schema(
    quickstart_project: Path,
) -> None:
    run_eval("configs/eval/quickstart.toml", name="step-100", model="mock/calculator", limit=3)
    result = load_run("step-100")
    payload = payload_of(result._file, "step-100", "id-1", provenance={"git_head": "abc123"})
    metrics = payload.metrics
    assert metrics["eval/grader/mean"] == 1.0 and metrics["eval/grader/pass_at_3"] == 1.0
    assert metrics["eval/attempts"] == 9 and metrics["eval/errored"] == 0
    assert metrics["eval/tokens/output"] == 18 and metrics["eval/truncation_rate"] == 0.0
    assert "eval/cost_usd" not in metrics  # no price known: not a made-up zero
    assert payload.params["model"] == "mock/calculator"
    assert payload.params["git_head"] == "abc123" and payload.params["status"] == "finished"
    assert len(payload.rows) == 9 and all(len(r) == len(COLUMNS) for r in payload.rows)
    row = dict(zip(COLUMNS, payload.rows[0], strict=True))
    assert row["score"] == 1.0 and row["passed"] is True and row["error"] == ""
    assert json.loads(row["transcript"])[-1]["role"] == "assistant"  # JSON text, one schema
    assert len(row["transcript"]) <= MAX_CELL


def test_a_run_goes_to_each_tracker_once_and_a_failure_is_kept_for_push(
    sent: list[Any], quickstart_project: Path
) -> None:
    result = run_eval(
        "configs/eval/quickstart.toml",
        name="step-200",
        model="mock/calculator",
        limit=2,
        log_to=["mlflow:http://tracker", "wandb:fail-proj"],
        step=200,
    )
    assert result.status == "finished"  # the run stands whatever the trackers did
    assert [(kind, target, step) for kind, _, target, step in sent] == [
        ("mlflow", "http://tracker", 200)
    ]
    record = json.loads((result.path.parent / "trackers.json").read_text())["destinations"]
    assert record["mlflow:http://tracker"]["status"] == "logged"
    failed = record["wandb:fail-proj"]
    assert failed["status"] == "failed" and "cannot reach fail-proj" in failed["error"]

    # pushed again: the one that had it is not sent again; the other is tried again
    again = push_run("step-200", ["mlflow:http://tracker", "wandb:proj"])
    assert [t.status for t in again] == ["already", "logged"]
    assert [kind for kind, *_ in sent] == ["mlflow", "wandb"]
    assert push_run("step-200", "wandb:proj")[0].status == "already"


def test_a_stopped_run_is_not_logged_when_it_ends_but_can_be_pushed(
    sent: list[Any], quickstart_project: Path
) -> None:
    run_eval("configs/eval/quickstart.toml", name="s", model="mock/calculator", limit=2)
    doc = quickstart_project / ".osmosis" / "evals" / "s" / "results.json"
    data = json.loads(doc.read_text())
    data["summary"]["status"] = "stopped"
    doc.write_text(json.dumps(data))
    skipped = tracking.log_results(doc, [parse_destination("mlflow")], finished_only=True)
    assert skipped[0].status == "skipped" and "push it once it finishes" in str(skipped[0].error)
    assert not sent
    pushed = push_run("s", "mlflow")
    assert pushed[0].status == "logged" and sent[0][1].params["status"] == "stopped"


def test_a_running_run_cannot_be_pushed(sent: list[Any], quickstart_project: Path) -> None:
    run_eval("configs/eval/quickstart.toml", name="r", model="mock/calculator", limit=2)
    (quickstart_project / ".osmosis" / "evals" / "r" / "results.json").unlink()
    with pytest.raises(InvalidInputError, match="has no results document yet") as caught:
        push_run("r", "mlflow")
    assert caught.value.code == "RUN_NOT_FINISHED"


def test_the_record_is_never_written_through_a_planted_link(
    sent: list[Any], quickstart_project: Path, tmp_path: Path
) -> None:
    run_eval("configs/eval/quickstart.toml", name="l", model="mock/calculator", limit=1)
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    (quickstart_project / ".osmosis" / "evals" / "l" / "trackers.json").symlink_to(victim)
    push_run("l", "mlflow")
    assert victim.read_text() == "keep me"


def test_a_suite_sends_each_entry_under_its_own_prefix(
    sent: list[Any], quickstart_project: Path
) -> None:
    from osmosis_local_runner.api import run_suite

    suite = run_suite("configs/eval/suite.toml", limit=1, log_to="trackio:suites", step=3)
    names = [payload.name for _, payload, _, _ in sent]
    assert names == list(suite.entries)
    first = sent[0][1]
    assert all(key.startswith(f"eval/{first.name}/") for key in first.metrics)
    entries = json.loads((suite.path / "suite.json").read_text())["entries"]
    assert all(e["trackers"][0]["status"] == "logged" for e in entries)


def test_the_library_warns_of_a_failed_tracker(
    sent: list[Any], quickstart_project: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level("WARNING", logger="osmosis_local_runner"):
        run_eval(
            "configs/eval/quickstart.toml",
            name="w",
            model="mock/calculator",
            limit=1,
            log_to="mlflow:http://fail.example",
        )
    assert "not logged to mlflow:http://fail.example" in caplog.text


def test_the_hub_gets_every_attempt_whole_where_trackers_get_a_capped_table(
    quickstart_project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pq = pytest.importorskip("pyarrow.parquet")
    import io

    from osmosis_local_runner.trackers import hub_sink, payload

    run_eval("configs/eval/quickstart.toml", name="all", model="mock/calculator", limit=3)
    monkeypatch.setattr(payload, "MAX_TABLE_ROWS", 2)
    monkeypatch.setattr(payload, "MAX_CELL", 10)
    monkeypatch.setattr(hub_sink, "BATCH", 4)  # several batches
    found = payload_of(load_run("all")._file, "all", "id")
    assert len(found.rows) == 2 and found.truncated_rows == 7
    assert all(len(cells[-1]) <= 10 for cells in found.rows)  # transcripts capped
    table = pq.read_table(io.BytesIO(hub_sink._parquet(found)))
    assert table.num_rows == 9 and min(len(t) for t in table["transcript"].to_pylist()) > 10


def test_a_payload_that_cannot_be_built_fails_the_trackers_not_the_run(
    sent: list[Any], quickstart_project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("a bug in the payload")

    monkeypatch.setattr(tracking, "payload_of", broken)
    result = run_eval(
        "configs/eval/quickstart.toml",
        name="p",
        model="mock/calculator",
        limit=1,
        log_to=["mlflow", "wandb"],
    )
    assert result.status == "finished" and not sent
    record = json.loads((result.path.parent / "trackers.json").read_text())["destinations"]
    assert {v["status"] for v in record.values()} == {"failed"}
    assert "a bug in the payload" in record["wandb"]["error"]
