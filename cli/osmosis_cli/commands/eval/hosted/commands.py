"""Hosted runs on the ``eval`` group — submit, list, info, logs, stop, download, retry,
upload: each command under its own name (main.py's table lists them)."""

from __future__ import annotations

from osmosis_cli.commands.eval.hosted.download import download
from osmosis_cli.commands.eval.hosted.logs import logs
from osmosis_cli.commands.eval.hosted.retry import retry
from osmosis_cli.commands.eval.hosted.runs import ListOptions, info, list_runs, stop
from osmosis_cli.commands.eval.hosted.submit import SubmitOptions, submit as submit_run
from osmosis_cli.commands.eval.hosted.upload import upload
from osmosis_cli.terminal.declare import options_command

submit = options_command(SubmitOptions, submit_run)
list_ = options_command(ListOptions, list_runs)

__all__ = ["download", "info", "list_", "logs", "retry", "stop", "submit", "upload"]
