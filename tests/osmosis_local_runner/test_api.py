"""The runner as a library (issue 35): run_eval / arun_eval / load_run / compare_runs in
every mode a training script or a notebook uses — a plain script, inside a running event
loop, two at once, a hundred in one process, cancelled and resumed, objects in memory —
and CLI-made runs loaded and compared. The library never prints."""

from __future__ import annotations

import asyncio
import gc
import json
import os
import threading
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from osmosis_client.errors import InvalidInputError, OsmosisError
from osmosis_client.rollout import AgentWorkflow
from osmosis_local_runner import (
    EvalResult,
    RunProgress,
    arun_eval,
    compare_runs,
    load_run,
    run_eval,
    run_suite,
)

CONFIG = "configs/eval/quickstart.toml"
ROWS = [{"user_prompt": f"What is {i} + {i}?", "ground_truth": str(2 * i)} for i in range(6)]


@pytest.fixture
def project(quickstart_project: Path) -> Path:
    return quickstart_project


class Calculator(AgentWorkflow):
    async def run(self, ctx: Any) -> Any:
        return [*ctx.prompt, await ctx.chat(ctx.prompt)]


def exact(solution_str: str, ground_truth: str, extra_info: Any = None) -> float:
    return 1.0 if solution_str.strip().endswith(ground_truth) else 0.0


def test_a_config_runs_by_name_and_reads_back_typed(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    seen: list[RunProgress] = []
    result = run_eval(
        CONFIG, name="ckpt-1", model="mock/calculator", limit=4, n=2, on_progress=seen.append
    )
    assert isinstance(result, EvalResult) and result.name == "ckpt-1"
    assert result.path == project / ".osmosis/evals/ckpt-1/results.json"
    assert result.status == "finished"
    summary = result.summary
    assert summary.total_rows == 4 and summary.total_runs == 8 and summary.errors == 0
    assert summary.eval_fns["grader"].mean == 1.0 and summary.mean == 1.0
    assert summary.eval_fns["grader"].pass_at_k[1] == 1.0
    assert result.pass_at_k() == {1: 1.0, 2: 1.0}
    rows = list(result.rows())
    assert len(rows) == 4 and all(len(r.attempts) == 2 for r in rows)
    first = rows[0].attempts[0]
    assert first.success and first.scores["grader"] == 1.0 and first.answer
    assert first.messages[-1]["role"] == "assistant"
    assert rows[0].prompt and rows[0].expected is not None
    assert result.to_dict()["summary"]["total_runs"] == 8
    assert (project / ".osmosis/evals/ckpt-1/manifest.json").is_file()  # the CLI's layout
    assert [p.completed for p in seen][-1] == 8 and seen[-1].total == 8
    assert capsys.readouterr() == ("", "")  # the library never prints
    again = run_eval(CONFIG, name="ckpt-1", model="mock/calculator", limit=4, n=2)
    assert again.summary == summary  # finished: returned again, nothing ran
    assert load_run("ckpt-1").summary == summary
    assert load_run(project / ".osmosis/evals/ckpt-1").name == "ckpt-1"


def test_objects_in_memory_run_with_nothing_on_disk_but_the_run(tmp_path: Path) -> None:
    result = run_eval(
        workflow=Calculator,
        dataset=ROWS,
        eval_fns=[exact],
        model="mock/calculator",
        n=2,
        batch_size=4,
        root=tmp_path,
    )
    assert result.summary.total_rows == 6 and result.summary.total_runs == 12
    assert result.summary.eval_fns["exact"].mean == 1.0
    assert result.path.parent.parent == tmp_path / ".osmosis" / "evals"
    single = run_eval(
        workflow=Calculator(),
        dataset=ROWS[:2],
        eval_fns=[exact],
        model="mock/calculator",
        output=tmp_path / "one.json",
    )
    assert single.path == tmp_path / "one.json" and single.summary.total_runs == 2


def test_the_sync_call_works_inside_a_running_event_loop(tmp_path: Path) -> None:
    """A notebook cell runs in an event loop: run_eval must still work there."""

    async def cell() -> EvalResult:
        return run_eval(
            workflow=Calculator,
            dataset=ROWS,
            eval_fns=[exact],
            model="mock/calculator",
            root=tmp_path,
        )

    assert asyncio.run(cell()).summary.total_runs == 6


def test_two_evaluations_at_once_under_gather(tmp_path: Path) -> None:
    async def both() -> list[EvalResult]:
        return list(
            await asyncio.gather(
                *(
                    arun_eval(
                        workflow=Calculator,
                        dataset=ROWS,
                        eval_fns=[exact],
                        name=name,
                        model="mock/calculator@5",
                        batch_size=2,
                        root=tmp_path,
                    )
                    for name in ("ckpt-100", "ckpt-200")
                )
            )
        )

    a, b = asyncio.run(both())
    assert (a.name, b.name) == ("ckpt-100", "ckpt-200")
    assert a.summary.total_runs == b.summary.total_runs == 6
    assert compare_runs(a, b).to_dict()["eval_fns"]["exact"]["diff"] == 0.0


def _open_fds() -> int:
    return len(os.listdir("/proc/self/fd")) if os.path.isdir("/proc/self/fd") else 0


def test_a_hundred_checkpoints_in_one_process_leak_nothing(tmp_path: Path) -> None:
    def one(step: int) -> None:
        run_eval(
            workflow=Calculator,
            dataset=ROWS[:2],
            eval_fns=[exact],
            name=f"step-{step}",
            model="mock/calculator",
            root=tmp_path,
        )

    for step in range(10):  # warm: imports, caches
        one(step)
    gc.collect()
    fds, threads = _open_fds(), threading.active_count()
    tracemalloc.start()
    try:
        start = tracemalloc.get_traced_memory()[0]
        for step in range(10, 100):
            one(step)
        gc.collect()
        grown = tracemalloc.get_traced_memory()[0] - start
    finally:
        tracemalloc.stop()
    assert _open_fds() <= fds and threading.active_count() <= threads
    assert grown < 2 << 20, f"grew {grown >> 10} KiB over 90 runs"


def _children() -> int:
    """Child processes of this process (every thread's), from /proc."""
    tasks = Path("/proc/self/task")
    if not tasks.is_dir():
        return 0
    return sum(len((t / "children").read_text().split()) for t in tasks.iterdir())


def test_a_hundred_config_runs_in_a_git_checkout_on_a_loopback_endpoint_leak_nothing(
    project: Path,
) -> None:
    """Issue 43: each run in a git checkout left a ``git cat-file`` child and its pipes
    (30 runs: 7 → 49 open fds, 15 children); a model endpoint's connections too."""
    from tests.gitrepo import git
    from tests.stub_openai import StubOpenAI

    git(project, "init", "-q")
    git(project, "add", "-A")
    git(project, "commit", "-qm", "quickstart")
    with StubOpenAI() as stub:

        def one(step: int) -> None:
            run_eval(
                CONFIG, name=f"step-{step}", model="stub-model", base_url=stub.url, limit=2, n=1
            )

        for step in range(10):  # warm: imports, caches, the pool's first connections
            one(step)
        # no gc.collect() before counting: a training loop does not call it either, and
        # what the collector would reap (a repository's children) must not be left
        fds, threads, children = _open_fds(), threading.active_count(), _children()
        tracemalloc.start()
        try:
            start = tracemalloc.get_traced_memory()[0]
            for step in range(10, 100):
                one(step)
            counted = (_open_fds(), threading.active_count(), _children())
            gc.collect()
            grown = tracemalloc.get_traced_memory()[0] - start
        finally:
            tracemalloc.stop()
        assert counted <= (fds, threads, children)
    manifest = json.loads((project / ".osmosis/evals/step-99/manifest.json").read_text())
    assert manifest["provenance"]["git_head"]  # the checkout was inspected every time
    assert grown < 4 << 20, f"grew {grown >> 10} KiB over 90 runs"


def test_cancelling_stops_and_resume_finishes_each_attempt_once(tmp_path: Path) -> None:
    rows = [{"user_prompt": f"What is {i} + 1?", "ground_truth": str(i + 1)} for i in range(30)]
    options: dict[str, Any] = dict(
        workflow=Calculator,
        dataset=rows,
        eval_fns=[exact],
        name="cut",
        model="mock/calculator@50",
        batch_size=3,
        root=tmp_path,
    )

    async def cancelled() -> None:
        progressed = asyncio.Event()

        def on_progress(update: RunProgress) -> None:
            if update.completed >= 6:
                progressed.set()

        task = asyncio.ensure_future(arun_eval(**options, on_progress=on_progress))
        await asyncio.wait_for(progressed.wait(), 30)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(task, 10)  # bounded: it stops within moments

    asyncio.run(cancelled())
    journal = tmp_path / ".osmosis/evals/cut/results.json.journal.jsonl"
    kept = [json.loads(line) for line in journal.read_text().splitlines()[1:]]
    assert 6 <= len(kept) < 30
    with pytest.raises(InvalidInputError) as unfinished:
        run_eval(**options)
    assert unfinished.value.code == "RESULTS_EXIST"
    unnamed = {k: v for k, v in options.items() if k != "name"}
    finished = run_eval(**unnamed, resume=True)  # no name: the newest unfinished run
    assert finished.name == "cut"
    assert finished.status == "finished" and finished.summary.total_runs == 30
    with pytest.raises(InvalidInputError) as nothing_left:
        run_eval(**unnamed, resume=True)
    assert nothing_left.value.code == "NOTHING_TO_RESUME"
    assert "--" not in (nothing_left.value.hint or "")  # the library names no CLI flag
    lines = [json.loads(line) for line in journal.read_text().splitlines()[1:]]
    keys = [(x["row_index"], x["run_index"]) for x in lines]
    assert len(keys) == len(set(keys)) == 30  # each attempt once: the finished ones kept


def test_cli_made_runs_load_and_compare_exactly_as_the_cli(project: Path) -> None:
    from typer.testing import CliRunner

    from osmosis_cli.main import main

    def cli(*args: str) -> str:
        runner = CliRunner()
        with runner.isolation() as (out, err, _):
            try:
                main(list(args))
            except SystemExit as exc:
                assert exc.code in (0, None), err.getvalue()
            return out.getvalue().decode()

    cli("eval", "run", CONFIG, "--name", "a", "--model", "mock/calculator", "--limit", "6", "-q")
    cli(
        "eval",
        "run",
        CONFIG,
        "--name",
        "b",
        "--model",
        "mock/flaky-calculator",
        "--limit",
        "6",
        "-q",
    )
    a, b = load_run("a"), load_run("b")
    assert a.summary.total_rows == b.summary.total_rows == 6
    document = json.loads(cli("--json", "eval", "compare", "a", "b"))
    assert compare_runs("a", "b").to_dict() == document["data"]
    assert compare_runs(a, b).to_dict() == document["data"]


def test_problems_are_typed_errors_with_the_clis_codes(tmp_path: Path) -> None:
    with pytest.raises(InvalidInputError) as unknown:
        run_eval(workflow=Calculator, dataset=ROWS, model="mock/calculator", bogus=1)
    assert unknown.value.code == "USAGE" and "bogus" in unknown.value.message
    with pytest.raises(OsmosisError) as missing:
        load_run("no-such-run", root=tmp_path)
    assert missing.value.code == "RUN_NOT_FOUND"
    with pytest.raises(OsmosisError) as nothing:
        run_eval(dataset=ROWS, model="mock/calculator", root=tmp_path)
    assert nothing.value.code == "USAGE"


def test_a_suite_runs_every_entry_and_reads_back(project: Path) -> None:
    from osmosis_local_runner import SuiteResult

    (project / "configs/eval/sweep.toml").write_text(
        'suite = "sweep"\nrollout = "calculator"\nentrypoint = "main.py"\n'
        'model_path = "mock/calculator"\ndataset = "arithmetic"\nlimit = 4\n\n'
        "[[ablation]]\n[ablation.sweep]\nn = [1, 2]\n"
    )
    with pytest.raises(InvalidInputError) as refused:  # typed: run_eval gives an EvalResult
        run_eval("configs/eval/sweep.toml")
    assert refused.value.code == "USAGE" and "run_suite" in (refused.value.hint or "")
    result = run_suite("configs/eval/sweep.toml", parallel=2)
    assert isinstance(result, SuiteResult) and result.status == "finished"
    assert result.path.parent == project / ".osmosis" / "suites"
    runs = sorted(entry.summary.total_runs for entry in result.entries.values())
    assert runs == [4, 8] and result.to_dict()["suite"] == "sweep"
