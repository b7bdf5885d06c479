"""Local runs on the ``eval`` group: ``run``, the seed form, ``watch`` and ``init``, each
under its own name (main.py's table lists them)."""

from __future__ import annotations

from osmosis_cli.commands.eval.local.init import init
from osmosis_cli.commands.eval.local.run import RunOptions, run as run_config
from osmosis_cli.commands.eval.local.seed import SeedOptions, seed as seed_form
from osmosis_cli.commands.eval.local.watch import WatchOptions, watch as watch_series
from osmosis_cli.terminal.declare import options_command

run = options_command(RunOptions, run_config)
seed = options_command(SeedOptions, seed_form)
watch = options_command(WatchOptions, watch_series)

__all__ = ["init", "run", "seed", "watch"]
