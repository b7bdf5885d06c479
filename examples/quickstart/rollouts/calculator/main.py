"""A tiny rollout: ask the model an arithmetic question, grade the number it answers."""

from __future__ import annotations

import re

from osmosis_client.rollout import AgentWorkflow, AgentWorkflowContext, Grader, GraderContext


class CalculatorWorkflow(AgentWorkflow):
    async def run(self, ctx: AgentWorkflowContext):
        # `seed` varies the attempts of a row (the mock model honours it, as do most APIs)
        reply = await ctx.chat(ctx.prompt, temperature=0.7, seed=ctx.run_index)
        return [*ctx.prompt, reply]


class NumberMatch(Grader):
    async def grade(self, ctx: GraderContext) -> float:
        numbers = re.findall(r"-?\d+(?:\.\d+)?", ctx.solution_str)
        if not numbers or ctx.ground_truth is None:
            return 0.0
        return 1.0 if float(numbers[-1]) == float(ctx.ground_truth) else 0.0
