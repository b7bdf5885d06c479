"""Where an attempt's CPU goes: the runner's own work by stage, beside the bare client.

- the bare aiohttp loop's CPU per request (process time over a 0 ms stub run);
- the runner's CPU per attempt against the same stub (everything: HTTP included);
- the runner's own CPU per attempt, with the offline mock model (no HTTP at all), and
  its split by stage from a deterministic profile (cProfile's cumulative time of each
  stage's entry point, scaled to the unprofiled process time);
- decoding one answer (``answers.decode`` + ``parse_reply``), timed alone.

The claim checked on the page: the runner's own CPU per attempt (its stages plus the
decode) is no more than the bare client spends per request.
"""

from __future__ import annotations

import asyncio
import cProfile
import json
import pstats
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

#: interleaved trials of the bare loop and the mock run; their medians are compared
TRIALS = 3
#: the offline mock model making its answer: the model's work, not the runner's (in a
#: real run an HTTP call stands there, counted in the bare client's figure)
MOCK = "the mock model's answer (the model's work: not counted)"
#: stage → the entry points whose cumulative time is that stage; NESTED: a stage's entry
#: point called inside another's (its time is taken out of the outer one)
STAGES: dict[str, list[tuple[str, str]]] = {
    "dataset rows (read, decode, digest)": [("run/execute/dataset.py", "rows")],
    "context and workflow": [("kinds/native.py", "run")],
    "grading dispatch (eval fns called, scores checked)": [("run/execute/grading.py", "grade")],
    "record (the attempt as a record; its grading counted above)": [
        ("run/execute/recording.py", "record_attempt")
    ],
    "journal (the record as a line, written)": [("run/session/journal.py", "append")],
    "progress and bookkeeping": [("run/execute/runner.py", "_keep")],
    MOCK: [("llm/mock.py", "complete")],
}


NESTED = {
    "record (the attempt as a record; its grading counted above)": "grading dispatch (eval fns called, scores checked)",
    "context and workflow": MOCK,
}


def _cumulative(stats: pstats.Stats, path: str, name: str) -> float:
    total = 0.0
    for (filename, _, function), row in stats.stats.items():  # type: ignore[attr-defined]
        if function == name and filename.endswith(path):
            total += row[3]  # cumulative seconds
    return total


def _mock_run(data: Path, out: Path, profile: cProfile.Profile | None) -> tuple[float, int]:
    """(process seconds, attempts) of a whole mock run."""
    from bench.baselines import CONCURRENCY
    from osmosis_client.llm.providers import resolve_target
    from osmosis_client.rollout import AgentWorkflow
    from osmosis_local_runner.run.execute.eval_fns import EvalFn
    from osmosis_local_runner.run.execute.runner import Runner
    from osmosis_local_runner.run.request.spec import RunSpec

    class Workflow(AgentWorkflow):
        async def run(self, ctx: Any) -> None:
            await ctx.chat(ctx.prompt)

    async def grade(ctx: Any) -> float:
        return 1.0 if ctx.solution_str == ctx.ground_truth else 0.0

    spec = RunSpec(
        model=resolve_target("mock/calculator", env={}),
        dataset=data,
        workflow=Workflow(),
        eval_fns=[EvalFn("grader", grade, "grader", True)],
        output=out,
        batch_size=CONCURRENCY,
    )
    started = time.process_time()
    if profile is not None:
        profile.enable()
    result = asyncio.run(Runner(spec).run())
    if profile is not None:
        profile.disable()
    return time.process_time() - started, int(result.summary["total_runs"])


def _decode_us() -> float:
    from osmosis_client.llm.answers import decode, parse_reply

    body = json.dumps(
        {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "model": "m",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": "2"},
                    "finish_reason": "stop",
                }
            ],
            "usage": {"prompt_tokens": 7, "completion_tokens": 1, "total_tokens": 8},
        }
    ).encode()
    n = 20_000
    started = time.process_time()
    for _ in range(n):
        parse_reply(decode(body, "x"))
    return (time.process_time() - started) / n * 1e6


def measure(stub_url: str) -> dict[str, Any]:
    from bench.baselines import make_dataset, raw_aiohttp
    from bench.run_benchmarks import runner_rate

    tmp = Path(tempfile.mkdtemp(prefix="osmosis-cpu-"))
    data = make_dataset(tmp / "rows.jsonl", 20_000)
    n = 20_000
    bares, owns = [], []
    for trial in range(TRIALS):  # interleaved: drift on a shared machine hits both alike
        started = time.process_time()
        asyncio.run(raw_aiohttp(stub_url, n))
        bares.append((time.process_time() - started) / (n + 200) * 1e6)  # 200 warm-up calls
        seconds, attempts = _mock_run(data, tmp / f"mock{trial}.json", None)
        owns.append(seconds / attempts * 1e6)
    bare_us, own_us = statistics.median(bares), statistics.median(owns)
    started = time.process_time()
    runner_rate(stub_url, data, tmp / "stub.json")
    runner_us = (time.process_time() - started) / n * 1e6
    profile = cProfile.Profile()
    _mock_run(data, tmp / "mock-profiled.json", profile)
    stats = pstats.Stats(profile)
    profiled_total = sum(row[2] for row in stats.stats.values())  # type: ignore[attr-defined]
    stages = {
        stage: sum(_cumulative(stats, path, name) for path, name in entries)
        / profiled_total
        * own_us
        for stage, entries in STAGES.items()
    }
    for outer, inner in NESTED.items():
        stages[outer] -= stages[inner]
    stages["window, event loop and the rest"] = own_us - sum(stages.values())
    decode_us = _decode_us()
    return {
        "bare_cpu_us": bare_us,
        "runner_cpu_us": runner_us,
        "own_cpu_us": own_us,
        "decode_us": decode_us,
        "stages_us": stages,
    }


def section(c: dict[str, Any]) -> str:
    mock = c["stages_us"].get(MOCK, 0.0)
    own = c["own_cpu_us"] - mock + c["decode_us"]
    rows = "\n".join(
        f"| {stage} | {us:.1f} µs | {us / c['bare_cpu_us']:.2f} |"
        for stage, us in c["stages_us"].items()
        if stage != MOCK
    )
    verdict = "met" if own <= c["bare_cpu_us"] else "not met"
    return f"""## Where an attempt's CPU goes (zero model latency)

`bench/cpu_profile.py`: process CPU time per request or attempt (20,000 of each; the bare
loop and the runner's own work are medians of {TRIALS} interleaved trials). The
runner's own work is measured with the offline mock model (no HTTP at all) and split by
stage with a deterministic profile (each stage's entry point, its cumulative share scaled
to the unprofiled time); decoding an answer is timed alone.

| what | CPU per request or attempt | ratio to the bare client |
|---|---:|---:|
| bare aiohttp loop, per request (baseline) | {c["bare_cpu_us"]:.1f} µs | 1.00 |
| the runner against the stub, per attempt (HTTP included) | {c["runner_cpu_us"]:.1f} µs | {c["runner_cpu_us"] / c["bare_cpu_us"]:.2f} |
| **the runner's own work, per attempt** (below, plus the decode) | **{own:.1f} µs** | **{own / c["bare_cpu_us"]:.2f}** (target <= 1: {verdict}) |
| decode (the answer's JSON → the assistant message and tokens) | {c["decode_us"]:.1f} µs | {c["decode_us"] / c["bare_cpu_us"]:.2f} |
{rows}
| *not counted: {MOCK.split(" (")[0]}* | *{mock:.1f} µs* | |

The offline mock model stands where a real run makes its HTTP call, so the time it spends
making its answer (parsing and evaluating the arithmetic) is the model's, not the
runner's: it is measured and left out.

At zero latency a run is bound by CPU: the model call through aiohttp costs what the bare
loop costs, and the runner's own work comes on top, so the runner reaches about
bare / (bare + own) of the bare loop's rate — the throughput table's ratio.
"""
