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
    AgentWorkflow as AgentWorkflow,
    AgentWorkflowContext as AgentWorkflowContext,
    ChatFn as ChatFn,
    Grader as Grader,
    GraderContext as GraderContext,
    Message as Message,
    check_score as check_score,
    last_assistant_content as last_assistant_content,
)

_AGENT_LOOP = "osmosis_client.rollout.agent_loop"
_NATIVE = [
    "AgentWorkflow",
    "AgentWorkflowContext",
    "ChatFn",
    "Grader",
    "GraderContext",
    "Message",
    "check_score",
    "last_assistant_content",
]


def __getattr__(name: str) -> Any:
    # the agent-loop API's names are its package's own ``__all__`` (listed once, there),
    # imported on first use; ``__all__`` here is asked for by ``import *`` and tools
    if name.startswith("__") and name != "__all__":
        raise AttributeError(name)
    agent_loop = importlib.import_module(_AGENT_LOOP)
    if name == "__all__":
        return [*_NATIVE, *agent_loop.__all__]
    if name in agent_loop.__all__:
        value = getattr(agent_loop, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'osmosis_client.rollout' has no attribute {name!r}")
