"""``osmosis workspace list / current / switch``."""

from __future__ import annotations

import typer

from osmosis_cli.commands.workspace.workspace import app


def register(root: typer.Typer) -> None:
    root.add_typer(app, name="workspace")


__all__ = ["app", "register"]
