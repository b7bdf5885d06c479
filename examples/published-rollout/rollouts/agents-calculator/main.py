"""A rollout written for the published osmosis-ai 0.3 SDK on its OpenAI Agents
integration: an agent with calculator tools. The integration streams every model
call (through LiteLLM) to the rollout's chat-completions URL, and the conversation
comes from the session the workflow registers — `run()` returns None.

`osmosis eval run configs/eval/agents-calculator.toml` runs it unchanged.
"""

from __future__ import annotations

import os
import re
from typing import Any

import uvicorn
from agents import Runner, function_tool
from osmosis_ai.rollout.agent_workflow import AgentWorkflow
from osmosis_ai.rollout.backend.local import LocalBackend
from osmosis_ai.rollout.context import AgentWorkflowContext, GraderContext
from osmosis_ai.rollout.grader import Grader
from osmosis_ai.rollout.integrations.agents.openai_agents import (
    OsmosisAgent,
    OsmosisMemorySession,
    OsmosisRolloutModel,
)
from osmosis_ai.rollout.server import create_rollout_server


@function_tool
def add(a: float, b: float) -> float:
    """Add two numbers."""
    return a + b


@function_tool
def subtract(a: float, b: float) -> float:
    """Subtract b from a."""
    return a - b


@function_tool
def multiply(a: float, b: float) -> float:
    """Multiply two numbers."""
    return a * b


@function_tool
def divide(a: float, b: float) -> float:
    """Divide a by b."""
    return a / b


class AgentsCalculator(AgentWorkflow):
    async def run(self, ctx: AgentWorkflowContext) -> None:
        agent = OsmosisAgent(
            name="calculator",
            instructions="Use the tools, then answer with the number only.",
            model=OsmosisRolloutModel(),
            tools=[add, subtract, multiply, divide],
        )
        await Runner.run(agent, ctx.prompt, session=OsmosisMemorySession(), max_turns=4)


def _text(item: Any) -> str:
    """The text of a chat message or a Responses-API message item."""
    if not isinstance(item, dict) or item.get("role") != "assistant":
        return ""
    content = item.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


class LabelMatch(Grader):
    async def grade(self, ctx: GraderContext) -> None:
        answer = next((t for t in map(_text, reversed(ctx.sample.messages)) if t), "")
        numbers = re.findall(r"-?\d+(?:\.\d+)?", answer)
        ok = bool(numbers) and ctx.label is not None and float(numbers[-1]) == float(ctx.label)
        ctx.set_reward(1.0 if ok else 0.0)


def main() -> None:
    backend = LocalBackend(workflow=AgentsCalculator, grader=LabelMatch)
    app = create_rollout_server(backend=backend)
    uvicorn.run(app, host="127.0.0.1", port=int(os.environ.get("_OSMOSIS_ROLLOUT_PORT", "8000")))


if __name__ == "__main__":
    main()
