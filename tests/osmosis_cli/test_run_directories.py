"""``eval run`` keeps each run in ``.osmosis/evals/NAME/`` — the published layout —
with the published flags: ``--name`` continues, ``--fresh`` archives, ``--retry-failed``
runs the failures again, ``--rows``, ``--secrets-file``; a finished run named again is
never an error."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from osmosis_client.errors import InvalidInputError
from osmosis_local_runner.run.session.rundir import RunDirectory
from tests.osmosis_cli.conftest import Invoke

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "quickstart"
CONFIG = "configs/eval/quickstart.toml"
RUN = ["eval", "run", CONFIG, "-q"]

FLAKY = """
import os
from osmosis_client.rollout import AgentWorkflow, Grader


class Flaky(AgentWorkflow):
    async def run(self, ctx):
        if ctx.prompt[-1]["content"] in os.environ.get("FAIL_PROMPTS", "").split("|"):
            raise RuntimeError("this row is broken today")
        if os.environ.get("NEEDS_SECRET") and os.environ.get("MY_SECRET") != "s3cr3t-value":
            raise RuntimeError("the secret did not arrive")
        return [*ctx.prompt, await ctx.chat(ctx.prompt)]


class Always(Grader):
    async def grade(self, ctx):
        return 1.0
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "qs"
    shutil.copytree(EXAMPLE, root, ignore=shutil.ignore_patterns(".osmosis"))
    (root / "rollouts" / "flaky").mkdir()
    (root / "rollouts" / "flaky" / "main.py").write_text(FLAKY)
    config = (root / CONFIG).read_text().replace('rollout = "calculator"', 'rollout = "flaky"')
    (root / "configs" / "eval" / "flaky.toml").write_text(config.replace("n = 3", "n = 1"))
    monkeypatch.chdir(root)
    return root


def runs(project: Path) -> list[Path]:
    return sorted(p for p in (project / ".osmosis" / "evals").iterdir() if p.name != ".locks")


def jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_a_run_lives_in_its_directory_in_the_published_layout(
    invoke: Invoke, project: Path
) -> None:
    result = invoke(*RUN, "--name", "first", "--rows", "2,5-6")
    assert result.exit_code == 0, result.stderr
    run = project / ".osmosis" / "evals" / "first"
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["run_name"] == "first" and len(manifest["local_run_id"]) == 32
    inputs = manifest["inputs"]
    assert inputs["dataset"]["selected_source_rows"] == "2,5-6" and inputs["n"] == 3
    assert inputs["rollout"] == {
        "name": "calculator",
        "entrypoint": "main.py",
        "source_digest": inputs["rollout"]["source_digest"],
    }
    assert manifest["provenance"]["config_path"] == CONFIG
    index = jsonl(run / "index.jsonl")
    assert (run / "summary.jsonl").read_bytes() == (run / "index.jsonl").read_bytes()
    assert [(r["row_index"], r["run_index"]) for r in index] == [
        (row, k) for row in range(3) for k in range(3)
    ]  # the published meaning: the place among the chosen rows
    sources = {r["row_index"]: r["source_row_index"] for r in jsonl(run / "events.jsonl")}
    assert sources == {0: 2, 1: 5, 2: 6}
    assert json.loads((run / "progress.json").read_text()) == {
        "total_runs": 9,
        "sampled_rows": 3,
        "total_dataset_rows": 50,
    }
    metrics = json.loads((run / "metrics.json").read_text())
    summary = metrics["summary"]
    assert metrics["eval_run"]["status"] == "finished"
    assert summary["passed"] + summary["failed"] == summary["completed_samples"] == 9
    assert summary["passed"] == sum(1 for r in index if r["reward"] >= 1.0)
    assert [p["k"] for p in summary["pass_at_k"]] == [1, 2]
    assert oct((run / "index.jsonl").stat().st_mode)[-3:] == "600"
    results = json.loads((run / "results.json").read_text())  # ours, inside
    assert [row["row_index"] for row in results["rows"]] == [2, 5, 6]


def test_a_finished_run_named_again_is_shown_not_rerun(invoke: Invoke, project: Path) -> None:
    assert invoke(*RUN, "--name", "again").exit_code == 0
    run = project / ".osmosis" / "evals" / "again"
    before = {p.name: p.stat().st_mtime_ns for p in run.iterdir()}
    human = invoke(*RUN, "--name", "again")
    assert human.exit_code == 0, human.stderr
    assert "already complete; nothing ran" in human.stderr and "PASS@1" in human.stdout
    machine = invoke(*RUN, "--name", "again", "--json")
    document = machine.json()
    assert (document["status"], document["resource"]["dispatched"]) == ("success", 0)
    assert document["resource"]["summary"]["total_runs"] == 60
    assert {p.name: p.stat().st_mtime_ns for p in run.iterdir()} == before
    changed = invoke(*RUN, "--name", "again", "--limit", "3")
    assert changed.exit_code == 2
    assert "complete with other settings (limit: 20 → 3)" in changed.stderr
    assert "--fresh" in changed.stderr


def test_fresh_archives_and_starts_over(invoke: Invoke, project: Path) -> None:
    assert invoke(*RUN, "--name", "x", "--limit", "2").exit_code == 0
    assert invoke(*RUN, "--name", "x", "--limit", "3", "--fresh").exit_code == 0
    names = [p.name for p in runs(project)]
    assert names[0] == "x" and names[1].startswith("x.archive-") and len(names) == 2
    kept = json.loads((runs(project)[1] / "results.json").read_text())
    assert kept["summary"]["total_rows"] == 2  # nothing is ever deleted
    assert json.loads((runs(project)[0] / "results.json").read_text())["summary"]["total_rows"] == 3


def test_an_interrupted_run_continues_under_its_name(invoke: Invoke, project: Path) -> None:
    assert invoke(*RUN, "--name", "cut", "--limit", "4").exit_code == 0
    run = project / ".osmosis" / "evals" / "cut"
    (run / "results.json").unlink()  # killed before the document: the journal is left
    run_id = json.loads((run / "manifest.json").read_text())["local_run_id"]
    again = invoke(*RUN, "--name", "cut", "--json")  # no --limit: the journal's is used
    assert again.exit_code == 0, again.stderr
    resource = again.resource()
    assert resource["local_run_id"] == run_id and resource["run_name"] == "cut"
    assert resource["summary"]["total_runs"] == 12 and resource["output_path"].endswith("cut")


def test_retry_failed_runs_only_the_failures_again(
    invoke: Invoke, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAIL_PROMPTS", "What is 43 + 21?|What is 52 - 85?")
    args = ["eval", "run", "configs/eval/flaky.toml", "-q", "--name", "f", "--limit", "5"]
    first = invoke(*args)
    assert first.exit_code == 0, first.stderr
    assert "Run the errored attempts again: osmosis eval run configs/eval/flaky.toml --name f" in (
        first.stderr
    )
    run = project / ".osmosis" / "evals" / "f"
    assert [r["status"] for r in jsonl(run / "index.jsonl")].count("failed") == 2
    assert "ERROR [rollout] row 0 run 0: " in (run / "logs.txt").read_text()
    monkeypatch.delenv("FAIL_PROMPTS")
    retried = invoke(*args, "--retry-failed", "--json")
    assert retried.exit_code == 0, retried.stderr
    after = jsonl(run / "index.jsonl")
    assert [r["status"] for r in after] == ["success"] * 5
    journal = (run / "results.json.journal.jsonl").read_text().splitlines()
    assert len(journal) == 1 + 5 + 2  # the header, the first 5 attempts, the 2 run again
    assert retried.resource()["metrics"]["summary"]["passed"] == 5


def test_rows_out_of_range_and_bad_specs_are_one_line(invoke: Invoke, project: Path) -> None:
    outside = invoke(*RUN, "--rows", "3,55-56")
    assert outside.exit_code == 2
    assert "rows [55, 56] are selected but arithmetic.jsonl has 50 rows" in outside.stderr
    assert "(valid indices are 0-49)" in outside.stderr and "--rows" in outside.stderr
    for bad in ("x", "5-2", "1,,2"):
        result = invoke(*RUN, "--rows", bad)
        assert result.exit_code == 2 and result.stderr.count("\n") == 1, result.stderr
    evals = project / ".osmosis" / "evals"
    assert not evals.exists() or runs(project) == []  # nothing was left behind


def test_a_busy_name_is_refused(invoke: Invoke, project: Path) -> None:
    with RunDirectory(project / ".osmosis" / "evals", "busy").locked():
        result = invoke(*RUN, "--name", "busy")
    assert result.exit_code == 2
    assert "another `osmosis eval run` is running 'busy'" in result.stderr
    assert invoke(*RUN, "--name", "bad/name").exit_code == 2


def test_output_directory_and_the_published_flags(invoke: Invoke, project: Path) -> None:
    result = invoke(
        *RUN,
        "-o",
        "elsewhere",
        "--name",
        "o",
        "--dataset-file",
        "data/arithmetic.jsonl",
        "--max-in-flight",
        "2",
        "--limit",
        "2",
        "-y",
        "--log-samples",
    )
    assert result.exit_code == 0, result.stderr
    assert (project / "elsewhere" / "o" / "results.json").is_file()
    assert "2 in flight" in result.stderr and "--log-samples is not needed" in result.stderr
    needs_port = invoke(*RUN, "--advertise-url", "http://host.docker.internal:9000")
    assert needs_port.exit_code == 2 and "needs --listener-port" in needs_port.stderr
    plain = invoke(*RUN, "--advertise-url", "http://10.0.0.5:9000", "--listener-port", "1")
    assert "INSECURE" not in plain.stderr and "unencrypted" in plain.stderr


def test_secrets_file_fills_the_configs_secrets(
    invoke: Invoke, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = project / "configs" / "eval" / "flaky.toml"
    config.write_text(config.read_text() + '\n[secrets]\nrequired = ["MY_SECRET"]\n')
    monkeypatch.setenv("NEEDS_SECRET", "1")
    monkeypatch.delenv("MY_SECRET", raising=False)
    (project / "s.env").write_text("# local secrets\nMY_SECRET=s3cr3t-value\nOTHER=x\n")
    args = ["eval", "run", "configs/eval/flaky.toml", "-q", "--limit", "2", "--json"]
    from_file = invoke(*args, "--secrets-file", "s.env")
    assert from_file.exit_code == 0, from_file.stderr
    assert from_file.resource()["summary"]["errored_runs"] == 0
    assert "s3cr3t-value" not in from_file.stdout + from_file.stderr
    assert "OTHER" not in os.environ  # only the names the config asks for
    from_stdin = invoke(*args, "--secrets-file", "-", input="MY_SECRET=s3cr3t-value\n")
    assert from_stdin.resource()["summary"]["errored_runs"] == 0
    without = invoke(*args)  # refused before anything runs, naming what is missing
    assert without.exit_code == 2
    error = without.error()
    assert error["code"] == "INTERACTIVE_REQUIRED" and error["details"]["missing"] == ["MY_SECRET"]
    assert "--secrets-file" in error["hint"]
    monkeypatch.delenv("MY_SECRET", raising=False)
    from osmosis_local_runner import run_eval

    library = run_eval(  # the library door: the same values, in the request
        "configs/eval/flaky.toml", limit=2, name="lib", secrets={"MY_SECRET": "s3cr3t-value"}
    )
    assert library.summary.errored_runs == 0
    with pytest.raises(InvalidInputError) as refused:
        run_eval("configs/eval/flaky.toml", limit=2, name="lib2", secrets={})
    assert refused.value.code == error["code"]  # refused as the CLI refused it
    assert refused.value.data["missing"] == ["MY_SECRET"]
