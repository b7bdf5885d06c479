"""The benchmark's rollout: examples/published-rollout's calculator (published osmosis-ai
0.3 SDK, scaffold shape) with room for 32 rollouts at once, recording when each
``POST /rollout`` arrives and each grade is set (``BENCH_EVENTS``), so both controllers
— osmosis-client and the published CLI — are timed by the same clock, from outside."""

from __future__ import annotations

import os
import re
import time

import httpx
import uvicorn
from osmosis_ai.rollout.agent_workflow import AgentWorkflow
from osmosis_ai.rollout.backend.local import LocalBackend
from osmosis_ai.rollout.context import AgentWorkflowContext, GraderContext, get_rollout_context
from osmosis_ai.rollout.grader import Grader
from osmosis_ai.rollout.server import create_rollout_server
from osmosis_ai.rollout.types import AgentWorkflowConfig, ConcurrencyConfig

EVENTS = os.environ["BENCH_EVENTS"]


def record(kind: str) -> None:
    with open(EVENTS, "a") as f:
        f.write(f"{kind} {time.time():.6f}\n")


class CalculatorWorkflow(AgentWorkflow):
    async def run(self, ctx: AgentWorkflowContext) -> list[dict]:
        rollout = get_rollout_context()
        async with httpx.AsyncClient(timeout=120) as client:
            response = await client.post(
                rollout.chat_completions_url + "/chat/completions",
                headers={"Authorization": f"Bearer {rollout.api_key}"},
                json={"model": "osmosis-rollout", "messages": ctx.prompt, "temperature": 0.0},
            )
            response.raise_for_status()
            reply = response.json()["choices"][0]["message"]
        return [*ctx.prompt, reply]


class LabelMatch(Grader):
    async def grade(self, ctx: GraderContext) -> None:
        answer = ""
        for message in reversed(ctx.sample.messages):
            if isinstance(message, dict) and message.get("role") == "assistant":
                answer = message.get("content") or ""
                break
        numbers = re.findall(r"-?\d+(?:\.\d+)?", answer)
        ok = bool(numbers) and ctx.label is not None and float(numbers[-1]) == float(ctx.label)
        ctx.set_reward(1.0 if ok else 0.0)
        record("graded")


def main() -> None:
    backend = LocalBackend(
        workflow=CalculatorWorkflow,
        workflow_config=AgentWorkflowConfig(
            name="calculator", concurrency=ConcurrencyConfig(max_concurrent=32)
        ),
        grader=LabelMatch,
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
