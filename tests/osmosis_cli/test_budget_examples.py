"""The documented budget examples (issue 51), through the CLI as the docs print them:
``thinking.toml --max-cost 0.0005`` stops within its budget plus the attempts in flight
(it ran all 60 attempts at 11× its budget, then offered to "run the rest" of a finished
run); resumed as ``eval info`` prints it, the run goes on and finishes; resumed with the
same budget, nothing runs."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

from tests.osmosis_cli.conftest import Invoke

CONFIG = "configs/eval/thinking.toml"
BATCH = 8  # the example config's batch_size


def _journal(project: Path) -> list[dict[str, object]]:
    path = project / ".osmosis/evals/budget/results.json.journal.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()[1:]]


def test_the_documented_budget_example_stops_within_its_budget_and_resumes_as_printed(
    quickstart_project: Path, invoke: Invoke
) -> None:
    stopped = invoke("eval", "run", CONFIG, "--max-cost", "0.0005", "--name", "budget")
    assert stopped.exit_code == 1 and "max_cost" in stopped.stderr
    assert "--max-cost" in stopped.stderr  # the hint resumes with a budget to finish
    costs = [float(r["usage"]["cost_usd"]) for r in _journal(quickstart_project)]  # type: ignore[index]
    totals = [sum(costs[:i]) for i in range(1, len(costs) + 1)]
    reached = next(i for i, total in enumerate(totals, 1) if total >= 0.0005)
    assert len(costs) <= reached + BATCH - 1 < 60
    document = json.loads((quickstart_project / ".osmosis/evals/budget/results.json").read_text())
    assert document["summary"]["stopped_reason"] == "budget"

    again = invoke("eval", "run", CONFIG, "--name", "budget")  # the same (kept) budget
    assert again.exit_code == 1 and len(_journal(quickstart_project)) == len(costs)

    info = invoke("eval", "info", "--local", "budget")
    assert "stopped:   its cost budget" in info.stdout
    line = next(x for x in info.stdout.splitlines() if x.startswith("resume:"))
    words = shlex.split(line.partition(":")[2])
    assert words[:2] == ["osmosis", "eval"] and "--max-cost" in words
    resumed = invoke(*words[1:])  # run as printed
    assert resumed.exit_code == 0, resumed.stderr
    assert len(_journal(quickstart_project)) == 60
    finished = invoke("eval", "info", "--local", "budget")
    assert "status:    finished" in finished.stdout and "resume:" not in finished.stdout
