"""``osmosis train submit / list / info / logs / stop``: the workspace's training runs
(published-cli-0.3.8-train.md §2), with the published flags, envelopes and plain rows;
``stop`` of a run that does not exist is ``NOT_FOUND`` and says the run's state after.
``submit`` lives in submit.py."""

from __future__ import annotations

from typing import Annotated

import typer

from osmosis_cli.commands.train import submit as submit_command
from osmosis_cli.commands.train.items import item, row
from osmosis_cli.context import result_scope, state, workspace_top
from osmosis_cli.terminal.commands import runnable
from osmosis_cli.terminal.declare import Command, Group, YesOpt, options_command
from osmosis_cli.terminal.errors import command, current_output, handle_errors
from osmosis_cli.terminal.log_lines import CursorOpt, FollowOpt, LogLimitOpt
from osmosis_cli.terminal.pages import Paging, show_list

app = typer.Typer(cls=Group, help="Training runs on the platform.", no_args_is_help=True)


def register(root: typer.Typer) -> None:
    root.add_typer(app, name="train")


app.command("submit", cls=Command)(
    options_command(submit_command.SubmitOptions, submit_command.submit)
)


@handle_errors
def list_(ctx: typer.Context, opts: Paging) -> None:
    """The workspace's training runs, newest first."""
    client, workspace = state(ctx).scoped_client()
    with client:
        found = opts.collect(client.training_runs.pages, lambda p: p.training_runs)
    head = ["Name", "Status", "Base Model", "Rollout", "Reward", "Submitted", "Submitted By"]
    if show_list(
        current_output(),
        found,
        items=[item(r) for r in found.items],
        rows=[row(r) for r in found.items],
        columns=head,
        keep=("Name",),
        extra=result_scope(workspace),
        empty="No training runs yet: submit one with `osmosis train submit CONFIG`.",
    ):
        current_output().info("Use osmosis train info <name> for details.")


app.command("list", cls=Command)(options_command(Paging, list_))


@command(app, "info")
def info(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(metavar="NAME", help="A training run's name or id.")],
    output: Annotated[
        str | None,
        typer.Option("-o", "--output", metavar="PATH", help="Save the metrics here (.json)."),
    ] = None,
    overwrite: Annotated[
        bool, typer.Option("--overwrite", help="Replace the file -o names.")
    ] = False,
) -> None:
    """A training run: progress, config, checkpoints and metrics (saved as JSON under
    .osmosis/metrics/, or to -o PATH)."""
    from osmosis_cli.commands.train.info import fetch, show

    out = current_output()
    client, workspace = state(ctx).scoped_client()
    with client:
        found = fetch(client, name)
    show(
        out,
        found,
        output=output,
        overwrite=overwrite,
        scope=result_scope(workspace),
        root=workspace_top(),
    )


@command(app, "logs")
def logs(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(metavar="NAME", help="A training run's name or id.")],
    limit: LogLimitOpt = 50,
    cursor: CursorOpt = None,
    follow: FollowOpt = False,
) -> None:
    """One page of a training run's logs (the newest first; --cursor for older ones),
    or --follow: new entries as they come until the run ends."""
    from osmosis_cli.terminal.log_lines import run_logs

    run_logs(
        current_output(),
        state(ctx).scoped_client()[0],
        name=name,
        cursor=cursor,
        what="Training run",
        command=runnable("osmosis", "train", "logs", name),
        fetch=lambda c: c.training_runs.logs(name, limit, cursor),
        follow=(lambda c, show: c.training_runs.follow_logs(name, show, limit).training_run)
        if follow
        else None,
    )


@command(app, "stop")
def stop(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(metavar="NAME", help="A training run's name or id.")],
    yes: YesOpt = False,
) -> None:
    """Stop a queued, pending or running training run."""
    out = current_output()
    if not out.confirm(f'Stop training run "{name}"?', yes=yes):
        out.cancelled("train.stop")
        return
    client, workspace = state(ctx).scoped_client()
    with client:
        after = client.training_runs.stop(name).training_run
    message = f'Training run "{name}" stopped.'
    resource = {"name": name, "status": after.status, **result_scope(workspace)}
    if not out.operation_result("train.stop", resource=resource, message=message):
        out.info(f"{message} It is {after.status}.")


__all__ = ["register"]
