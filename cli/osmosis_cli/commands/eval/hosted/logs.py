"""``osmosis eval logs NAME_OR_ID``: a hosted run's logs, or ``--follow`` until it ends."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated

import typer

from osmosis_cli.commands.eval.hosted.platform import RunArg, scoped_client
from osmosis_cli.context import state
from osmosis_cli.terminal.declare import option
from osmosis_cli.terminal.errors import current_output, handle_errors
from osmosis_cli.terminal.log_lines import CursorOpt, FollowOpt, follow_and_show, show_page

if TYPE_CHECKING:
    from osmosis_client import Client
    from osmosis_client.platform.models import LogEntry


@handle_errors
def logs(
    ctx: typer.Context,
    name: RunArg,
    follow: FollowOpt = False,
    limit: Annotated[
        int, option("--limit N", "How many of the newest entries.", min=1, max=10_000)
    ] = 50,
    cursor: CursorOpt = None,
) -> None:
    """A hosted run's logs: the newest entries (oldest of them first), or --follow to
    tail them until the run ends. With --json: the list envelope (with --follow, one
    JSON object per entry and line)."""
    out = current_output()
    client, _ = scoped_client(state(ctx))
    if follow:

        def tail(c: Client, show: Callable[[list[LogEntry]], None]) -> str:
            final = c.eval_runs.follow_logs(name, show, limit=min(limit, 200))
            return f"{final.name}: {final.status}"

        follow_and_show(out, client, tail, cursor)
        return
    with client:
        if cursor is not None:
            page = client.eval_runs.logs(name, min(limit, 200), cursor)
        else:
            page = client.eval_runs.recent_log_page(name, limit)
    show_page(out, page, f"no log entries for {name} yet")
