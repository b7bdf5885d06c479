"""The local runner against a misbehaving endpoint, and at 10 k rows."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from osmosis_client.llm.client import ModelClient
from osmosis_client.llm.providers import resolve_target
from osmosis_client.rollout import AgentWorkflow, AgentWorkflowContext, GraderContext
from osmosis_local_runner.run.execute.eval_fns import EvalFn
from osmosis_local_runner.run.execute.runner import Runner
from osmosis_local_runner.run.request.spec import RunSpec
from tests import envelopes
from tests.e2e.conftest import osmosis_command
from tests.stub_openai import StubOpenAI

#: runs argv[1:] and prints its peak RSS (KiB) last on stderr, its exit code kept
PEAK_OF_CHILD = (
    "import resource, subprocess, sys\n"
    "code = subprocess.run(sys.argv[1:]).returncode\n"
    "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr)\n"
    "sys.exit(code)"
)

pytestmark = pytest.mark.slow


class Ask(AgentWorkflow):
    async def run(self, ctx: AgentWorkflowContext) -> None:
        await ctx.chat(ctx.prompt)


async def grade(ctx: GraderContext) -> float:
    return 1.0 if ctx.solution_str == ctx.ground_truth else 0.0


def data(tmp_path: Path, rows: int) -> Path:
    path = tmp_path / "d.jsonl"
    path.write_text(
        "".join(
            json.dumps({"user_prompt": f"{i} + 1", "ground_truth": str(i + 1)}) + "\n"
            for i in range(rows)
        )
    )
    return path


@pytest.fixture
def stub() -> Iterator[StubOpenAI]:
    with StubOpenAI() as server:
        yield server


def run(stub: StubOpenAI, tmp_path: Path, rows: int, **kw: Any) -> dict[str, Any]:
    target = resolve_target("served", base_url=stub.url, env={})

    async def no_sleep(_: float) -> None:
        return None

    spec = RunSpec(
        model=target,
        dataset=data(tmp_path, rows),
        workflow=Ask(),
        eval_fns=[EvalFn("grader", grade, "grader", True)],
        output=tmp_path / "out.json",
        probe=False,
        **kw,
    )

    async def go() -> dict[str, Any]:
        async with ModelClient(target, concurrency=8, sleep=no_sleep) as client:
            return (await Runner(spec, model_client=client).run()).document

    return asyncio.run(go())


def test_5xx_and_429_storms_are_retried(stub: StubOpenAI, tmp_path: Path) -> None:
    stub.fail_next(503, 12)
    stub.fail_next(429, 6, retry_after="0")
    doc = run(stub, tmp_path, 10, batch_size=4)
    assert doc["summary"]["errored_runs"] == 0
    assert doc["summary"]["eval_fns"]["grader"]["mean"] == 1.0
    assert len(stub.state.requests) == 10 + 18


def test_a_storm_longer_than_the_retry_budget_errors_only_those_attempts(
    stub: StubOpenAI, tmp_path: Path
) -> None:
    stub.fail_next(500, 6)  # one call: 1 try + 5 retries, all failing
    doc = run(stub, tmp_path, 5, batch_size=1)
    runs = [r["runs"][0] for r in doc["rows"]]
    assert runs[0]["success"] is False
    assert runs[0]["error"].startswith("workflow: ProviderRequestError")
    assert all(r["success"] for r in runs[1:])
    assert doc["summary"]["status"] == "finished"


def test_hanging_endpoint_is_cut_by_the_attempt_timeout(stub: StubOpenAI, tmp_path: Path) -> None:
    stub.state.hang = True
    doc = run(stub, tmp_path, 4, batch_size=4, agent_workflow_timeout_s=0.3)
    assert [r["runs"][0]["error"] for r in doc["rows"]] == ["workflow timed out after 0.3s"] * 4
    assert doc["summary"]["errored_runs"] == 4
    assert all(r["runs"][0]["duration_ms"] < 2000 for r in doc["rows"])


def test_ten_thousand_rows_in_bounded_memory(tmp_path: Path) -> None:
    path = tmp_path / "big.jsonl"
    path.write_text(
        "".join(
            json.dumps({"user_prompt": f"What is {i} + {i}?", "ground_truth": str(2 * i)}) + "\n"
            for i in range(10_000)
        )
    )
    (tmp_path / "wf.py").write_text(
        "from osmosis_client.rollout import AgentWorkflow\n"
        "class W(AgentWorkflow):\n    async def run(self, ctx):\n        await ctx.chat(ctx.prompt)\n"
        "def score(solution_str, ground_truth, extra_info=None):\n    return float(solution_str == ground_truth)\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("OSMOSIS_")} | {
        "OSMOSIS_WARM": "0"
    }
    # a fresh parent whose only child is the run: RUSAGE_CHILDREN of this test process is
    # the high-water mark of every child the whole session started
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            PEAK_OF_CHILD,
            *osmosis_command(),
            "eval",
            "-m",
            "wf.py:W",
            "-d",
            str(path),
            "--model",
            "mock/calculator",
            "--eval-fn",
            "wf.py:score",
            "--batch-size",
            "64",
            "-q",
            "-o",
            "out.json",
            "--json",
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    doc = envelopes.resource(result.stdout)
    assert doc["summary"]["total_runs"] == 10_000 and doc["summary"]["errored_runs"] == 0
    peak_mb = int(result.stderr.strip().splitlines()[-1]) / 1024
    assert peak_mb < 250, peak_mb
