"""Tool-call helpers of the 0.2 SDK (``osmosis_ai.rollout.tools``)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from osmosis_client.rollout.agent_loop.exceptions import ToolArgumentError


def create_tool_result(tool_call_id: str, content: Any) -> dict[str, Any]:
    """A ``{"role": "tool", "content", "tool_call_id"}`` message."""
    return {"role": "tool", "content": serialize_tool_result(content), "tool_call_id": tool_call_id}


def create_tool_error_result(tool_call_id: str, message: str) -> dict[str, Any]:
    """A tool message reporting a failure (content prefixed ``"Error: "``)."""
    return create_tool_result(tool_call_id, f"Error: {message}")


def serialize_tool_result(value: Any) -> str:
    """Strings as they are; anything else as JSON."""
    if isinstance(value, str):
        return value
    return json.dumps(value, default=str)


def parse_tool_arguments(arguments: str | Mapping[str, Any] | None) -> dict[str, Any]:
    """A tool call's ``arguments`` (a JSON string or a mapping) as a dict."""
    if arguments is None or arguments == "":
        return {}
    if isinstance(arguments, Mapping):
        return dict(arguments)
    if not isinstance(arguments, str):
        raise ToolArgumentError(
            f"tool arguments must be a JSON object, got {type(arguments).__name__}"
        )
    try:
        parsed = json.loads(arguments)
    except ValueError as exc:
        raise ToolArgumentError(f"tool arguments are not valid JSON: {exc}") from exc
    if not isinstance(parsed, dict):
        raise ToolArgumentError("tool arguments must be a JSON object")
    return parsed


def get_tool_call_info(tool_call: Mapping[str, Any]) -> tuple[str, str, dict[str, Any]]:
    """``(id, name, parsed arguments)`` of an OpenAI-style tool call (id defaults to
    ``"unknown"``)."""
    call_id = str(tool_call.get("id") or "unknown")
    function = tool_call.get("function") or {}
    name = str(function.get("name") or "") if isinstance(function, Mapping) else ""
    try:
        args = parse_tool_arguments(
            function.get("arguments") if isinstance(function, Mapping) else None
        )
    except ToolArgumentError as exc:
        raise ToolArgumentError(str(exc), tool_call_id=call_id, tool_name=name) from exc
    return call_id, name, args


async def execute_tool_calls(
    tool_calls: Sequence[Mapping[str, Any]],
    executor: Callable[[Mapping[str, Any]], Awaitable[Any]],
) -> list[Any]:
    """Run the async ``executor`` on every call concurrently; results in input order."""
    return list(await asyncio.gather(*(executor(call) for call in tool_calls)))
