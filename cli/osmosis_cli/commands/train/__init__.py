"""``osmosis train submit / list / info / logs / stop``: the workspace's training runs
(published-cli-0.3.8-train.md §2), with the published flags, envelopes and plain rows;
``list``, ``logs`` and ``stop`` are every platform run's (osmosis_cli/platform_runs.py);
``submit`` lives in submit.py."""

from __future__ import annotations

from typing import Annotated

import typer

from osmosis_cli.commands.train import submit as submit_command
from osmosis_cli.commands.train.items import item, row
from osmosis_cli.context import result_scope, state, workspace_top
from osmosis_cli.platform_runs import ListView, RunKind, add_run_commands, name_arg
from osmosis_cli.terminal.declare import Command, Group, option, options_command
from osmosis_cli.terminal.errors import current_output

app = typer.Typer(cls=Group, help="Training runs on the platform.", no_args_is_help=True)


def register(root: typer.Typer) -> None:
    root.add_typer(app, name="train")


app.command("submit", cls=Command)(
    options_command(submit_command.SubmitOptions, submit_command.submit)
)


TRAINING = RunKind("training run", ("train",), "train", "training_runs")
COLUMNS = ["Name", "Status", "Base Model", "Rollout", "Reward", "Submitted", "Submitted By"]
LIST = ListView(COLUMNS, item, row, "submit one with `osmosis train submit CONFIG`")


def info(
    ctx: typer.Context,
    name: Annotated[str, name_arg(TRAINING)],
    output: Annotated[
        str | None, option("-o --output PATH", "Save the metrics here (.json).")
    ] = None,
    overwrite: Annotated[bool, option("--overwrite", "Replace the file -o names.")] = False,
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


add_run_commands(app, TRAINING, LIST, info)


__all__ = ["register"]
