"""``MCPAgentLoop``: 0.2's agent loop over a FastMCP server's tools (loop name
``mcp_agent``; rollout-protocol.md C).

Each row: the row's messages as they are; up to ``max_turns`` model calls, each with
the full history and the server's tools; the assistant message appended as it came; no
tool calls → done (``finish_reason`` ``stop``), else every call runs in order, in this
process (no MCP session: the server's tool manager is called directly, as 0.2 did), its
result appended as a ``tool`` message. A failing tool never fails the row: its message
reads ``Error: …``. Every turn asking for tools → ``finish_reason`` ``max_turns``.

Better than 0.2: a synchronous tool runs on a worker thread (the event loop, and with it
the other attempts and the attempt's timeout, keep going); empty arguments are ``{}``;
fastmcp versions without the private tool manager (3.x) work through an in-memory
``fastmcp.Client``.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
import threading
import time
from collections.abc import Mapping
from typing import Any

from osmosis_client._threads import in_daemon_thread
from osmosis_client.rollout.agent_loop import RolloutAgentLoop, RolloutContext, RolloutResult
from osmosis_client.rollout.agent_loop.schemas import RolloutRequest
from osmosis_client.rollout.mcp.schema import mapping, tool_content, tool_schema

logger = logging.getLogger("osmosis_client.mcp")


class ToolCallError(Exception):
    """A tool call that failed; its text follows ``Error: `` in the tool message."""


class MCPAgentLoop(RolloutAgentLoop):
    """The agent loop of ``--mcp DIR``: the server's tools are read once, here."""

    name = "mcp_agent"

    def __init__(self, server: Any) -> None:
        self.server = server
        self._manager = getattr(server, "_tool_manager", None)
        if self._manager is not None and isinstance(getattr(self._manager, "_tools", None), dict):
            listed = [(t.name, t.description, t.parameters) for t in self._manager._tools.values()]
            self._sync = {
                t.name for t in self._manager._tools.values() if _is_sync(getattr(t, "fn", None))
            }
        else:
            self._manager = None
            listed = _in_thread(_client_tools(server))
            self._sync = set()
        self.tools = [tool_schema(*entry) for entry in listed]

    @property
    def tool_names(self) -> list[str]:
        return [t["function"]["name"] for t in self.tools]

    def get_tools(self, request: RolloutRequest) -> list[dict[str, Any]]:
        return [dict(t) for t in self.tools]

    async def run(self, ctx: RolloutContext) -> RolloutResult:
        messages = [dict(m) for m in ctx.request.messages]
        for _ in range(ctx.request.max_turns):
            result = await ctx.chat(messages)
            messages.append({k: v for k, v in result.message.items() if v is not None})
            if not result.has_tool_calls:
                return ctx.complete(messages, finish_reason="stop")
            for call in result.tool_calls:
                started = time.monotonic()
                messages.append(await self.call(call))
                ctx.record_tool_call((time.monotonic() - started) * 1000)
        return ctx.complete(messages, finish_reason="max_turns")

    async def call(self, call: Mapping[str, Any]) -> dict[str, Any]:
        """One tool call as its ``tool`` message (``Error: …`` when it failed)."""
        call_id = str(call.get("id") or "unknown")
        function = mapping(call.get("function"))
        try:
            name = str(function.get("name") or "")
            content = await self.invoke(name, _arguments(function.get("arguments")))
        except Exception as exc:
            logger.debug("Tool call %s failed: %s", call_id, exc)
            content = f"Error: {exc}"
        return {"role": "tool", "content": content, "tool_call_id": call_id}

    async def invoke(self, name: str, args: dict[str, Any]) -> str:
        """The tool's result as text; raises what the call raised."""
        if name not in self.tool_names:  # 0.2's words, whatever fastmcp's version says
            raise ToolCallError(f"Tool {name!r} not found.")
        if self._manager is None:
            return await _client_call(self.server, name, args)
        manager = self._manager
        if name in self._sync:
            # never asyncio.to_thread: its threads are joined at exit, and a tool that never
            # returns would keep the process alive after the run's deadline
            coro = manager.call_tool(name, args)
            result = await in_daemon_thread(asyncio.run, coro, name="osmosis-mcp-tool")
        else:
            result = await manager.call_tool(name, args)
        return tool_content(getattr(result, "structured_content", None), result.content)


def _arguments(raw: Any) -> dict[str, Any]:
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return {}
    if isinstance(raw, Mapping):
        return dict(raw)
    try:
        value = json.loads(raw)
    except (TypeError, ValueError) as exc:
        raise ToolCallError(f"Invalid JSON arguments: {exc}") from exc
    if not isinstance(value, dict):
        raise ToolCallError(f"Expected dict from JSON, got {type(value).__name__}")
    return value


def _is_sync(fn: Any) -> bool:
    """A plain function (or callable object) tool: it would block the event loop."""
    if fn is None:
        return False
    call = fn if inspect.isroutine(fn) else getattr(fn, "__call__", None)  # noqa: B004
    return not (inspect.iscoroutinefunction(call) or inspect.isasyncgenfunction(call))


def _in_thread(coro: Any) -> Any:
    """Run a coroutine to completion whether or not this thread runs an event loop."""
    box: dict[str, Any] = {}

    def work() -> None:
        try:
            box["value"] = asyncio.run(coro)
        except BaseException as exc:  # re-raised in the caller's thread
            box["error"] = exc

    thread = threading.Thread(target=work, name="osmosis-mcp-list", daemon=True)
    thread.start()
    thread.join()
    if "error" in box:
        raise box["error"]
    return box["value"]


async def _client_tools(server: Any) -> list[tuple[str, str | None, Any]]:
    import fastmcp

    async with fastmcp.Client(server) as client:
        tools = await client.list_tools()
    return [(t.name, t.description, t.inputSchema) for t in tools]


async def _client_call(server: Any, name: str, args: dict[str, Any]) -> str:
    import fastmcp

    async with fastmcp.Client(server) as client:
        result = await client.call_tool(name, args, raise_on_error=False)
    if getattr(result, "is_error", False):
        raise ToolCallError(tool_content(None, result.content) or f"tool {name!r} failed")
    return tool_content(getattr(result, "structured_content", None), result.content)
