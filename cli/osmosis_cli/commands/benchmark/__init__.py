"""``osmosis benchmark list / info / submit`` and ``benchmark runs …``: the benchmark
catalog and runs of it (published-cli-0.3.8-train.md §4), with the published flags,
``--json`` envelopes and plain rows. The run commands live in runs.py, submit in
submit.py, what is shown in render.py."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from osmosis_cli.commands.benchmark import runs, submit as submit_command
from osmosis_cli.commands.benchmark.render import RUN_KEYS
from osmosis_cli.context import result_scope, state, workspace_top
from osmosis_cli.terminal.commands import runnable
from osmosis_cli.terminal.declare import Command, Group, option, options_command
from osmosis_cli.terminal.errors import command, current_output, handle_errors
from osmosis_cli.terminal.pages import AllOpt, PageLimitOpt, Paging, show_list

if TYPE_CHECKING:
    from osmosis_cli.terminal.output import Output
    from osmosis_client.platform.benchmark.benchmark_models import BenchmarkDetail

app = typer.Typer(
    cls=Group, help="Benchmarks and benchmark runs on the platform.", no_args_is_help=True
)


def register(root: typer.Typer) -> None:
    root.add_typer(app, name="benchmark")


app.add_typer(runs.app, name="runs")
app.command("submit", cls=Command)(
    options_command(submit_command.SubmitOptions, submit_command.submit)
)


@command(app, "init")
def init(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(metavar="NAME", help="The config's name.")] = "default",
    benchmark: Annotated[
        str, option("--benchmark KEY", "A key from `benchmark list`.")
    ] = "terminal-bench-2-1",
    overwrite: Annotated[bool, option("--overwrite --force", "Replace an existing file.")] = False,
) -> None:
    """Write a starter configs/benchmark/NAME.toml that validates as it is."""
    from osmosis_client.platform.benchmark.benchmark_starter import write_starter

    out = current_output()
    path = write_starter(workspace_top(), name, benchmark=benchmark, force=overwrite)
    shown = path.relative_to(workspace_top()).as_posix()
    message = f"Wrote {shown}"
    submit = runnable("osmosis", "benchmark", "submit", shown)
    steps = [{"action": "benchmark_submit", "command": submit}]
    if not out.operation_result(
        "benchmark.init", resource={"path": str(path)}, message=message, next_steps=steps
    ):
        out.info(message)
        out.info(
            "Store the model's key once (`osmosis secret set OPENAI_API_KEY`), then: "
            + runnable("osmosis", "benchmark", "submit", shown)
        )


@handle_errors
def list_(ctx: typer.Context, opts: Paging) -> None:
    """The benchmarks this workspace can run, with their last run."""
    from osmosis_cli.commands.benchmark.render import benchmark_item, benchmark_row

    out = current_output()
    client, workspace = state(ctx).scoped_client()
    with client:
        found = opts.collect(client.benchmarks.pages, lambda p: p.benchmarks)
    if not show_list(
        out,
        found,
        items=[benchmark_item(b) for b in found.items],
        rows=[benchmark_row(b) for b in found.items],
        columns=["Name", "Key", "Last Run", "Tasks"],
        keep=("Name", "Key"),
        extra=result_scope(workspace),
        empty="No benchmarks are available to this workspace.",
    ):
        return
    out.info("Use osmosis benchmark info <key> for its leaderboard, runs, task sets, and tasks.")
    for bench in found.items:
        if bench.sync_status in ("pending", "syncing"):
            out.info(
                f"{bench.name} is still syncing its task list ({bench.synced_task_count} "
                f"of {bench.task_count} tasks); submit once it is ready."
            )
        elif bench.sync_status == "failed":
            out.info(f"{bench.name} is not runnable: {bench.sync_error or 'its sync failed'}.")


app.command("list", cls=Command)(options_command(Paging, list_))


@command(app, "info")
def info(
    ctx: typer.Context,
    key: Annotated[str, typer.Argument(metavar="KEY", help="A benchmark's key (or name).")],
    limit: PageLimitOpt = None,
    all_: AllOpt = False,
) -> None:
    """A benchmark: tasks, task sets, harness and judge needs, leaderboard, its runs."""
    from osmosis_cli.commands.benchmark.render import (
        benchmark_item,
        benchmark_lines,
        run_item,
    )
    from osmosis_cli.terminal.pages import check_paging, collect

    check_paging(all_, limit)
    out = current_output()
    client, workspace = state(ctx).scoped_client()
    with client:
        detail = client.benchmarks.get(key)
        bench = detail.benchmark
        pages = client.benchmark_runs.pages(limit or 50, benchmark=str(bench.id))
        found = collect(pages, lambda p: p.benchmark_runs, every=all_)
    item = {k: v for k, v in benchmark_item(bench).items() if k not in RUN_KEYS}
    info_keys = (
        "runner_family",
        "supports_harness",
        "requires_harness",
        "default_harness",
        "requires_judge_model",
        "requires_judge_api_key",
        "judge_model_default",
        "pass_threshold",
        "categories",
        "tasks",
        "unavailable_tasks",
    )
    dumped = bench.model_dump(mode="json", include=set(info_keys))
    data = {
        "benchmark": {**item, **{k: dumped[k] for k in info_keys}},
        "leaderboard": detail.leaderboard,
        "runs": [run_item(r) for r in found.items],
        "runs_total_count": found.total_count,
        **result_scope(workspace),
    }
    lines = benchmark_lines(detail, found.items, found.total_count or len(found.items))
    if out.detail_result(data, lines=lines):
        return
    for line in lines:
        out.print(line)
    _info_hints(out, detail)


def _info_hints(out: Output, detail: BenchmarkDetail) -> None:
    bench = detail.benchmark
    recommended = next((s for s in bench.task_sets if s.recommended), None)
    if recommended is not None:
        out.info(
            f'For {bench.name}, we recommend [tasks] task_set = "{recommended.name}" '
            f"({recommended.task_count} tasks)."
        )
    out.info(f"Omit [tasks] to select all {bench.task_count:,} tasks.")
    out.info("Use task_names or categories under [tasks] for a custom subset.")
    info = runnable("osmosis", "--json", "benchmark", "info", bench.key)
    out.info(f"Use {info} to inspect the full task list.")
    out.info("Use osmosis benchmark runs info <run-name> for a run's details.")


__all__ = ["register"]
