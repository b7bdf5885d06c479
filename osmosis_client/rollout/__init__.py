"""What users' rollout code implements: the native ``AgentWorkflow`` + ``Grader`` API."""

from __future__ import annotations

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

__all__ = [
    "AgentWorkflow",
    "AgentWorkflowContext",
    "ChatFn",
    "Grader",
    "GraderContext",
    "Message",
    "check_score",
    "last_assistant_content",
]
