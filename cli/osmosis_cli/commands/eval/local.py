"""Local runs: ``osmosis eval run`` and the seed form, registered on the ``eval`` group."""

from __future__ import annotations

import typer

from osmosis_cli.commands.eval.run import RunOptions, run
from osmosis_cli.commands.eval.seed import SeedOptions, seed
from osmosis_cli.commands.eval.watch import WatchOptions, watch
from osmosis_cli.terminal.declare import SEED_COMMAND, Command, options_command


def register(app: typer.Typer) -> None:
    app.command("run", cls=Command)(options_command(RunOptions, run))
    app.command(SEED_COMMAND, cls=Command)(options_command(SeedOptions, seed))
    app.command("watch", cls=Command)(options_command(WatchOptions, watch))
