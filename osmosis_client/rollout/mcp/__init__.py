"""0.2's MCP tool servers: a FastMCP server in a directory as an agent's tools
(``osmosis eval --mcp DIR``, ``osmosis test --mcp DIR``); rollout-protocol.md part C.

The ``fastmcp`` package is an optional extra: ``pip install 'osmosis-client[mcp]'``.
"""

from __future__ import annotations

from osmosis_client.rollout.mcp.loader import MCPLoadError, find_server, load_mcp_server
from osmosis_client.rollout.mcp.loop import MCPAgentLoop
from osmosis_client.rollout.mcp.schema import (
    check_tool_schemas,
    tool_content,
    tool_schema,
)

__all__ = [
    "MCPAgentLoop",
    "MCPLoadError",
    "check_tool_schemas",
    "find_server",
    "load_mcp_server",
    "tool_content",
    "tool_schema",
]
