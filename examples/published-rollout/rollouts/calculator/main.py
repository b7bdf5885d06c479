"""A rollout written for the published osmosis-ai 0.3 SDK (scaffold shape): the workflow
makes one chat call, the grader compares the answer with the row's label.

`osmosis eval run configs/eval/calculator.toml` runs it as the platform does: this
file as a rollout server in its own environment, driven over HTTP.
"""

from __future__ import annotations

import os
import re

import httpx
import uvicorn
from osmosis_ai.rollout.agent_workflow import AgentWorkflow
from osmosis_ai.rollout.backend.local import LocalBackend
from osmosis_ai.rollout.context import AgentWorkflowContext, GraderContext, get_rollout_context
from osmosis_ai.rollout.grader import Grader
from osmosis_ai.rollout.server import create_rollout_server


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


def main() -> None:
    backend = LocalBackend(workflow=CalculatorWorkflow, grader=LabelMatch)
    app = create_rollout_server(backend=backend)
    uvicorn.run(app, host="127.0.0.1", port=int(os.environ.get("_OSMOSIS_ROLLOUT_PORT", "8000")))


if __name__ == "__main__":
    main()
