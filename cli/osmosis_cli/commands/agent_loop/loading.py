"""Loading a 0.2 agent loop from ``-m MODULE:ATTR`` (with the ``osmosis_ai`` layer), and
the report of its checks — what ``serve`` and ``validate`` share."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

from osmosis_cli.terminal.declare import option

if TYPE_CHECKING:
    from osmosis_cli.terminal.output import Output
    from osmosis_client.rollout.agent_loop.validate import ValidationReport

ModuleOpt = Annotated[str, option("-m --module MODULE:ATTR", "The RolloutAgentLoop.")]
NoCompatOpt = Annotated[
    bool, option("--no-compat", "Do not serve `osmosis_ai` 0.2 imports from osmosis-client.")
]


def load_loop(out: Output, module: str, no_compat: bool) -> Any:
    from osmosis_cli.user_code import prepare_user_imports
    from osmosis_local_runner.api.doors import load_agent_loop, load_attr

    prepare_user_imports(out, no_compat=no_compat)
    value, where = load_attr(module)
    return load_agent_loop(value, where)


def show_report(out: Output, report: ValidationReport, *, verbose: bool) -> None:
    name = report.loop_name or "?"
    verdict = "valid" if report.ok else "INVALID"
    out.print(f"Agent loop {name!r} ({report.loop_class}): {verdict}")
    tools = ", ".join(report.tools) or "none"
    out.print(f"  tools ({len(report.tools)}): {tools}")
    for warning in report.warnings:
        out.print(f"  warning: {warning}")
    for error in report.errors:
        out.print(f"  error: {error}")
    if verbose and report.ok:
        out.print("  run() is async; get_tools() accepted the validation request")
