"""What users' rollout code implements.

- the native API: ``AgentWorkflow`` + ``Grader`` and their contexts (in-process, fast);
- the 0.2 agent-loop API of the published SDK: ``RolloutAgentLoop``, ``RolloutContext``,
  the request/result schemas, tool helpers and ``create_app`` (imported on first use,
  so native rollouts do not pay for pydantic).
"""

from __future__ import annotations

import importlib
from typing import Any

from osmosis_client.rollout.workflow import (
    AgentWorkflow,
    AgentWorkflowContext,
    ChatFn,
    Grader,
    GraderContext,
    Message,
    check_score,
    last_assistant_content,
)

_AGENT_LOOP = "osmosis_client.rollout.agent_loop"
_AGENT_LOOP_NAMES = frozenset(
    {
        "AgentLoopNotFoundError",
        "CompletionsResult",
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
        "parse_tool_arguments",
        "serialize_tool_result",
    }
)

__all__ = [
    "AgentWorkflow",
    "AgentWorkflowContext",
    "ChatFn",
    "Grader",
    "GraderContext",
    "Message",
    "check_score",
    "last_assistant_content",
    *sorted(_AGENT_LOOP_NAMES),
]


def __getattr__(name: str) -> Any:
    if name in _AGENT_LOOP_NAMES:
        value = getattr(importlib.import_module(_AGENT_LOOP), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'osmosis_client.rollout' has no attribute {name!r}")
