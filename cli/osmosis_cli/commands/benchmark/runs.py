"""``osmosis benchmark runs list / info / logs / stop / download`` (published-cli-0.3.8-
train.md §4.4-4.8). Better than published: ``stop`` reports the state the platform
answers (0.3.8 prints "stopped" without asking), and ``download`` is ``eval download``'s
engine — verified, resumable, never writing through a symlink or outside the run's
directory."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from osmosis_cli.context import result_scope, state, workspace_top
from osmosis_cli.platform_runs import ListView, RunKind, add_run_commands, name_arg
from osmosis_cli.terminal.declare import Group, option
from osmosis_cli.terminal.downloads import LargeYesOpt, RefetchOpt
from osmosis_cli.terminal.errors import command, current_output
from osmosis_cli.terminal.sizes import size_text

app = typer.Typer(cls=Group, help="Runs of benchmarks.", no_args_is_help=True)
CONFIRM_BYTES = 100 * 1024 * 1024


BENCHMARK_RUNS = RunKind("benchmark run", ("benchmark", "runs"), "benchmark", "benchmark_runs")
COLUMNS = ["Name", "Status", "Results", "Benchmark", "Agents", "Best Pass@1", "Submitted", "By"]
NameArg = Annotated[str, name_arg(BENCHMARK_RUNS)]


def _render() -> Any:
    # the renderers import the SDK's models: loaded when a list is shown, not at start-up
    from osmosis_cli.commands.benchmark import render

    return render


def info(ctx: typer.Context, name: NameArg) -> None:
    """A benchmark run: progress, configuration, agents and their results."""
    from osmosis_cli.commands.benchmark.render import run_detail_data, run_lines

    out = current_output()
    client, workspace = state(ctx).scoped_client()
    with client:
        detail = client.benchmark_runs.get(name)
    lines = run_lines(detail)
    if out.detail_result({**run_detail_data(detail), **result_scope(workspace)}, lines=lines):
        return
    for line in lines:
        out.print(line)
    run = detail.benchmark_run
    if run.platform_url:
        out.info(f"View: {run.platform_url}")
    if run.status == "failed":
        out.info(f"See logs with: osmosis benchmark runs logs {run.name}")
    if not run.terminal:
        out.info(f"Stop with: osmosis benchmark runs stop {run.name}")
    out.info(f"Download outputs with: osmosis benchmark runs download {run.name}")


LIST = ListView(
    COLUMNS,
    lambda run: _render().run_item(run),
    lambda run: _render().run_row(run),
    "submit one with `osmosis benchmark submit CONFIG`",
)
add_run_commands(app, BENCHMARK_RUNS, LIST, info)


@command(app, "download")
def download(
    ctx: typer.Context,
    name: NameArg,
    output: Annotated[
        Path | None, option("--output -o DIR", "Default .osmosis/benchmarks/NAME.")
    ] = None,
    types: Annotated[
        str, option("--type T[,T…]", "summary, results, artifacts, logs, all.")
    ] = "summary,results",
    overwrite: RefetchOpt = False,
    yes: LargeYesOpt = False,
) -> None:
    """Download a benchmark run's outputs (summary.csv and results.csv; artifacts and logs
    with --type). A re-run fetches only what is missing or cut short."""
    from osmosis_cli.terminal.downloads import show_download
    from osmosis_cli.terminal.progress import byte_progress
    from osmosis_client.platform.benchmark.benchmark_download import (
        BENCHMARK_OUTPUTS,
        OUTPUT_DIR,
        plan_benchmark_download,
    )
    from osmosis_client.platform.eval.run_download import default_root, parse_types, run_download

    out = current_output()
    selected = parse_types(types, BENCHMARK_OUTPUTS)
    client, workspace = state(ctx).scoped_client()
    with client:
        run = client.benchmark_runs.get(name).benchmark_run
        if output is not None:
            root = output.expanduser()
        else:
            root = default_root(workspace_top(), OUTPUT_DIR, run.name or str(run.id), str(run.id))
        plan = plan_benchmark_download(client, run, root, types=selected, overwrite=overwrite)
        if plan.pending_bytes > CONFIRM_BYTES:
            out.info(
                f"Download plan: {len(plan.pending)} files, "
                f"{size_text(plan.pending_bytes)} → {root}"
            )
            if not out.confirm("Download these benchmark outputs?", yes=yes):
                out.cancelled("benchmark.download")
                return
        root.mkdir(parents=True, exist_ok=True)
        with byte_progress(out, plan.pending_bytes, "downloading") as got:
            report = run_download(client, plan, on_bytes=got)
    show_download(out, report, "benchmark.download", result_scope(workspace))
    if report.failed:
        raise typer.Exit(1)


__all__ = ["app"]
