"""Experiment trackers on the command line: ``--log-to`` / ``--log-step`` on ``eval run``
(both forms, suites too), ``osmosis eval push RUN --to …`` and the lines saying what
became of each tracker. The sending is the library's (``push_run``, ``RunRequest.log_to``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer

from osmosis_cli.terminal.declare import option
from osmosis_cli.terminal.errors import current_output, handle_errors

if TYPE_CHECKING:
    from osmosis_cli.terminal.output import Output
    from osmosis_local_runner.api.doors import Logged


def tracked_keys(out: Output, tracked: list[Logged], name: str | None) -> dict[str, Any]:
    """A line per tracker (a failure is a warning naming the push that sends it later)
    and the ``trackers`` key of the ``--json`` result."""
    if not tracked:
        return {}
    for logged in tracked:
        where = logged.destination
        if logged.status == "logged":
            out.info(
                f"Logged to {where}"
                + (f": {logged.url}" if logged.url else f" (run {logged.run_id})")
            )
        elif logged.status == "already":
            out.info(f"Already logged to {where} (run {logged.run_id}): nothing sent")
        elif logged.status == "skipped":
            out.warn(f"not logged to {where}: {logged.error}", code="NOT_LOGGED")
        else:
            out.warn(
                f"not logged to {where} ({logged.error}); {_later(logged, name)}",
                code="TRACKER_FAILED",
            )
    return {"trackers": [logged.to_json() for logged in tracked]}


def _later(logged: Logged, name: str | None) -> str:
    """The push that sends a failed destination later, quoted, at the step it had."""
    import shlex

    words = ["osmosis", "eval", "push", name or "RUN", "--to", logged.destination]
    if logged.step is not None:
        words += ["--step", str(logged.step)]
    if logged.code == "HUB_PUBLIC":  # a public repository: only when it may be public
        return f"to publish into it anyway: {shlex.join([*words, '--public'])}"
    return f"send it later: {shlex.join(words)}"


@handle_errors
def push(
    ctx: typer.Context,
    run: Annotated[
        str,
        typer.Argument(
            metavar="RUN",
            help="A local run's name, directory or results file; a suite's directory.",
        ),
    ],
    to: Annotated[
        list[str],
        option(
            "--to TRACKER",
            "mlflow[:URI], wandb[:PROJECT], trackio[:PROJECT] or hf:ORG/NAME (a Hub "
            "dataset; repeatable).",
        ),
    ],
    step: Annotated[
        int | None, option("--step STEP", "The training step to log it at.", min=0)
    ] = None,
    public: Annotated[
        bool, option("--public", "A Hub repository made public (else private).")
    ] = False,
) -> None:
    """Send a finished local run to experiment trackers or the Hugging Face Hub: the ones
    it could not reach when it ran, or new ones. Sending it twice adds nothing."""
    from osmosis_cli.context import workspace_top
    from osmosis_local_runner.api import push_run

    out = current_output()
    tracked = push_run(run, to, step=step, root=workspace_top(), public=public)
    resource = tracked_keys(out, tracked, run)
    failed = [t for t in tracked if t.status == "failed"]
    message = f"{len(tracked) - len(failed)} of {len(tracked)} tracker(s) have the run"
    if not out.operation_result("eval.push", resource=resource, message=message):
        out.info(message)
    if failed:
        raise typer.Exit(1)
