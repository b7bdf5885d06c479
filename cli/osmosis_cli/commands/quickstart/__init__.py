"""``osmosis quickstart [-w NAME] [--intent I] [--no-record]``: where this machine and
checkout stand on the way to a first run, step by step
(``osmosis_client.platform.quickstart`` reads it), and what to do next. On a terminal it
asks only what you want to do (when ``--intent`` is not given) and prints a prompt for a
coding agent; with ``--json`` (or in a pipe) it asks nothing and prints the plan — the
published ``quickstart`` refuses to run there (``INTERACTIVE_REQUIRED``)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Literal

import typer

from osmosis_cli.context import state
from osmosis_cli.terminal.declare import Command, option
from osmosis_cli.terminal.errors import current_output, handle_errors

if TYPE_CHECKING:
    from osmosis_cli.context import AppState
    from osmosis_cli.terminal.output import Output
    from osmosis_client import Client
    from osmosis_client.platform.quickstart import QuickstartPlan

MARKS = {True: "✓", False: "•"}


@handle_errors
def quickstart(
    ctx: typer.Context,
    workspace: Annotated[
        str | None, option("-w --workspace NAME", "The workspace (name or id).")
    ] = None,
    intent: Annotated[
        Literal["eval", "train", "benchmark", "explore"] | None,
        option("--intent", "What you want to do first (asked on a terminal)."),
    ] = None,
    no_record: Annotated[
        bool, option("--no-record", "Do not tell the platform it was completed.")
    ] = False,
) -> None:
    """Where you stand on the way to a first run, and the next command of each step."""
    from osmosis_client.platform import quickstart as qs

    out = current_output()
    app = state(ctx)
    client = _client(app)
    try:
        plan = qs.plan_quickstart(
            client, Path.cwd(), workspace=workspace, intent=intent, platform_url=app.platform_url()
        )
        if plan.intent is None and out.interactive:
            chosen = out.choose("What do you want to do first?", list(qs.INTENTS))
            if chosen is not None:
                plan = plan.with_intent(chosen)  # type: ignore[arg-type]
        recorded = False
        # a person finished it; a plan printed for an agent (--json, a pipe) changes nothing
        if client is not None and plan.ready and plan.intent and out.interactive and not no_record:
            recorded = qs.record(client, plan)
            if not recorded:
                out.warn("the platform did not record the quickstart (nothing else changes)")
    finally:
        if client is not None:
            client.close()
    _show(out, plan, recorded)


def _client(app: AppState) -> Client | None:
    """A logged-in client, or None when there are no credentials (the plan's first step)."""
    from osmosis_client.errors import NotAuthenticatedError

    try:
        auth = app.resolve()
    except NotAuthenticatedError:
        return None
    return app.client(auth)


def _show(out: Output, plan: QuickstartPlan, recorded: bool) -> None:
    resource = {**plan.to_dict(), "completion_recorded": recorded}
    todo = [s for s in plan.steps if not s.done]
    message = "Ready." if plan.ready else f"{len(todo)} step(s) to go: {todo[0].what}."
    steps = [
        {"action": s.id, "command": s.command, "url": s.url, "description": s.what} for s in todo
    ] + [{"action": "next", "command": n["command"], "description": n["what"]} for n in plan.next]
    if out.json_mode:  # --plain reads as the lines below: each step is one
        out.operation_result("quickstart", resource=resource, message=message, next_steps=steps)
        return
    for step in plan.steps:
        line = f"{MARKS[step.done]} {step.what}"
        if not step.done and (step.command or step.url):
            line += f": {step.command or step.url}"
        out.info(line)
    if plan.choices:
        out.info("  your workspaces: " + ", ".join(plan.choices))
    if plan.next and plan.ready:
        out.info("Next:")
        for n in plan.next:
            out.info(f"  {n['command']}    # {n['what']}")
    if plan.agent_prompt:
        out.info("A prompt for your coding agent:")
        out.print(plan.agent_prompt)
    if plan.intent is None:
        out.info("Say what you want to do with --intent eval|train|benchmark|explore.")


def register(app: typer.Typer) -> None:
    app.command("quickstart", cls=Command)(quickstart)


__all__ = ["register"]
