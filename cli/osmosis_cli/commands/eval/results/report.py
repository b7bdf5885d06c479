"""``osmosis eval report RESULTS… [-o report.html]``: one self-contained HTML page."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from osmosis_cli.terminal.declare import option
from osmosis_cli.terminal.errors import current_output, handle_errors
from osmosis_cli.terminal.sizes import size_text


@handle_errors
def report(
    ctx: typer.Context,
    results: Annotated[
        list[Path],
        typer.Argument(
            metavar="RESULTS...",
            help="Results documents, run directories or names (hosted too), a suite directory.",
        ),
    ],
    output: Annotated[Path, option("-o --output PATH", "The HTML file to write.")] = Path(
        "report.html"
    ),
    by: Annotated[
        str | None,
        option(
            "--by COLUMN", "Open the report sliced by this dataset column (the page has a picker)."
        ),
    ] = None,
    reviewed: Annotated[
        bool,
        option(
            "--reviewed",
            "Score the attempts people reviewed as they judged them (the page says so).",
        ),
    ] = False,
) -> None:
    """Write one self-contained HTML report (no network needed to view it) of one run or
    several (a suite's entries, A vs B): summary cards, charts, a searchable per-row
    table and every attempt's transcript."""
    from osmosis_cli.commands.eval.hosted.download import results_path
    from osmosis_local_runner.results.reports.report import write_report

    out = current_output()
    paths = [results_path(ctx, r) for r in results]
    written = write_report(paths, output, by=by, reviewed=reviewed)
    message = (
        f"Report written to {written.path} ({written.rows:,} rows, {size_text(written.bytes)})"
    )
    resource = {"output_path": str(written.path), "rows": written.rows, "bytes": written.bytes}
    if not out.operation_result("eval.report", resource=resource, message=message):
        out.info(message)
