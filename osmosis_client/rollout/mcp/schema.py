"""A FastMCP tool as an OpenAI function schema, and a tool's result as the text of a
``tool`` message — exactly as 0.2's MCP agent loop made them (rollout-protocol.md C)."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def tool_schema(name: str, description: str | None, parameters: Any) -> dict[str, Any]:
    """``{type: function, function: {name, description, parameters, strict: false}}``;
    each property reduced to ``{type, description?, enum?}`` (``integer`` → ``number``)."""
    params = mapping(parameters)
    defs, raw = mapping(params.get("$defs")), mapping(params.get("properties"))
    required = params.get("required")
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description or f"Tool: {name}",
            "parameters": {
                "type": params.get("type", "object"),
                "properties": {key: _property(value, defs) for key, value in raw.items()},
                "required": list(required) if isinstance(required, list) else [],
            },
            "strict": False,
        },
    }


def mapping(value: Any) -> Mapping[str, Any]:
    """``value`` when it is a mapping, else an empty one."""
    return value if isinstance(value, Mapping) else {}


def _property(value: Any, defs: Mapping[str, Any]) -> dict[str, Any]:
    prop = _resolve(value, defs)
    kind = prop.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), None)
    if not isinstance(kind, str):
        kind = "string"
    out: dict[str, Any] = {"type": "number" if kind == "integer" else kind}
    if isinstance(prop.get("description"), str):
        out["description"] = prop["description"]
    if isinstance(prop.get("enum"), list):
        out["enum"] = prop["enum"]
    return out


def _resolve(value: Any, defs: Mapping[str, Any]) -> Mapping[str, Any]:
    """``$ref`` against ``$defs``; ``anyOf`` → its first non-null branch (all null → string)."""
    prop: Mapping[str, Any] = value if isinstance(value, Mapping) else {}
    for _ in range(32):  # a reference cycle ends here, as a string
        ref = prop.get("$ref")
        if isinstance(ref, str):
            target = defs.get(ref.rsplit("/", 1)[-1])
            merged = {k: v for k, v in prop.items() if k != "$ref"}
            prop = {**(target if isinstance(target, Mapping) else {}), **merged}
            continue
        branches = prop.get("anyOf")
        if isinstance(branches, list):
            chosen = next(
                (b for b in branches if isinstance(b, Mapping) and b.get("type") != "null"), None
            )
            rest = {k: v for k, v in prop.items() if k != "anyOf"}
            prop = {**rest, **chosen} if chosen is not None else {**rest, "type": "string"}
            continue
        break
    return prop


def check_tool_schemas(tools: Sequence[Mapping[str, Any]]) -> str | None:
    """0.2's check before every row: the first bad tool, as its error text, or None."""
    for tool in tools:
        function = mapping(tool.get("function"))
        name = function.get("name")
        if not isinstance(name, str) or not _NAME.match(name):
            return (
                f"Tool validation error: Tool '{name}': name must start with letter/underscore "
                "and contain only alphanumeric characters and underscores"
            )
        params = function.get("parameters")
        if isinstance(params, Mapping) and params.get("type") != "object":
            return f"Tool validation error: Tool '{name}': parameters type must be 'object'"
    return None


def tool_content(structured: Any, content: Any) -> str:
    """A tool's result as message text: its structured content (``{"result": v}``
    unwrapped), else its text parts joined by newlines, else ``""``."""
    if structured is not None:
        value = structured
        if isinstance(value, Mapping) and list(value) == ["result"]:
            value = value["result"]
    else:
        texts = [getattr(part, "text", None) for part in content or []]
        value = "\n".join(t for t in texts if isinstance(t, str))
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float | str):
        return str(value)
    return json.dumps(value)
