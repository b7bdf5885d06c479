"""The agent: the row's system prompt, its question, the multiply tool. The integration
points the Strands model at the rollout's chat-completions URL and registers the
agent's conversation as the sample the grader reads."""

from __future__ import annotations

from typing import Any

from osmosis_ai.rollout.agent_workflow import AgentWorkflow
from osmosis_ai.rollout.context import AgentWorkflowContext
from osmosis_ai.rollout.integrations.agents.strands import (
    OsmosisRolloutModel,
    OsmosisStrandsAgent,
)
from osmosis_ai.rollout.types import AgentWorkflowConfig

from multiply_rollout.tools import multiply


class MultiplyConfig(AgentWorkflowConfig):
    name: str = "multiply"
    temperature: float = 0.7
    max_tokens: int = 2048


workflow_config = MultiplyConfig()


def _text(message: dict[str, Any]) -> str:
    content = message.get("content")
    return content if isinstance(content, str) else ""


class MultiplyWorkflow(AgentWorkflow):
    async def run(self, ctx: AgentWorkflowContext[Any]) -> None:
        config = ctx.config or workflow_config
        system = "\n".join(_text(m) for m in ctx.prompt if m.get("role") == "system")
        question = next((_text(m) for m in reversed(ctx.prompt) if m.get("role") == "user"), "")
        agent = OsmosisStrandsAgent(
            model=OsmosisRolloutModel(
                params={"temperature": config.temperature, "max_tokens": config.max_tokens}
            ),
            system_prompt=system or None,
            tools=[multiply],
            callback_handler=None,
        )
        await agent.invoke_async(question)
