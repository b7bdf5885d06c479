"""``osmosis upgrade [--check]``: this CLI brought up to date where it is installed
(``osmosis_cli.upgrade`` decides how); the published ``upgrade`` envelope —
``status: no_update`` when there is nothing newer (``resource.update_available`` says
it either way, and ``--check`` changes nothing)."""

from __future__ import annotations

from typing import Annotated

import typer

from osmosis_cli.terminal.declare import Command, option
from osmosis_cli.terminal.errors import current_output, handle_errors


@handle_errors
def upgrade(
    ctx: typer.Context,
    check: Annotated[bool, option("--check", "Only say whether a newer version exists.")] = False,
) -> None:
    """Upgrade osmosis-client with the installer that installed it (never osmosis-ai)."""
    from osmosis_cli import upgrade as up

    out = current_output()
    plan = up.plan()
    resource = plan.resource()
    if not plan.needed:
        message = f"Already up to date ({up.DIST} {plan.installed})."
        if not out.operation_result(
            "upgrade", resource=resource, message=message, status="no_update"
        ):
            out.info(message)
        return
    if check:
        message = f"{up.DIST} {plan.latest} is available (installed: {plan.installed})."
        steps = [{"action": "upgrade", "command": " ".join(plan.command)}]
        if not out.operation_result(
            "upgrade", resource=resource, message=message, next_steps=steps
        ):
            out.info(f"{message} Upgrade with: osmosis upgrade")
        return
    out.info(f"Upgrading {up.DIST} {plan.installed} → {plan.latest}: {' '.join(plan.command)}")
    done = up.run(plan)
    if out.json_mode or out.plain:
        resource.update(stdout=done.stdout[-4000:], stderr=done.stderr[-4000:])
    message = f"Upgraded {up.DIST} to {plan.latest}."
    if not out.operation_result("upgrade", resource=resource, message=message):
        out.info(message)


def register(app: typer.Typer) -> None:
    app.command("upgrade", cls=Command)(upgrade)


__all__ = ["register"]
