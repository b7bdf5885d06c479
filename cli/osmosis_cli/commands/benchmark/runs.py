"""``osmosis benchmark runs list / info / logs / stop / download`` (published-cli-0.3.8-
train.md §4.4-4.8). Better than published: ``stop`` reports the state the platform
answers (0.3.8 prints "stopped" without asking), and ``download`` is ``eval download``'s
engine — verified, resumable, never writing through a symlink or outside the run's
directory."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from osmosis_cli.context import result_scope, state, workspace_top
from osmosis_cli.terminal.commands import runnable
from osmosis_cli.terminal.declare import Command, Group, YesOpt, options_command
from osmosis_cli.terminal.errors import command, current_output, handle_errors
from osmosis_cli.terminal.log_lines import CursorOpt, FollowOpt, LogLimitOpt
from osmosis_cli.terminal.pages import Paging, show_list
from osmosis_cli.terminal.sizes import size_text

if TYPE_CHECKING:
    from osmosis_cli.terminal.output import Output
    from osmosis_client.platform.run_download import DownloadReport

app = typer.Typer(cls=Group, help="Runs of benchmarks.", no_args_is_help=True)
NameArg = Annotated[str, typer.Argument(metavar="NAME", help="A benchmark run's name or id.")]
CONFIRM_BYTES = 100 * 1024 * 1024


@handle_errors
def list_(ctx: typer.Context, opts: Paging) -> None:
    """The workspace's benchmark runs, newest first."""
    from osmosis_cli.commands.benchmark.render import run_item, run_row

    client, workspace = state(ctx).scoped_client()
    with client:
        found = opts.collect(client.benchmark_runs.pages, lambda p: p.benchmark_runs)
    head = ["Name", "Status", "Results", "Benchmark", "Agents", "Best Pass@1", "Submitted", "By"]
    if show_list(
        current_output(),
        found,
        items=[run_item(r) for r in found.items],
        rows=[run_row(r) for r in found.items],
        columns=head,
        keep=("Name",),
        extra=result_scope(workspace),
        empty="No benchmark runs yet: submit one with `osmosis benchmark submit CONFIG`.",
    ):
        current_output().info("Use osmosis benchmark runs info <name> for details.")


app.command("list", cls=Command)(options_command(Paging, list_))


@command(app, "info")
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


@command(app, "logs")
def logs(
    ctx: typer.Context,
    name: NameArg,
    limit: LogLimitOpt = 50,
    cursor: CursorOpt = None,
    follow: FollowOpt = False,
) -> None:
    """One page of a benchmark run's logs (the newest first; --cursor for older ones),
    or --follow: new entries as they come until the run ends."""
    from osmosis_cli.terminal.log_lines import run_logs

    run_logs(
        current_output(),
        state(ctx).scoped_client()[0],
        name=name,
        cursor=cursor,
        what="Benchmark run",
        command=runnable("osmosis", "benchmark", "runs", "logs", name),
        fetch=lambda c: c.benchmark_runs.logs(name, limit, cursor),
        follow=(lambda c, show: c.benchmark_runs.follow_logs(name, show, limit).benchmark_run)
        if follow
        else None,
    )


@command(app, "stop")
def stop(
    ctx: typer.Context,
    name: NameArg,
    yes: YesOpt = False,
) -> None:
    """Stop a benchmark run (looked up first; says the state the platform reports)."""
    out = current_output()
    client, workspace = state(ctx).scoped_client()
    with client:
        run = client.benchmark_runs.get(name).benchmark_run  # NOT_FOUND before any question
        if not out.confirm(f'Stop benchmark run "{run.name}"?', yes=yes):
            out.cancelled("benchmark.stop")
            return
        after = client.benchmark_runs.stop(str(run.id)).benchmark_run
    message = f'Benchmark run "{run.name}" stopped.'
    if after.status != "stopped":
        message = f'Benchmark run "{run.name}": stop requested; it is {after.status}.'
    resource = {"name": run.name, "id": run.id, "status": after.status, **result_scope(workspace)}
    if not out.operation_result("benchmark.stop", resource=resource, message=message):
        out.info(message)


@command(app, "download")
def download(
    ctx: typer.Context,
    name: NameArg,
    output: Annotated[
        Path | None,
        typer.Option("--output", "-o", metavar="DIR", help="Default .osmosis/benchmarks/NAME."),
    ] = None,
    types: Annotated[
        str,
        typer.Option("--type", metavar="T[,T…]", help="summary, results, artifacts, logs, all."),
    ] = "summary,results",
    overwrite: Annotated[
        bool, typer.Option("--overwrite", help="Fetch every file again, replacing what is there.")
    ] = False,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask (over 100 MiB).")] = False,
) -> None:
    """Download a benchmark run's outputs (summary.csv and results.csv; artifacts and logs
    with --type). A re-run fetches only what is missing or cut short."""
    from osmosis_cli.terminal.progress import byte_progress
    from osmosis_client.platform.benchmark_download import (
        BENCHMARK_OUTPUTS,
        OUTPUT_DIR,
        plan_benchmark_download,
    )
    from osmosis_client.platform.run_download import default_root, parse_types, run_download

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
    _result(out, report, result_scope(workspace))
    if report.failed:
        raise typer.Exit(1)


def _result(out: Output, report: DownloadReport, scope: dict[str, object]) -> None:
    count = len(report.downloaded)
    message = (
        f"Downloaded {count} file{'s' * (count != 1)} "
        f"({size_text(report.bytes_downloaded)}) to {report.plan.root}"
    )
    if report.plan.skipped:
        message += f" ({len(report.plan.skipped)} already up to date)"
    if report.failed:
        message += f" ({len(report.failed)} failed; re-run to retry)"
    resource = {**report.to_json(), **scope}
    if out.operation_result(
        "benchmark.download", status=report.status, resource=resource, message=message
    ):
        if out.json_mode:
            return
    else:
        out.info(message)
    for path, problem in report.failed:
        out.print(f"Failed: {path} — {problem}")


__all__ = ["app"]
