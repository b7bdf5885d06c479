"""A minimal workflow and eval fn for the memory benchmark (seed form)."""

from __future__ import annotations

from typing import Any

from osmosis_client.rollout import AgentWorkflow


class Calc(AgentWorkflow):
    async def run(self, ctx: Any) -> None:
        await ctx.chat(ctx.prompt)


async def exact(solution_str: str, ground_truth: str, extra_info: Any = None) -> float:
    return 1.0 if solution_str == ground_truth else 0.0


OPERATIONS = {
    "add": lambda a, b: a + b,
    "subtract": lambda a, b: a - b,
    "multiply": lambda a, b: a * b,
    "divide": lambda a, b: a / b,
}


TOOLS = [
    {"type": "function", "function": {"name": n, "parameters": {"type": "object"}}}
    for n in ("add", "subtract", "multiply", "divide")
]


class CalculatorLoop:
    """A 0.2-style agent loop: one tool call, then the answer (two model calls)."""

    name = "calculator"

    def get_tools(self, request: Any) -> list[Any]:
        return TOOLS

    async def run(self, ctx: Any) -> Any:
        from osmosis_client.rollout import create_tool_result, get_tool_call_info

        messages = list(ctx.request.messages)
        while True:
            result = await ctx.chat(messages)
            messages.append(result.message)
            if not result.has_tool_calls:
                return ctx.complete(messages)
            for call in result.tool_calls:
                call_id, name, args = get_tool_call_info(call)
                a, b = float(args["a"]), float(args["b"])
                value = OPERATIONS[name](a, b)
                messages.append(create_tool_result(call_id, f"{value:g}"))
                ctx.record_tool_call()
