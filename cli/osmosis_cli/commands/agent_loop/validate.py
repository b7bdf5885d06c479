"""``osmosis validate -m MODULE:ATTR``: check an agent loop without running it."""

from __future__ import annotations

from typing import Annotated

import typer

from osmosis_cli.commands.agent_loop.loading import ModuleOpt, NoCompatOpt, load_loop, show_report
from osmosis_cli.terminal.declare import option
from osmosis_cli.terminal.errors import EXIT_FAILED, current_output, handle_errors


@handle_errors
def validate(
    ctx: typer.Context,
    module: ModuleOpt,
    verbose: Annotated[bool, option("-v --verbose", "A longer report.")] = False,
    no_compat: NoCompatOpt = False,
) -> None:
    """Check an agent loop without running it (exit 0 valid, 1 not)."""
    from osmosis_client.rollout.agent_loop.validate import validate_agent_loop

    out = current_output()
    report = validate_agent_loop(load_loop(out, module, no_compat))
    data = {
        "valid": report.ok,
        "loop_name": report.loop_name,
        "loop_class": report.loop_class,
        "tools": report.tools,
        "errors": report.errors,
        "warnings": report.warnings,
    }
    if not out.detail_result(data):
        show_report(out, report, verbose=verbose)
    if not report.ok:
        raise typer.Exit(EXIT_FAILED)
