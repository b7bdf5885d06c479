"""A minimal workflow and eval fn for the memory benchmark (seed form)."""

from __future__ import annotations

from typing import Any

from osmosis_client.rollout import AgentWorkflow


class Calc(AgentWorkflow):
    async def run(self, ctx: Any) -> None:
        await ctx.chat(ctx.prompt)


async def exact(solution_str: str, ground_truth: str, extra_info: Any = None) -> float:
    return 1.0 if solution_str == ground_truth else 0.0
