"""0.2's MCP tool servers: the schema each tool becomes, the text each result becomes,
loading DIR/main.py as 0.2 did, and the loop's tool calls (rollout-protocol.md C)."""

from __future__ import annotations

import asyncio
import json
import sys
import threading
import warnings
from pathlib import Path
from typing import Any

import pytest

from osmosis_client.rollout.mcp import (
    MCPAgentLoop,
    MCPLoadError,
    check_tool_schemas,
    load_mcp_server,
    tool_content,
    tool_schema,
)

with warnings.catch_warnings(record=True):
    fastmcp = pytest.importorskip("fastmcp", reason="the [mcp] extra (fastmcp) is not installed")


# ------------------------------------------------------------------ schemas


def test_tool_schema_reduces_properties_as_0_2_did() -> None:
    params = {
        "$defs": {"Color": {"enum": ["red", "blue"], "type": "string"}},
        "properties": {
            "a": {"type": "integer", "minimum": 1, "default": 3},
            "b": {"type": "array", "items": {"type": "integer"}},
            "c": {"$ref": "#/$defs/Color"},
            "e": {"anyOf": [{"type": "null"}, {"type": "integer"}], "default": None},
            "f": {"type": ["null", "boolean"]},
            "g": {"description": "anything"},
            "h": {"anyOf": [{"type": "null"}]},
        },
        "required": ["a"],
        "type": "object",
    }
    schema = tool_schema("t", None, params)
    assert schema["function"]["description"] == "Tool: t"
    assert schema["function"]["strict"] is False
    assert schema["function"]["parameters"] == {
        "type": "object",
        "properties": {
            "a": {"type": "number"},
            "b": {"type": "array"},
            "c": {"type": "string", "enum": ["red", "blue"]},
            "e": {"type": "number"},
            "f": {"type": "boolean"},
            "g": {"type": "string", "description": "anything"},
            "h": {"type": "string"},
        },
        "required": ["a"],
    }
    assert tool_schema("t", "d", {"type": "object"})["function"]["parameters"]["required"] == []


def test_a_reference_cycle_ends_as_a_string() -> None:
    params = {"$defs": {"A": {"$ref": "#/$defs/A"}}, "properties": {"x": {"$ref": "#/$defs/A"}}}
    assert tool_schema("t", "d", params)["function"]["parameters"]["properties"]["x"] == {
        "type": "string"
    }


def test_tool_names_are_checked_before_every_row() -> None:
    good = tool_schema("my_tool", "d", {"type": "object"})
    bad = tool_schema("my-tool", "d", {"type": "object"})
    assert check_tool_schemas([good]) is None
    assert check_tool_schemas([good, bad]) == (
        "Tool validation error: Tool 'my-tool': name must start with letter/underscore and "
        "contain only alphanumeric characters and underscores"
    )


class _Text:
    def __init__(self, text: str) -> None:
        self.text = text


@pytest.mark.parametrize(
    ("structured", "content", "expected"),
    [
        ({"result": 96.0}, [], "96.0"),
        ({"result": True}, [], "true"),
        ({"result": 7}, [], "7"),
        ({"result": None}, [], ""),
        ({"q": "z", "ü": "é"}, [], '{"q": "z", "\\u00fc": "\\u00e9"}'),
        ({"result": [1, 2]}, [], "[1, 2]"),
        (None, [_Text("a"), object(), _Text("b")], "a\nb"),
        (None, [], ""),
    ],
)
def test_tool_content_as_0_2_wrote_it(structured: Any, content: Any, expected: str) -> None:
    assert tool_content(structured, content) == expected


# ------------------------------------------------------------------ loading


def _write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


SERVER = "from fastmcp import FastMCP\nmcp = FastMCP('t')\n"


def test_main_loads_as_a_synthetic_package_and_leaves_no_trace(tmp_path: Path) -> None:
    root = _write(
        tmp_path / "mcp",
        {
            "__init__.py": "raise RuntimeError('never run')\n",
            "main.py": "from server import mcp\nfrom .tools import add\nimport helpers\n"
            "assert __name__ != '__main__'\n",
            "server.py": SERVER,
            "tools.py": "from server import mcp\n@mcp.tool\ndef add(a: int, b: int) -> int:\n"
            "    return a + b\n",
            "helpers.py": "X = 1\n",
        },
    )
    path_before = list(sys.path)
    modules_before = {name: sys.modules.get(name) for name in ("server", "helpers", "tools")}
    server = load_mcp_server(root)
    assert isinstance(server, fastmcp.FastMCP)
    assert sys.path == path_before
    assert {name: sys.modules.get(name) for name in modules_before} == modules_before
    assert not [m for m in sys.modules if m.startswith("_osmosis_mcp_")]
    assert MCPAgentLoop(server).tool_names == ["add"]  # the tools stay


def test_a_module_imported_before_never_shadows_the_directorys_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import types

    theirs = types.ModuleType("server")  # e.g. the project's own server.py, loaded earlier
    monkeypatch.setitem(sys.modules, "server", theirs)
    root = _write(tmp_path / "mcp", {"main.py": "from server import mcp\n", "server.py": SERVER})
    assert isinstance(load_mcp_server(root), fastmcp.FastMCP)
    assert sys.modules["server"] is theirs  # put back as it was


def test_the_server_is_the_first_instance_in_dir_order(tmp_path: Path) -> None:
    root = _write(
        tmp_path / "m",
        {"main.py": "from fastmcp import FastMCP\nzed = FastMCP('z')\nalpha = FastMCP('a')\n"},
    )
    assert load_mcp_server(root).name == "a"


@pytest.mark.parametrize(
    ("files", "message"),
    [
        (None, "MCP directory does not exist"),
        ({}, "No main.py found in MCP directory"),
        ({"main.py": "x = 1\n"}, "No FastMCP instance found in"),
        ({"main.py": "raise ValueError('bad')\n"}, "Error importing"),
    ],
)
def test_load_errors(tmp_path: Path, files: dict[str, str] | None, message: str) -> None:
    root = tmp_path / "m"
    if files is not None:
        root.mkdir()
        _write(root, files)
    with pytest.raises(MCPLoadError, match=message) as caught:
        load_mcp_server(root)
    assert caught.value.code == "BAD_MCP"


def test_missing_fastmcp_names_the_extra(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    _write(tmp_path, {"main.py": SERVER})
    monkeypatch.setitem(sys.modules, "fastmcp", None)
    with pytest.raises(MCPLoadError, match="fastmcp is not installed") as caught:
        load_mcp_server(tmp_path)
    assert "osmosis-client[mcp]" in (caught.value.hint or "")


# ------------------------------------------------------------------ calls


def _server() -> Any:
    from fastmcp.exceptions import ToolError

    server = fastmcp.FastMCP("t")
    seen: dict[str, Any] = {}

    @server.tool
    def multiply(first_val: float, second_val: float) -> float:
        seen["thread"] = threading.current_thread().name
        return first_val * second_val

    @server.tool
    async def greet(name: str) -> str:
        seen["async_thread"] = threading.current_thread().name
        return f"hi {name}"

    @server.tool
    def refuse() -> None:
        raise ToolError("m")

    @server.tool
    def nothing() -> None:
        return None

    server.seen = seen  # type: ignore[attr-defined]
    return server


def _call(loop: MCPAgentLoop, name: str, arguments: Any, call_id: str | None = "c1") -> Any:
    call: dict[str, Any] = {"type": "function", "function": {"name": name, "arguments": arguments}}
    if call_id is not None:
        call["id"] = call_id
    return asyncio.run(loop.call(call))


def test_tool_calls_become_tool_messages() -> None:
    server = _server()
    loop = MCPAgentLoop(server)
    args = json.dumps({"first_val": 12, "second_val": 8})
    assert _call(loop, "multiply", args) == {
        "role": "tool",
        "content": "96.0",
        "tool_call_id": "c1",
    }
    assert server.seen["thread"] != threading.main_thread().name  # a sync tool: off the loop
    assert _call(loop, "greet", {"name": "x"})["content"] == "hi x"
    assert server.seen["async_thread"] == threading.main_thread().name
    assert _call(loop, "nothing", "")["content"] == ""  # empty arguments: {}


@pytest.mark.parametrize(
    ("name", "arguments", "content"),
    [
        ("multiply", "{not json", "Error: Invalid JSON arguments: "),
        ("multiply", "[1, 2]", "Error: Expected dict from JSON, got list"),
        ("nosuch", "{}", "Error: Tool 'nosuch' not found."),
        # fastmcp's own words (they change between its versions), naming the tool
        ("multiply", '{"first_val": "x"}', "Error: "),
        ("refuse", "{}", "Error: m"),
    ],
)
def test_tool_errors_never_fail_the_row(name: str, arguments: str, content: str) -> None:
    message = _call(MCPAgentLoop(_server()), name, arguments, call_id=None)
    assert message["content"].startswith(content)
    if content == "Error: ":
        assert "multiply" in message["content"] and "first_val" in message["content"]
    assert message["tool_call_id"] == "unknown"


def test_the_loop_runs_tools_in_order_and_stops_at_max_turns() -> None:
    from osmosis_client.rollout.agent_loop import CompletionsResult, RolloutRequest
    from osmosis_client.rollout.agent_loop.loop import execute

    loop = MCPAgentLoop(_server())
    sent: list[list[dict[str, Any]]] = []

    class Model:
        async def chat_completions(self, messages: list[dict[str, Any]], **params: Any) -> Any:
            sent.append(list(messages))
            calls = [
                {"id": f"a{len(sent)}", "function": {"name": "greet", "arguments": '{"name":"a"}'}},
                {"id": f"b{len(sent)}", "function": {"name": "nosuch", "arguments": "{}"}},
            ]
            message = {"role": "assistant", "content": None, "tool_calls": calls, "refusal": None}
            return CompletionsResult(message=message, usage={}, finish_reason="tool_calls")

    request = RolloutRequest(
        rollout_id="r",
        server_url="http://127.0.0.1/x",
        messages=[{"role": "user", "content": "go"}],
        completion_params={},
        max_turns=2,
    )
    result = asyncio.run(execute(loop, request, Model()))
    assert result.finish_reason == "max_turns" and len(sent) == 2
    final = result.final_messages
    assert "refusal" not in final[1]  # null fields dropped
    assert [m.get("tool_call_id") for m in final[2:4]] == ["a1", "b1"]
    assert final[-1]["content"] == "Error: Tool 'nosuch' not found."  # appended, never sent
    assert len(final) == 7 and result.metrics.num_tool_calls == 4
