"""The 0.2 agent-loop API (``RolloutAgentLoop``), as the published SDK's
``osmosis_ai.rollout`` exposed it; see rollout-protocol.md part A."""

from __future__ import annotations

from osmosis_client.rollout.agent_loop.app import AgentLoopApp, create_app
from osmosis_client.rollout.agent_loop.exceptions import (
    AgentLoopNotFoundError,
    OsmosisRolloutError,
    OsmosisServerError,
    OsmosisTimeoutError,
    OsmosisTransportError,
    OsmosisValidationError,
    ToolArgumentError,
    ToolExecutionError,
)
from osmosis_client.rollout.agent_loop.loop import (
    LLMBackend,
    RolloutAgentLoop,
    RolloutContext,
    is_agent_loop,
)
from osmosis_client.rollout.agent_loop.schemas import (
    CompletionsResult,
    OpenAIFunctionParametersSchema,
    OpenAIFunctionPropertySchema,
    OpenAIFunctionSchema,
    OpenAIFunctionToolSchema,
    RolloutMetrics,
    RolloutRequest,
    RolloutResult,
    RolloutStatus,
)
from osmosis_client.rollout.agent_loop.tools import (
    create_tool_error_result,
    create_tool_result,
    execute_tool_calls,
    get_tool_call_info,
    parse_tool_arguments,
    serialize_tool_result,
)

__all__ = [
    "AgentLoopApp",
    "AgentLoopNotFoundError",
    "CompletionsResult",
    "LLMBackend",
    "OpenAIFunctionParametersSchema",
    "OpenAIFunctionPropertySchema",
    "OpenAIFunctionSchema",
    "OpenAIFunctionToolSchema",
    "OsmosisRolloutError",
    "OsmosisServerError",
    "OsmosisTimeoutError",
    "OsmosisTransportError",
    "OsmosisValidationError",
    "RolloutAgentLoop",
    "RolloutContext",
    "RolloutMetrics",
    "RolloutRequest",
    "RolloutResult",
    "RolloutStatus",
    "ToolArgumentError",
    "ToolExecutionError",
    "create_app",
    "create_tool_error_result",
    "create_tool_result",
    "execute_tool_calls",
    "get_tool_call_info",
    "is_agent_loop",
    "parse_tool_arguments",
    "serialize_tool_result",
]
