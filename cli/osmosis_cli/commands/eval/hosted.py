"""Hosted runs on the ``eval`` group: submit, list, info, logs, stop — and ``init``."""

from __future__ import annotations

import typer

from osmosis_cli.commands.eval import download, init, logs, retry, runs, submit, upload
from osmosis_cli.terminal.declare import Command, options_command


def register(app: typer.Typer) -> None:
    app.command("submit", cls=Command)(options_command(submit.SubmitOptions, submit.submit))
    app.command("list", cls=Command)(options_command(runs.ListOptions, runs.list_runs))
    app.command("info", cls=Command)(runs.info)
    app.command("stop", cls=Command)(runs.stop)
    app.command("init", cls=Command)(init.init)
    app.command("logs", cls=Command)(logs.logs)
    app.command("download", cls=Command)(download.download)
    app.command("retry", cls=Command)(retry.retry)
    app.command("upload", cls=Command)(upload.upload)
