"""Platform log entries as lines (eval, dataset logs): ``--json`` with a stream gives one
JSON object per entry and line."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any

from osmosis_cli.terminal.declare import option
from osmosis_client._redact import safe_json, safe_text

if TYPE_CHECKING:
    from osmosis_cli.terminal.output import Output
    from osmosis_client import Client
    from osmosis_client.platform.models import LogEntry, LogPage

#: the options of every one-page log command (the platform's pages hold 1-200 entries)
LogLimitOpt = Annotated[int, option("--limit N", "Entries (1-200).", min=1, max=200)]
CursorOpt = Annotated[str | None, option("--cursor C", "An older page's cursor (next_cursor).")]
FollowOpt = Annotated[bool, option("--follow -f", "Keep printing new entries until the run ends.")]


def show_entries(out: Output, entries: list[LogEntry]) -> None:
    """Entries as lines (with --json and --follow: one JSON object per line)."""
    for entry in entries:
        if out.json_mode:
            out.stdout.write(safe_json(json.dumps(entry.to_json(), ensure_ascii=False)) + "\n")
        else:
            out.stdout.write(safe_text(log_line(entry)) + "\n")
    out.stdout.flush()
    out.emitted = True


def log_line(entry: LogEntry) -> str:
    line = f"{entry.timestamp}  {entry.level.upper():<7} {entry.step or '-':<10} {entry.message}"
    if entry.details:
        details = json.dumps(entry.details, ensure_ascii=False, separators=(",", ":"))
        line += f"  {details if len(details) <= 200 else details[:199] + '…'}"
    return line


def fetch_and_show(
    out: Output,
    client: Client,
    fetch: Callable[[Client], LogPage],
    command: str,
    empty: str = "No log entries yet.",
) -> None:
    """A one-page log command's whole body: the page fetched with ``client`` (closed
    after), shown with the ``command`` that reads the older one (``… --cursor C``)."""
    with client:
        page = fetch(client)
    show_page(out, page, empty, older=f"{command} --cursor {{cursor}}")


def show_page(out: Output, page: LogPage, empty: str, older: str | None = None) -> None:
    """One page of a platform log: the list envelope (``--json``/``--plain``, with
    ``next_cursor``) or the lines (``empty`` when there are none; ``older``, a command
    with ``{cursor}``, when there is an older page)."""
    entries = page.logs
    if out.list_result(
        [e.to_json() for e in entries],
        rows=[log_line(e).split(None, 3) for e in entries],
        has_more=page.next_cursor is not None,
        extra={"next_cursor": page.next_cursor},
    ):
        return
    if not entries:
        out.info(empty)
    show_entries(out, entries)
    if older and page.next_cursor:
        out.info("older entries: " + older.replace("{cursor}", page.next_cursor))


def follow_and_show(
    out: Output,
    client: Client,
    follow: Callable[[Client, Callable[[list[LogEntry]], None]], str],
    cursor: str | None = None,
) -> None:
    """A ``--follow`` log command's whole body: new entries printed as they come (with
    ``--json``, one object per line) until the run ends; ``follow`` tails with
    ``client`` (closed after) and says how the run ended, the last line."""
    from osmosis_client.errors import InvalidInputError

    if cursor is not None:
        raise InvalidInputError("--cursor and --follow exclude each other", code="USAGE")
    with client:
        final = follow(client, lambda entries: show_entries(out, entries))
    out.emitted = True
    out.info(final)


def run_logs(
    out: Output,
    client: Client,
    *,
    fetch: Callable[[Client], LogPage],
    follow: Callable[[Client, Callable[[list[LogEntry]], None]], Any] | None,
    what: str,
    name: str,
    command: str,
    cursor: str | None,
) -> None:
    """A platform run's ``logs`` command (training, benchmark): one page, or with
    ``follow`` (which tails and returns the run as it ended) new entries until it ends."""
    if follow is None:
        fetch_and_show(out, client, fetch, command)
        return

    def tail(c: Client, show: Callable[[list[LogEntry]], None]) -> str:
        run = follow(c, show)
        return f"{what} {run.name or name} ended: {run.status}."

    follow_and_show(out, client, tail, cursor)
