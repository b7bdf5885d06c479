"""``osmosis auth login | logout | whoami`` (the published CLI's names) and the top-level
``osmosis login`` / ``logout`` / ``whoami``: device-flow (or token) login, per-workspace
credentials, revocation."""

from __future__ import annotations

import typer

from osmosis_cli.commands.auth.login import login
from osmosis_cli.commands.auth.logout import logout
from osmosis_cli.commands.auth.whoami import whoami
from osmosis_cli.terminal.declare import Command, Group

auth_app = typer.Typer(
    cls=Group,
    help="Log in, log out, and show who you are (also top-level: osmosis login).",
    no_args_is_help=True,
)


def register(app: typer.Typer) -> None:
    for target in (app, auth_app):
        target.command("login", cls=Command)(login)
        target.command("logout", cls=Command)(logout)
        target.command("whoami", cls=Command)(whoami)
    app.add_typer(auth_app, name="auth")


__all__ = ["register"]
