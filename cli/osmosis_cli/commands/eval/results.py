"""The results commands on the ``eval`` group: compare, rescore, report, view, schema,
push."""

from __future__ import annotations

import typer

from osmosis_cli.commands.eval import (
    agreement,
    compare,
    plan,
    report,
    rescore,
    schema,
    trackers,
    view,
)
from osmosis_cli.terminal.declare import Command


def register(app: typer.Typer) -> None:
    app.command("compare", cls=Command)(compare.compare)
    app.command("rescore", cls=Command)(rescore.rescore)
    app.command("report", cls=Command)(report.report)
    app.command("view", cls=Command)(view.view)
    app.command("schema", cls=Command)(schema.schema)
    app.command("push", cls=Command)(trackers.push)
    app.command("agreement", cls=Command)(agreement.agreement)
    app.command("plan", cls=Command)(plan.plan)
