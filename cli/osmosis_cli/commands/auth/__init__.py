"""``osmosis login``, ``logout`` and ``whoami``: device-flow (or token) login, per-workspace
credentials, revocation."""

from __future__ import annotations

import typer

from osmosis_cli.commands.auth.login import login
from osmosis_cli.commands.auth.logout import logout
from osmosis_cli.commands.auth.whoami import whoami
from osmosis_cli.terminal.declare import Command


def register(app: typer.Typer) -> None:
    app.command("login", cls=Command)(login)
    app.command("logout", cls=Command)(logout)
    app.command("whoami", cls=Command)(whoami)


__all__ = ["register"]
