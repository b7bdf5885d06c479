"""The agent: the row's prompt, the multiply tool, at most a few turns. The integration
routes every model call to the rollout's chat-completions URL and records the
conversation in the session, which becomes the sample the grader reads."""

from __future__ import annotations

from typing import Any

from agents import ModelSettings, Runner
from osmosis_ai.rollout.agent_workflow import AgentWorkflow
from osmosis_ai.rollout.context import AgentWorkflowContext
from osmosis_ai.rollout.integrations.agents.openai_agents import (
    OsmosisAgent,
    OsmosisMemorySession,
    OsmosisRolloutModel,
)
from osmosis_ai.rollout.types import AgentWorkflowConfig

from multiply_rollout.tools import multiply

MAX_TURNS = 6


class MultiplyConfig(AgentWorkflowConfig):
    name: str = "multiply"
    temperature: float = 0.7
    max_tokens: int = 2048


workflow_config = MultiplyConfig()


class MultiplyWorkflow(AgentWorkflow):
    async def run(self, ctx: AgentWorkflowContext[Any]) -> None:
        config = ctx.config or workflow_config
        agent = OsmosisAgent(
            name="multiply",
            model=OsmosisRolloutModel(),
            model_settings=ModelSettings(
                temperature=config.temperature, max_tokens=config.max_tokens
            ),
            tools=[multiply],
        )
        await Runner.run(agent, ctx.prompt, session=OsmosisMemorySession(), max_turns=MAX_TURNS)
