"""The 0.2 agent-loop exceptions (``osmosis_ai.rollout.core.exceptions``)::

OsmosisRolloutError
├── OsmosisTransportError      a call to the trainer or model could not be made
├── OsmosisServerError         the other side answered with an error
├── OsmosisValidationError     a request or result is malformed
├── OsmosisTimeoutError        a call took too long
├── AgentLoopNotFoundError     MODULE:ATTR names no agent loop
└── ToolExecutionError         a tool failed (tool_call_id, tool_name)
    └── ToolArgumentError      a tool's arguments could not be parsed
"""

from __future__ import annotations


class OsmosisRolloutError(Exception):
    """Base of the agent-loop errors."""


class OsmosisTransportError(OsmosisRolloutError):
    pass


class OsmosisServerError(OsmosisRolloutError):
    pass


class OsmosisValidationError(OsmosisRolloutError):
    pass


class OsmosisTimeoutError(OsmosisRolloutError):
    pass


class AgentLoopNotFoundError(OsmosisRolloutError):
    pass


class ToolExecutionError(OsmosisRolloutError):
    def __init__(self, message: str, tool_call_id: str = "", tool_name: str = "") -> None:
        super().__init__(message)
        self.tool_call_id = tool_call_id
        self.tool_name = tool_name


class ToolArgumentError(ToolExecutionError):
    pass
