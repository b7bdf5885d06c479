"""Platform log entries as lines (eval, dataset logs): ``--json`` with a stream gives one
JSON object per entry and line."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from osmosis_client._redact import safe_json, safe_text

if TYPE_CHECKING:
    from osmosis_cli.terminal.output import Output
    from osmosis_client.platform.models import LogEntry


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
