"""``--log-to`` / ``--log-step`` and ``osmosis eval push`` (issue 47): the command line
and ``run_eval(log_to=…)`` send the same thing and keep the same record; a tracker's
failure is a warning naming the push that sends it later, never the run's failure."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import quickstart_run
from tests.osmosis_cli.conftest import Invoke
from tests.osmosis_local_runner.test_trackers import sent  # the recording sinks

__all__ = ["sent"]
RUN = quickstart_run(2)


def _record(project: Path, name: str) -> dict[str, Any]:
    path = project / ".osmosis" / "evals" / name / "trackers.json"
    found = json.loads(path.read_text())["destinations"]
    for entry in found.values():
        entry.pop("local_run_id")
        entry.pop("run_id", None)
    return found  # type: ignore[no-any-return]


def test_both_doors_send_the_same_metrics_and_keep_the_same_record(
    invoke: Invoke, quickstart_project: Path, sent: list[Any]
) -> None:
    from osmosis_local_runner.api import run_eval

    result = invoke(
        "--json", *RUN, "--name", "cli", "--log-to", "mlflow:http://tracker", "--log-step", "7"
    )
    assert result.exit_code == 0, result.stderr
    trackers = result.resource()["trackers"]
    assert trackers[0]["status"] == "logged" and trackers[0]["step"] == 7
    run_eval(
        "configs/eval/quickstart.toml",
        model="mock/calculator",
        limit=2,
        name="lib",
        log_to="mlflow:http://tracker",
        step=7,
    )
    (_, cli, target, step), (_, lib, *_) = sent
    assert (target, step) == ("http://tracker", 7)
    assert cli.metrics.keys() == lib.metrics.keys()
    assert {k: v for k, v in cli.metrics.items() if "duration" not in k} == {
        k: v for k, v in lib.metrics.items() if "duration" not in k
    }
    assert cli.params | {"run_name": "lib", "created_at": "…"} == lib.params | {"created_at": "…"}
    assert _record(quickstart_project, "cli") == _record(quickstart_project, "lib")
    # where a run was sent, said by its info
    info = invoke("eval", "info", "--local", "cli")
    assert "sent to:   mlflow:http://tracker: logged" in info.stdout, info.stdout
    data = invoke("--json", "eval", "info", "--local", "cli").data()
    assert data["trackers"] == {"mlflow:http://tracker": "logged"}


def test_a_failed_tracker_warns_with_the_push_and_the_run_still_passes(
    invoke: Invoke, quickstart_project: Path, sent: list[Any]
) -> None:
    result = invoke(*RUN, "--name", "n", "--log-to", "wandb:fail-here")
    assert result.exit_code == 0, result.stderr
    assert "not logged to wandb:fail-here (ConnectionError: cannot reach fail-here)" in (
        result.stderr
    )
    assert "send it later: osmosis eval push n --to wandb:fail-here" in result.stderr
    pushed = invoke("--json", "eval", "push", "n", "--to", "wandb:other", "--step", "3")
    assert pushed.exit_code == 0, pushed.stderr
    assert pushed.resource()["trackers"][0]["status"] == "logged"
    again = invoke("eval", "push", "n", "--to", "wandb:other")
    assert "Already logged to wandb:other" in again.stderr and len(sent) == 1
    failing = invoke("eval", "push", "n", "--to", "wandb:fail-again")
    assert failing.exit_code == 1 and "0 of 1 tracker(s) have the run" in failing.stderr


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--log-to", "mlfow"], "unknown tracker 'mlfow'"),
        (["--log-to", "wandb:a b"], "not a wandb project name"),
    ],
)
def test_a_misspelt_tracker_is_exit_2_before_the_run(
    invoke: Invoke, quickstart_project: Path, args: list[str], said: str
) -> None:
    result = invoke(*RUN, "--name", "x", *args)
    assert result.exit_code == 2 and said in result.stderr
    assert "Traceback" not in result.stderr
    assert not (quickstart_project / ".osmosis" / "evals" / "x").exists()
