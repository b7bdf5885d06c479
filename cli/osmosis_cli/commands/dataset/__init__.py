"""``osmosis dataset validate / upload / list / info / preview / download / logs``: the
platform's datasets (the published CLI's ``dataset`` group). ``validate`` is offline;
``upload`` validates first, then registers, sends and completes (aborting on failure)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from osmosis_cli.context import state
from osmosis_cli.terminal.commands import runnable
from osmosis_cli.terminal.declare import Command, Group, YesOpt, option, options_command
from osmosis_cli.terminal.errors import command, current_output, handle_errors
from osmosis_cli.terminal.log_lines import CursorOpt, LogLimitOpt
from osmosis_cli.terminal.pages import Paging, show_list
from osmosis_cli.terminal.times import when

if TYPE_CHECKING:
    from osmosis_client.platform.dataset.dataset_models import Dataset

DatasetArg = Annotated[str, typer.Argument(metavar="NAME", help="A dataset's name or id.")]
app = typer.Typer(
    cls=Group, help="Validate and manage the platform's datasets.", no_args_is_help=True
)


@command(app, "validate")
def validate(
    ctx: typer.Context,
    file: Annotated[Path, typer.Argument(metavar="FILE", help="A .jsonl, .csv or .parquet file.")],
) -> None:
    """Check a dataset file as the platform checks an upload (offline; every problem with
    its line)."""
    from osmosis_cli.commands.dataset.checks import require_valid, show_report
    from osmosis_client.platform.dataset.dataset_rules import check_dataset

    out = current_output()
    report = check_dataset(file)
    require_valid(report, "validation failed")
    for warning in report.warnings:
        out.warn(warning, code="PARQUET_VALIDATION_SKIPPED")
    if not out.detail_result(report.to_json(), lines=show_report(report)):
        for line in show_report(report):
            out.print(line)


@command(app, "upload")
def upload(
    ctx: typer.Context,
    file: Annotated[Path, typer.Argument(metavar="FILE", help="A .jsonl, .csv or .parquet file.")],
    overwrite: Annotated[
        bool, option("--overwrite", "Replace a dataset of the same name.")
    ] = False,
    yes: YesOpt = False,
) -> None:
    """Validate FILE, then upload it as the dataset named by its stem (data/qa.jsonl → qa)."""
    from osmosis_cli.commands.dataset.checks import require_valid
    from osmosis_cli.terminal.progress import byte_progress
    from osmosis_cli.terminal.sizes import size_text
    from osmosis_client.platform.dataset.dataset_rules import check_dataset
    from osmosis_client.platform.dataset.dataset_upload import upload_dataset
    from osmosis_client.platform.settings import config_dir

    out = current_output()
    report = check_dataset(file)
    require_valid(report, "file validation failed")
    for warning in report.warnings:
        out.warn(warning, code="PARQUET_VALIDATION_SKIPPED")
    out.info(f"Dataset {report.dataset_name!r}: {report.file_name}, {size_text(report.file_size)}")
    if overwrite:
        out.warn("--overwrite will replace the existing dataset with the same name")
    if not out.confirm("Proceed with upload?", yes=yes):
        out.cancelled("dataset.upload")
        return
    client, _ = state(ctx).scoped_client()
    with client, byte_progress(out, report.file_size, "uploading") as sent:
        record = upload_dataset(
            client,
            report.file,
            overwrite=overwrite,
            on_bytes=sent,
            on_warning=out.warn,
            journal=config_dir() / "uploads",
        )
    item = record.to_json()
    message = f"Dataset uploaded: {record.file_name or report.dataset_name}"
    steps = (
        [{"label": "View dataset", "url": record.platform_url}]
        if record.platform_url
        else [{"action": "dataset_info", "id": record.id}]
    )
    if not out.operation_result("dataset.upload", resource=item, message=message, next_steps=steps):
        out.info(
            f"{message} (status {record.status or 'processing'}; see `osmosis dataset info "
            f"{report.dataset_name}`)"
        )


@handle_errors
def list_(ctx: typer.Context, opts: Paging) -> None:
    """The workspace's datasets, newest first."""
    from osmosis_cli.terminal.sizes import size_text

    client, _ = state(ctx).scoped_client()
    with client:
        found = opts.collect(client.datasets.pages, lambda p: p.datasets)
    rows = [
        [
            r.file_name or r.id,
            r.status or "",
            size_text(r.file_size),
            when(r.created_at),
            r.creator_name or "",
        ]
        for r in found.items
    ]
    show_list(
        current_output(),
        found,
        items=[r.to_json() for r in found.items],
        rows=rows,
        columns=["name", "status", "size", "created", "by"],
        keep=("name",),
        empty="No datasets yet: `osmosis dataset upload data/NAME.jsonl`",
    )


app.command("list", cls=Command)(options_command(Paging, list_))


@command(app, "info")
def info(ctx: typer.Context, name: DatasetArg) -> None:
    """One dataset: status, size, rows, format."""
    out = current_output()
    client, _ = state(ctx).scoped_client()
    with client:
        record = client.datasets.get(name)
    item = record.to_json()
    if not out.detail_result(item):
        for key, value in item.items():
            out.print(f"{key.replace('_', ' ').capitalize()}: {'' if value is None else value}")
    if record.status == "error":
        out.info("See logs with: " + runnable("osmosis", "dataset", "logs", name))


@command(app, "preview")
def preview(
    ctx: typer.Context,
    name: DatasetArg,
    rows: Annotated[int, option("--rows N", "How many rows (1-100).", min=1, max=100)] = 5,
) -> None:
    """The first rows of an uploaded dataset, from the platform's preview."""
    import json

    out = current_output()
    client, _ = state(ctx).scoped_client()
    with client:
        record = client.datasets.get(name)
    data = preview_document(record, rows)
    if out.detail_result(data):
        return
    if not data["available"]:
        out.info(data["message"])
        return
    shown = data["rows"]
    for row in shown if isinstance(shown, list) else [shown]:
        out.print(json.dumps(row, ensure_ascii=False))
    out.info(f"{data['returned_rows']} row(s) of {record.row_count or '?'}")


def preview_document(record: Dataset, rows: int) -> dict[str, Any]:
    from osmosis_client.platform.dataset.dataset_models import IN_PROGRESS

    preview = record.data_preview
    data: dict[str, Any] = {"dataset": record.to_json(), "requested_rows": rows}
    if preview is None:
        status = record.status or "unknown"
        message = (
            f"Dataset is still processing (status: {status})."
            if status in IN_PROGRESS
            else "No preview available for this dataset."
        )
        data.update(rows=None, returned_rows=0, available=False, message=message)
        return data
    if isinstance(preview, list):
        preview = preview[:rows]
    data.update(
        rows=preview,
        returned_rows=len(preview) if isinstance(preview, list) else 1,
        available=True,
    )
    return data


@command(app, "download")
def download(
    ctx: typer.Context,
    name: DatasetArg,
    output: Annotated[
        str, option("--output -o PATH", "A file to write, or an existing directory to write into.")
    ] = ".",
    overwrite: Annotated[bool, option("--overwrite", "Replace an existing file.")] = False,
) -> None:
    """Fetch an uploaded dataset's file (written whole or not at all; size checked)."""
    from osmosis_cli.terminal.progress import byte_progress
    from osmosis_client.platform.dataset.dataset_download import download_dataset

    out = current_output()
    client, _ = state(ctx).scoped_client()
    with client, byte_progress(out, None, "downloading") as got:
        record, path = download_dataset(client, name, output, overwrite=overwrite, on_bytes=got)
    item = {**record.to_json(), "output_path": str(path)}
    message = f"Dataset downloaded: {path}"
    if not out.operation_result("dataset.download", resource=item, message=message):
        out.info(message)


@command(app, "logs")
def logs(
    ctx: typer.Context,
    name: DatasetArg,
    limit: LogLimitOpt = 50,
    cursor: CursorOpt = None,
) -> None:
    """A dataset's processing logs: the newest page (oldest first within it)."""
    from osmosis_cli.terminal.log_lines import fetch_and_show

    fetch_and_show(
        current_output(),
        state(ctx).scoped_client()[0],
        lambda c: c.datasets.logs(name, limit, cursor),
        runnable("osmosis", "dataset", "logs", name),
        f"no log entries for {name}",
    )


def register(parent: typer.Typer) -> None:
    parent.add_typer(app, name="dataset")
