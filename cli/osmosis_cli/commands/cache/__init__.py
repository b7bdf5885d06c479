"""``osmosis cache stats | explain RUN ROW ATTEMPT | prune --older-than D | clear``: the
local runs' model-call cache (docs/cache.md) — the library's ``api/caching.py``; this
face parses and renders."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from osmosis_cli.terminal.declare import Command, Group, option
from osmosis_cli.terminal.errors import current_output, handle_errors

app = typer.Typer(
    cls=Group,
    help="The local model-call cache: stats, explain, prune, clear.",
    no_args_is_help=True,
)

DirOpt = Annotated[
    Path | None,
    option(
        "--dir PATH", "The cache's directory (default: $OSMOSIS_CACHE_DIR, else ~/.cache/osmosis)."
    ),
]


@handle_errors
def stats(ctx: typer.Context, directory: DirOpt = None) -> None:
    """What the cache holds: calls, size, calls per weights.

    Also the oldest and newest entries (``--json``)."""
    from osmosis_local_runner.api.caching import cache_stats

    out = current_output()
    found = cache_stats(directory)
    if out.detail_result(found):
        return
    out.print(f"{found['path']}: {found['entries']:,} calls, {found['bytes']:,} bytes")
    for identity, count in found["identities"].items():
        out.print(f"  {count:>8,}  {identity}")


@handle_errors
def explain(
    ctx: typer.Context,
    run: Annotated[str, typer.Argument(metavar="RUN", help="A local run (name, dir or file).")],
    row: Annotated[int, typer.Argument(metavar="ROW", help="The row's index.")],
    attempt: Annotated[int, typer.Argument(metavar="ATTEMPT", help="The attempt's index.")],
    directory: DirOpt = None,
) -> None:
    """Why one attempt's model calls were, or were not, cached.

    Per call: its key and what it is made of (the weights' identity, the endpoint, the
    row and attempt, the request), whether the cache holds it, and the nearest stored
    call with what differs."""
    from osmosis_local_runner.api.caching import cache_explain

    out = current_output()
    found = cache_explain(run, row, attempt, directory=directory)
    if out.detail_result({"calls": found}):
        return
    if not found:
        out.info("The attempt made no model call.")
    for call in found:
        head = f"call {call['call']}: {call['from']}"
        if "key" in call:
            head += f" · key {call['key'][:16]}… · {'stored' if call['stored'] else 'not stored'}"
        out.print(head)
        if call.get("identity"):
            out.print(f"  weights: {call['identity']}")
        if call.get("why"):
            out.print(f"  {call['why']}")
        for difference in call.get("nearest") or ():
            out.print(f"  nearest stored call: {difference}")


@handle_errors
def prune(
    ctx: typer.Context,
    older_than: Annotated[str, option("--older-than AGE", "Unused for this long: 30d, 12h, 90m.")],
    directory: DirOpt = None,
) -> None:
    """Forget the calls not used for a while."""
    from osmosis_local_runner.api.caching import cache_prune

    out = current_output()
    gone = cache_prune(older_than, directory)
    message = f"Removed {gone:,} calls unused for {older_than}."
    if not out.operation_result("cache.prune", resource={"removed": gone}, message=message):
        out.info(message)


@handle_errors
def clear(
    ctx: typer.Context,
    yes: Annotated[bool, option("--yes -y", "Do not ask.")] = False,
    directory: DirOpt = None,
) -> None:
    """Forget every cached call."""
    from osmosis_local_runner.api.caching import cache_clear

    out = current_output()
    if not out.confirm("Forget every cached model call?", yes=yes):
        out.info("Nothing removed.")
        return
    gone = cache_clear(directory)
    message = f"Removed {gone:,} calls."
    if not out.operation_result("cache.clear", resource={"removed": gone}, message=message):
        out.info(message)


app.command("stats", cls=Command)(stats)
app.command("explain", cls=Command)(explain)
app.command("prune", cls=Command)(prune)
app.command("clear", cls=Command)(clear)


def register(parent: typer.Typer) -> None:
    parent.add_typer(app, name="cache")


__all__ = ["register"]
