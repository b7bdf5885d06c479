"""Speed and memory of the local runner and the CLI, as ratios to baselines measured
in the same run. Writes docs/benchmarks.md.

    python bench/run_benchmarks.py            # ~1-2 minutes on 2 cores

Nothing here is asserted in tests: numbers depend on the machine.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.baselines import (  # noqa: E402  (after the path is set)
    CONCURRENCY,
    Stub,
    cold_aiohttp,
    make_dataset,
    model_client_loop,
    raw_aiohttp,
    raw_httpx,
)

TRIALS = 5


def runner_rate(
    url: str | None,
    data: Path,
    out: Path,
    *,
    journal: bool = True,
    model: str = "served",
    batch: int = CONCURRENCY,
) -> tuple[float, float]:
    """(steady-state attempts/s, end-to-end attempts/s).

    Steady state runs from the 2nd window's end to the start of the last one: it
    leaves out connection set-up and the final partial window, as the raw
    baseline does (it warms up first).
    """
    from osmosis_client.llm.providers import resolve_target
    from osmosis_client.rollout import AgentWorkflow
    from osmosis_local_runner.run.execute.eval_fns import EvalFn
    from osmosis_local_runner.run.execute.runner import Runner
    from osmosis_local_runner.run.request.spec import RunSpec
    from osmosis_local_runner.run.session import journal as journal_mod

    class Workflow(AgentWorkflow):
        async def run(self, ctx: Any) -> None:
            await ctx.chat(ctx.prompt)

    async def grade(ctx: Any) -> float:
        return 1.0 if ctx.solution_str == ctx.ground_truth else 0.0

    original = journal_mod.Journal.append
    if not journal:
        journal_mod.Journal.append = lambda self, record: None  # type: ignore[method-assign]
    try:
        spec = RunSpec(
            model=resolve_target(model, base_url=url, env={}),
            dataset=data,
            workflow=Workflow(),
            eval_fns=[EvalFn("grader", grade, "grader", True)],
            output=out,
            batch_size=batch,
            probe=True,  # as the CLI does: the endpoint probe rides along with the first wave
        )
        marks: dict[int, float] = {}
        total = sum(1 for _ in data.open())
        first, last = 2 * batch, total - batch

        def on_progress(p: Any) -> None:
            if p.done in (first, last):
                marks[p.done] = time.perf_counter()

        started = time.perf_counter()
        result = asyncio.run(Runner(spec, on_progress=on_progress).run())
        elapsed = time.perf_counter() - started
    finally:
        journal_mod.Journal.append = original  # type: ignore[method-assign]
    summary = result.summary
    assert summary["errored_runs"] == 0, summary
    steady = (last - first) / (marks[last] - marks[first])
    return steady, summary["total_runs"] / elapsed


def agent_loop_rate(url: str, data: Path, out: Path, batch: int = CONCURRENCY) -> float:
    """Steady-state rollouts/s of a 0.2 agent loop (one tool call: two model calls each)."""
    from bench.workflows import CalculatorLoop
    from osmosis_client.llm.providers import resolve_target
    from osmosis_local_runner.run.execute.eval_fns import EvalFn
    from osmosis_local_runner.run.execute.runner import Runner
    from osmosis_local_runner.run.kinds.agent_loop import AgentLoopRollout
    from osmosis_local_runner.run.request.spec import RunSpec

    async def exact(solution_str: str, ground_truth: str, extra_info: Any = None) -> float:
        return 1.0 if solution_str == ground_truth else 0.0

    spec = RunSpec(
        model=resolve_target("served", base_url=url, env={}),
        dataset=data,
        rollout=AgentLoopRollout(CalculatorLoop()),
        eval_fns=[EvalFn("exact", exact, "simple", True)],
        output=out,
        batch_size=batch,
    )
    marks: dict[int, float] = {}
    total = sum(1 for _ in data.open())
    first, last = 2 * batch, total - batch

    def on_progress(p: Any) -> None:
        if p.done in (first, last):
            marks[p.done] = time.perf_counter()

    result = asyncio.run(Runner(spec, on_progress=on_progress).run())
    summary = result.summary
    assert summary["errored_runs"] == 0, summary
    assert summary["eval_fns"]["exact"]["mean"] == 1.0, summary
    return (last - first) / (marks[last] - marks[first])


def rss_of(code: str) -> float:
    """Peak RSS (MB) of a fresh interpreter running ``code``, measured through scale.py's
    small middle process: Linux keeps the high-water mark of the memory a process replaced
    at exec, so a child spawned (vfork) from this large process would report ours."""
    from bench.scale import WRAPPER

    out = subprocess.run(
        [sys.executable, "-c", WRAPPER, sys.executable, "-c", code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    return int(out.stdout.strip().splitlines()[-1]) / 1024


def main() -> None:
    if len(sys.argv) == 3 and sys.argv[1] == "--write-from":  # the page again, from a file
        from bench.writeup import write_report

        write_report(
            json.loads(Path(sys.argv[2]).read_text()), trials=TRIALS, concurrency=CONCURRENCY
        )
        return
    results: dict[str, Any] = {}
    # --reuse fixed_cost,server_mode,edit_loop,scale,html_report: those slow sections are carried over
    # from the last run's bench/last-results.json (the page says so) instead of re-measured
    reuse = sys.argv[2].split(",") if len(sys.argv) == 3 and sys.argv[1] == "--reuse" else []
    saved = ROOT / "bench" / "last-results.json"
    if reuse:
        previous = json.loads(saved.read_text())
        results.update({key: previous[key] for key in reuse})
        results["reused"] = reuse
    tmp = Path(tempfile.mkdtemp(prefix="osmosis-bench-"))
    data = make_dataset(tmp / "rows.jsonl", 20000)

    def checkpoint() -> None:  # each section kept as it ends: --reuse picks up after a failure
        saved.write_text(json.dumps(results, indent=2) + "\n")

    stub = Stub()
    try:
        asyncio.run(raw_aiohttp(stub.url, 2000))  # warm the stub
        counter = iter(range(1000))
        loops_data = make_dataset(tmp / "loops.jsonl", 10000)
        raws, hxs, withj, withoutj, loops, clients = [], [], [], [], [], []
        for _ in range(TRIALS):  # interleaved, so drifts hit every variant alike
            raws.append(asyncio.run(raw_aiohttp(stub.url, 20000)))
            clients.append(asyncio.run(model_client_loop(stub.url, 20000)))
            withj.append(runner_rate(stub.url, data, tmp / f"j{next(counter)}.json")[0])
            withoutj.append(
                runner_rate(stub.url, data, tmp / f"n{next(counter)}.json", journal=False)[0]
            )
            loops.append(agent_loop_rate(stub.url, loops_data, tmp / f"l{next(counter)}.json"))
        hxs.append(asyncio.run(raw_httpx(stub.url, 2000)))
        results["runner_e2e"] = runner_rate(stub.url, data, tmp / "e2e.json")[1]
        from bench.cpu_profile import measure as measure_cpu

        results["cpu"] = measure_cpu(stub.url)
    finally:
        stub.close()
    results["raw_aiohttp"] = statistics.median(raws)
    results["raw_httpx"] = statistics.median(hxs)
    results["model_client"] = statistics.median(clients)
    results["runner"] = statistics.median(withj)
    results["runner_no_journal"] = statistics.median(withoutj)
    results["runner_ratio"] = statistics.median(j / r for j, r in zip(withj, raws, strict=True))
    results["agent_loop"] = statistics.median(loops)
    # two model calls per rollout: the ceiling is half the bare loop's request rate
    results["agent_loop_ratio"] = statistics.median(
        loop / (r / 2) for loop, r in zip(loops, raws, strict=True)
    )
    results["journal_cost"] = statistics.median(
        1 - j / n for j, n in zip(withj, withoutj, strict=True)
    )

    slow = Stub(latency=0.2)
    try:
        data_slow = make_dataset(tmp / "slow.jsonl", CONCURRENCY * 20)
        data_short = make_dataset(tmp / "short.jsonl", CONCURRENCY * 10)
        asyncio.run(raw_aiohttp(slow.url, CONCURRENCY * 2))  # warm the stub
        rate_slow, rate_slow_e2e = runner_rate(slow.url, data_slow, tmp / "slow.json")
        results["runner_200ms_e2e"] = rate_slow_e2e
        results["raw_200ms"] = asyncio.run(raw_aiohttp(slow.url, CONCURRENCY * 20))
        shorts, colds = [], []
        for i in range(TRIALS):  # interleaved, each a whole job from a cold start
            colds.append(asyncio.run(cold_aiohttp(slow.url, CONCURRENCY * 10)))
            shorts.append(runner_rate(slow.url, data_short, tmp / f"short{i}.json")[1])
        results["runner_short_e2e"] = statistics.median(shorts)
        results["cold_short"] = statistics.median(colds)
    finally:
        slow.close()
    results["runner_200ms"] = rate_slow
    results["ideal_200ms"] = CONCURRENCY / 0.2

    big = make_dataset(tmp / "big.jsonl", 100_000)
    baseline_rss = rss_of(
        "import osmosis_local_runner.run.execute.runner, osmosis_client.llm.client, aiohttp"
    )
    argv = [
        "osmosis",
        "eval",
        "-m",
        "bench.workflows:Calc",
        "-d",
        str(big),
        "--model",
        "mock/calculator",
        "--eval-fn",
        "bench.workflows:exact",
        "--batch-size",
        "64",
        "-q",
        "-o",
        str(tmp / "big.json"),
    ]
    run_rss = rss_of(
        f"import sys; sys.argv={argv!r}\n"
        "from osmosis_cli.main import main\ntry:\n    main()\nexcept SystemExit:\n    pass"
    )
    results["rss_baseline_mb"] = baseline_rss
    results["rss_100k_mb"] = run_rss

    from bench.startup import measure as measure_startup

    results.update(measure_startup())
    checkpoint()

    from bench.fixed_cost import compared as measure_fixed_cost

    if "fixed_cost" not in reuse:
        results["fixed_cost"] = measure_fixed_cost()
        checkpoint()

    from bench.server_mode import measure as measure_server_mode

    if "server_mode" not in reuse:
        results["server_mode"] = measure_server_mode()
        checkpoint()

    from bench.edit_loop import measure as measure_edit_loop

    if "edit_loop" not in reuse:
        results["edit_loop"] = measure_edit_loop()
        checkpoint()

    from bench.large_window import measure as measure_large_window

    if "large_window" not in reuse:
        results["large_window"] = measure_large_window()
        checkpoint()

    from bench.scale import measure as measure_scale

    if "scale" not in reuse:
        results["scale"] = measure_scale()
        checkpoint()

    from bench.report import measure as measure_report

    if "html_report" not in reuse:
        results["html_report"] = measure_report()
        checkpoint()

    from bench.writeup import write_report

    saved.write_text(json.dumps(results, indent=2) + "\n")
    print(json.dumps(results, indent=2))
    write_report(results, trials=TRIALS, concurrency=CONCURRENCY)


if __name__ == "__main__":
    main()
