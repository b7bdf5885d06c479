"""``osmosis eval logs NAME_OR_ID``: a hosted run's logs, or ``--follow`` until it ends."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Annotated

import typer

from osmosis_cli.commands.eval.platform import scoped_client
from osmosis_cli.context import state
from osmosis_cli.terminal.errors import current_output, handle_errors
from osmosis_client._redact import safe_json, safe_text

if TYPE_CHECKING:
    from osmosis_client.platform.models import LogEntry


@handle_errors
def logs(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(metavar="NAME_OR_ID", help="A run's name or id.")],
    follow: Annotated[
        bool, typer.Option("--follow", "-f", help="Keep printing new entries until the run ends.")
    ] = False,
    limit: Annotated[
        int,
        typer.Option(
            "--limit", min=1, max=10_000, metavar="N", help="How many of the newest entries."
        ),
    ] = 50,
    json_output: Annotated[
        bool, typer.Option("--json", help="One JSON object per entry and line (JSON Lines).")
    ] = False,
) -> None:
    """A hosted run's logs: the newest entries (oldest of them first), or --follow to
    tail them until the run ends."""
    app_state = state(ctx)
    out = current_output()
    client, _ = scoped_client(app_state)

    def show(entries: list[LogEntry]) -> None:
        for entry in entries:
            if out.json_mode:
                out.stdout.write(safe_json(json.dumps(entry.to_json(), ensure_ascii=False)) + "\n")
            else:
                out.stdout.write(safe_text(_log_line(entry)) + "\n")
        out.stdout.flush()

    with client:
        if not follow:
            entries = client.eval_runs.recent_logs(name, limit)
            if not entries:
                out.info(f"no log entries for {name} yet")
            show(entries)
            return
        final = client.eval_runs.follow_logs(name, show, limit=min(limit, 200))
    out.info(f"{final.name}: {final.status}")


def _log_line(entry: LogEntry) -> str:
    line = f"{entry.timestamp}  {entry.level.upper():<7} {entry.step or '-':<10} {entry.message}"
    if entry.details:
        details = json.dumps(entry.details, ensure_ascii=False, separators=(",", ":"))
        line += f"  {details if len(details) <= 200 else details[:199] + '…'}"
    return line
