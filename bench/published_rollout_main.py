"""The benchmark's rollout: examples/published-rollout's calculator (published osmosis-ai
0.3 SDK, scaffold shape; copied beside this file as ``scaffold.py``) with room for 32
rollouts at once, recording when each ``POST /rollout`` or result poll arrives and each
grade is set (``BENCH_EVENTS``), so both controllers — osmosis-client and the published
CLI — are timed by the same clock, from outside."""

from __future__ import annotations

import os
import time

import uvicorn
from osmosis_ai.rollout.backend.local import LocalBackend
from osmosis_ai.rollout.context import GraderContext
from osmosis_ai.rollout.server import create_rollout_server
from osmosis_ai.rollout.types import AgentWorkflowConfig, ConcurrencyConfig
from scaffold import CalculatorWorkflow, LabelMatch

EVENTS = os.environ["BENCH_EVENTS"]


def record(kind: str) -> None:
    with open(EVENTS, "a") as f:
        f.write(f"{kind} {time.time():.6f}\n")


class RecordedLabelMatch(LabelMatch):
    async def grade(self, ctx: GraderContext) -> None:
        await super().grade(ctx)
        record("graded")


def main() -> None:
    backend = LocalBackend(
        workflow=CalculatorWorkflow,
        workflow_config=AgentWorkflowConfig(
            name="calculator", concurrency=ConcurrencyConfig(max_concurrent=32)
        ),
        grader=RecordedLabelMatch,
    )
    app = create_rollout_server(backend=backend)

    @app.middleware("http")
    async def mark_dispatch(request, call_next):  # type: ignore[no-untyped-def]
        if request.method == "POST" and request.url.path == "/rollout":
            record("post")
        elif request.method == "GET" and request.url.path.endswith("/result"):
            record("poll")
        return await call_next(request)

    uvicorn.run(
        app,
        host="127.0.0.1",
        port=int(os.environ["_OSMOSIS_ROLLOUT_PORT"]),
        log_level="warning",
    )


if __name__ == "__main__":
    main()
