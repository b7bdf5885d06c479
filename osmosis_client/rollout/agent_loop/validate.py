"""``osmosis validate``'s checks of an agent loop (rollout-protocol.md part A).

``name`` is a non-empty string; ``get_tools`` on a synthetic request returns a list
of tool schemas or well-formed dicts (``type``/``function``/``name`` required; a
missing description or non-object parameters are warnings); ``run`` is a coroutine
function. ``run`` is never executed.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from osmosis_client.rollout.agent_loop.schemas import RolloutRequest, tool_to_dict

VALIDATION_ROLLOUT_ID = "validation-test-rollout"


@dataclass
class ValidationReport:
    loop_name: str | None
    loop_class: str
    tools: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.errors


def synthetic_request() -> RolloutRequest:
    return RolloutRequest(
        rollout_id=VALIDATION_ROLLOUT_ID,
        server_url="http://localhost:8000",
        messages=[{"role": "user", "content": "validation"}],
        metadata={"_validation": True},
    )


def validate_agent_loop(loop: Any) -> ValidationReport:
    name = getattr(loop, "name", None)
    report = ValidationReport(
        loop_name=name if isinstance(name, str) else None, loop_class=type(loop).__name__
    )
    if not isinstance(name, str) or not name.strip():
        report.errors.append("`name` must be a non-empty string")
    run = getattr(loop, "run", None)
    if not callable(run):
        report.errors.append("there is no run() method")
    elif not inspect.iscoroutinefunction(run):
        report.errors.append("run() must be `async def run(self, ctx)`")
    _check_tools(loop, report)
    return report


def _check_tools(loop: Any, report: ValidationReport) -> None:
    get_tools = getattr(loop, "get_tools", None)
    if not callable(get_tools):
        report.errors.append("there is no get_tools() method")
        return
    try:
        tools = get_tools(synthetic_request())
    except Exception as exc:
        report.errors.append(f"get_tools() raised {type(exc).__name__}: {exc}")
        return
    if not isinstance(tools, list):
        report.errors.append(f"get_tools() must return a list, not {type(tools).__name__}")
        return
    for i, tool in enumerate(tools):
        try:
            data = tool_to_dict(tool)
        except TypeError as exc:
            report.errors.append(f"tool {i}: {exc}")
            continue
        _check_tool(i, data, report)


def _check_tool(i: int, tool: Mapping[str, Any], report: ValidationReport) -> None:
    function = tool.get("function")
    if tool.get("type") != "function" or not isinstance(function, Mapping):
        report.errors.append(f'tool {i}: needs "type": "function" and a "function" object')
        return
    name = function.get("name")
    if not isinstance(name, str) or not name:
        report.errors.append(f"tool {i}: function.name is required")
        return
    report.tools.append(name)
    if not function.get("description"):
        report.warnings.append(f"tool {name}: no description (models choose tools by it)")
    parameters = function.get("parameters")
    if parameters is not None and (
        not isinstance(parameters, Mapping) or parameters.get("type", "object") != "object"
    ):
        report.warnings.append(
            f'tool {name}: parameters should be a JSON schema of "type": "object"'
        )
