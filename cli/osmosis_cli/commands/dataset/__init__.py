"""``osmosis dataset validate / upload / list / info / preview / download / logs``: the
platform's datasets (the published CLI's ``dataset`` group). ``validate`` is offline."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from osmosis_cli.terminal.declare import Command, Group
from osmosis_cli.terminal.errors import current_output, handle_errors

app = typer.Typer(
    cls=Group, help="Validate and manage the platform's datasets.", no_args_is_help=True
)


@app.command("validate", cls=Command)
@handle_errors
def validate(
    ctx: typer.Context,
    file: Annotated[Path, typer.Argument(metavar="FILE", help="A .jsonl, .csv or .parquet file.")],
) -> None:
    """Check a dataset file as the platform checks an upload (offline; every problem with
    its line)."""
    from osmosis_cli.commands.dataset.checks import require_valid, show_report
    from osmosis_client.platform.dataset_rules import check_dataset

    out = current_output()
    report = check_dataset(file)
    require_valid(report, "validation failed")
    for warning in report.warnings:
        out.warn(warning, code="PARQUET_VALIDATION_SKIPPED")
    if not out.detail_result(report.to_json(), lines=show_report(report)):
        for line in show_report(report):
            out.print(line)


def register(parent: typer.Typer) -> None:
    parent.add_typer(app, name="dataset")
