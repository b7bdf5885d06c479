"""A calculator agent loop written for the published osmosis-ai 0.2 SDK (unchanged).

    osmosis eval -m server:agent_loop -d test_data.jsonl --eval-fn rewards:compute_reward \
        --model mock/tool-calculator
    osmosis validate -m server:agent_loop
    osmosis serve -m server:agent_loop --local
    uvicorn server:app --port 9000                     # or: python -m server
"""

import time

from osmosis_ai.rollout import (
    RolloutAgentLoop,
    RolloutContext,
    RolloutRequest,
    RolloutResult,
    create_app,
)
from osmosis_ai.rollout.core.schemas import (
    OpenAIFunctionParametersSchema,
    OpenAIFunctionPropertySchema,
    OpenAIFunctionSchema,
    OpenAIFunctionToolSchema,
)
from osmosis_ai.rollout.tools import (
    create_tool_error_result,
    create_tool_result,
    execute_tool_calls,
    get_tool_call_info,
)


def _tool(name: str, description: str) -> OpenAIFunctionToolSchema:
    number = OpenAIFunctionPropertySchema(type="number", description="an operand")
    return OpenAIFunctionToolSchema(
        type="function",
        function=OpenAIFunctionSchema(
            name=name,
            description=description,
            parameters=OpenAIFunctionParametersSchema(
                type="object", properties={"a": number, "b": number}, required=["a", "b"]
            ),
        ),
    )


TOOLS = [
    _tool("add", "Add two numbers."),
    _tool("subtract", "Subtract b from a."),
    _tool("multiply", "Multiply two numbers."),
    _tool("divide", "Divide a by b."),
]

OPERATIONS = {
    "add": lambda a, b: a + b,
    "subtract": lambda a, b: a - b,
    "multiply": lambda a, b: a * b,
    "divide": lambda a, b: a / b,
}


def _format(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:.6g}"


class CalculatorAgentLoop(RolloutAgentLoop):
    name = "calculator"

    def get_tools(self, request: RolloutRequest) -> list[OpenAIFunctionToolSchema]:
        return TOOLS

    async def run(self, ctx: RolloutContext) -> RolloutResult:
        messages = list(ctx.request.messages)
        for turn in range(ctx.request.max_turns):
            result = await ctx.chat(messages)
            messages.append(result.message)
            ctx.log_event("model_turn", turn=turn, tool_calls=len(result.tool_calls))
            if not result.has_tool_calls:
                return ctx.complete(messages)

            async def call(tool_call: dict) -> dict:
                started = time.monotonic()
                call_id, name, args = get_tool_call_info(tool_call)
                try:
                    value = OPERATIONS[name](float(args["a"]), float(args["b"]))
                    return create_tool_result(call_id, _format(value))
                except Exception as exc:  # an unknown tool, a bad argument, 1 / 0
                    return create_tool_error_result(call_id, str(exc))
                finally:
                    ctx.record_tool_call(latency_ms=(time.monotonic() - started) * 1000)

            messages.extend(await execute_tool_calls(result.tool_calls, call))
        return ctx.complete(messages, finish_reason="max_turns")


agent_loop = CalculatorAgentLoop()
app = create_app(agent_loop)


if __name__ == "__main__":  # python -m server, as 0.2's docs run it
    import os

    import uvicorn

    uvicorn.run(
        app,
        host=os.environ.get("ROLLOUT_SERVER_HOST", "0.0.0.0"),
        port=int(os.environ.get("ROLLOUT_SERVER_PORT", "9000")),
    )
