"""0.2 agent loops: ``osmosis serve``, ``osmosis validate`` and ``osmosis test``."""

from __future__ import annotations

import typer

from osmosis_cli.commands.agent_loop.serve import ServeOptions, serve
from osmosis_cli.commands.agent_loop.tester import TestOptions, test
from osmosis_cli.commands.agent_loop.validate import validate
from osmosis_cli.terminal.declare import Command, options_command


def register(app: typer.Typer) -> None:
    app.command("serve", cls=Command)(options_command(ServeOptions, serve))
    app.command("validate", cls=Command)(validate)
    app.command("test", cls=Command)(options_command(TestOptions, test))


__all__ = ["register"]
