"""0.2 agent loops as rollout servers: ``osmosis serve`` and ``osmosis validate``."""

from __future__ import annotations

import typer

from osmosis_cli.commands.agent_loop.serve import ServeOptions, serve
from osmosis_cli.commands.agent_loop.validate import validate
from osmosis_cli.terminal.declare import Command, options_command


def register(app: typer.Typer) -> None:
    app.command("serve", cls=Command)(options_command(ServeOptions, serve))
    app.command("validate", cls=Command)(validate)


__all__ = ["register"]
