"""``osmosis eval list``, ``info`` and ``stop``: a workspace's runs, one run, stopping one."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from osmosis_cli.commands.eval.hosted.platform import RunArg, scoped_client, wait_for_run
from osmosis_cli.commands.eval.hosted.render import num, pct, render_run, run_detail, run_item
from osmosis_cli.context import state
from osmosis_cli.terminal.declare import YesOpt, flag, option
from osmosis_cli.terminal.errors import current_output, handle_errors
from osmosis_cli.terminal.numbers import money
from osmosis_cli.terminal.times import duration, when
from osmosis_client.errors import InvalidInputError

if TYPE_CHECKING:
    from osmosis_cli.terminal.output import Output
    from osmosis_client import Client
    from osmosis_client.platform.models import EvalRun


@dataclass(kw_only=True)
class ListOptions:
    limit: int = flag("--limit N", "How many runs to show.", min=1, default=20)
    all_: bool = flag("--all", "Every run (follows all pages).", default=False)
    status: str | None = flag("--status STATUS", "pending, running, finished, failed or stopped.")
    suite: str | None = flag("--suite NAME", "Only the runs of a suite submitted from here.")
    local: bool = flag("--local", "This project's local runs (.osmosis/evals/).", default=False)


@handle_errors
def list_runs(ctx: typer.Context, opts: ListOptions) -> None:
    """Recent eval runs of the workspace (--local: this project's local runs)."""
    from osmosis_client.platform.models import RUN_STATUSES

    if opts.local:
        _list_local(opts)
        return
    status, limit = opts.status, opts.limit
    if status is not None and status not in RUN_STATUSES:
        raise InvalidInputError(
            f"unknown status {status!r}",
            hint="use one of " + ", ".join(s for s in RUN_STATUSES if s != "queued"),
            code="USAGE",
        )
    out = current_output()
    members: set[str] | None = None
    if opts.suite is not None:
        from osmosis_client.platform.eval.submission import suite_run_ids

        members = suite_run_ids(opts.suite)
    runs, total, offset = _fetch(ctx, opts, members)
    has_more = False if opts.all_ else offset is not None
    if out.list_result(
        [run_item(r) for r in runs],
        rows=_cells(runs),
        total_count=total,
        has_more=has_more,
        next_offset=None if opts.all_ else offset,
    ):
        return
    _render_list(out, runs, status)
    if has_more:
        out.info(f"… more runs: use --limit {limit * 2} or --all")


LOCAL_COLUMNS = [
    "name",
    "status",
    "model",
    "rows",
    "mean",
    "pass@1",
    "started",
    "duration",
    "cost",
]


def _list_local(opts: ListOptions) -> None:
    from osmosis_local_runner.api.history import list_runs as local_runs

    out = current_output()
    runs = [r for r in local_runs() if opts.status is None or r.status == opts.status]
    shown = runs if opts.all_ else runs[: opts.limit]
    cells = [_local_cells(r) for r in shown]
    items = [r.to_json() for r in shown]
    if out.list_result(items, rows=cells, total_count=len(runs), has_more=len(shown) < len(runs)):
        return
    if not runs:
        out.info("No local runs yet: run one with `osmosis eval run CONFIG`.")
        return
    out.table(LOCAL_COLUMNS, cells, keep=("name",))
    if len(shown) < len(runs):
        out.info(f"… {len(runs) - len(shown)} more local runs: use --all")


def _local_cells(r: Any) -> list[str]:
    took = "" if r.duration_ms is None else duration(r.duration_ms / 1000)
    status = r.status
    if status != "finished" and r.attempts is not None and r.total_attempts:
        status = f"{status} {r.attempts}/{r.total_attempts}"  # how far it got
    cost = "" if r.cost_usd is None else money(r.cost_usd)
    return [
        r.name,
        status,
        r.model or "",
        "" if r.rows is None else f"{r.rows:,}",
        num(r.mean),
        pct(r.pass_at_1),
        when(r.started),
        took,
        cost,
    ]


def resume_command(r: Any) -> str | None:
    """The command that continues an unfinished local run (None: finished, or its config
    is not known), its budget said: the one it kept, or — stopped at it — one that
    lets it finish at the rate it was spending."""
    import shlex

    from osmosis_cli.terminal.numbers import budget_to_finish

    if r.status in ("finished", "unreadable") or not r.config_path:
        return None
    words = ["osmosis", "eval", "run", r.config_path, "--name", r.name]
    if r.max_cost is not None:
        budget = f"{r.max_cost:g}"
        if r.stopped_reason == "budget" and r.cost_usd is not None and r.total_attempts:
            budget = budget_to_finish(r.cost_usd, r.attempts or 0, r.total_attempts, r.max_cost)
        words += ["--max-cost", budget]
    return shlex.join(words)


def _fetch(
    ctx: typer.Context, opts: ListOptions, members: set[str] | None
) -> tuple[list[EvalRun], int | None, int | None]:
    """(runs, total count, next offset) — a suite's runs looked for across every page."""
    from osmosis_client.platform.resources.eval_calls import PAGE_LIMIT

    client, _ = scoped_client(state(ctx))
    runs: list[EvalRun] = []
    total: int | None = None
    offset: int | None = None
    everything = opts.all_ or members is not None
    page_size = PAGE_LIMIT if everything else min(PAGE_LIMIT, opts.limit)
    with client:
        for page in client.eval_runs.pages(opts.status, page_size):
            total = page.total_count
            found = page.eval_runs
            if members is not None:
                found = [r for r in found if r.id in members or r.name in members]
            runs.extend(found)
            offset = page.next_offset if page.has_more else None
            if not opts.all_ and len(runs) >= opts.limit:
                break
    if members is not None:
        total, offset = len(runs), None
    if not opts.all_ and len(runs) > opts.limit:
        runs, offset = runs[: opts.limit], opts.limit  # offsets count runs from the newest
    return runs, total, offset


def _render_list(out: Output, runs: list[EvalRun], status: str | None) -> None:
    if not runs:
        if status:
            out.info(f"No {status} eval runs.")
        else:
            out.info("No eval runs yet: submit one with `osmosis eval submit CONFIG`.")
        return
    out.table(
        ["name", "status", "model", "dataset", "score", "pass rate", "created"],
        _cells(runs),
        keep=("name",),  # the key users pass to `eval info`: never truncated
    )


def _cells(runs: list[EvalRun]) -> list[list[str]]:
    return [
        [
            r.name,
            r.status,
            r.model or "",
            r.dataset or "",
            num(r.results.score if r.results else None),
            pct(r.results.pass_rate if r.results else None),
            when(r.created_at),
        ]
        for r in runs
    ]


@handle_errors
def info(
    ctx: typer.Context,
    name: RunArg,
    watch: Annotated[bool, option("--watch", "Follow until the run ends.")] = False,
    output: Annotated[
        Path | None,
        option(
            "--output -o DIR", "Also save the platform's metrics.json into DIR (a run directory)."
        ),
    ] = None,
    overwrite: Annotated[
        bool, option("--overwrite", "With -o: replace an existing metrics.json.")
    ] = False,
    local: Annotated[
        bool, option("--local", "A local run of this project (.osmosis/evals/NAME).")
    ] = False,
) -> None:
    """Details and results of one run (--local: a local run). With -o DIR: the run's
    metrics.json saved there."""
    out = current_output()
    if local:
        _info_local(name)
        return
    app_state = state(ctx)
    target = None if output is None else output.expanduser() / "metrics.json"
    if target is not None and target.exists() and not overwrite:
        raise InvalidInputError(
            f"{target} already exists", hint="pass --overwrite to replace it", code="FILE_EXISTS"
        )
    client, _ = scoped_client(app_state)
    with client:
        run = wait_for_run(client, out, name, None) if watch else client.eval_runs.get(name)
        saved = _save_metrics(client, run, output) if output is not None else None
    detail = run_detail(run)
    if output is not None:
        detail["output_path"] = str(target) if saved is None else None
        detail["save_warning"] = saved
    if not out.detail_result(detail):
        render_run(out, run)
    if saved is not None:
        out.warn(saved, code="METRICS_NOT_SAVED")
    elif target is not None:
        out.info(f"Saved {target}")


def _info_local(name: str) -> None:
    from osmosis_local_runner.api.history import run_info

    out = current_output()
    found = run_info(name)
    detail = {**found.to_json(), "resume_command": resume_command(found)}
    if out.detail_result(detail):
        return
    for label, cell in zip(LOCAL_COLUMNS, _local_cells(found), strict=True):
        out.print(f"{label + ':':<10} {cell}")
    if found.problem is not None:
        out.print(f"{'problem:':<10} {found.problem}")
    if found.status != "finished" and found.total_attempts:
        out.print(f"{'progress:':<10} {found.attempts or 0} of {found.total_attempts} attempts")
    if found.stopped_reason is not None:
        out.print(f"{'stopped:':<10} {_why_stopped(found)}")
    for label, text in _uncertainty(found):
        out.print(f"{label:<10} {text}")
    if found.series is not None:
        at = f", step {found.step}" if found.step is not None else ""
        out.print(f"{'series:':<10} {found.series}{at}")
    if found.weights:
        shown = ", ".join(f"{k} {v}" for k, v in sorted(found.weights.items()) if v)
        out.print(f"{'weights:':<10} {shown}")
    if found.output_tokens is not None:
        reasoning = f" ({found.reasoning_tokens:,} reasoning)" if found.reasoning_tokens else ""
        out.print(f"{'output:':<10} {found.output_tokens:,} tokens{reasoning}")
    if found.truncation_rate is not None:
        out.print(f"{'truncated:':<10} {found.truncation_rate:.1%} of attempts")
    for grown in found.top_ups:  # the run grew: what changed, and when
        what = grown.get("changed")
        pairs = what.items() if isinstance(what, dict) else ()
        shown = ", ".join(f"{k} {v[0]} → {v[1]}" for k, v in pairs if len(v) == 2)
        out.print(f"{'grown:':<10} {shown} ({grown.get('at')})")
    for where, done in found.trackers.items():  # --log-to, eval push
        out.print(f"{'sent to:':<10} {where}: {done}")
    out.print(f"{'path:':<10} {found.path}")
    command = resume_command(found)
    if command is not None:
        out.print(f"{'resume:':<10} {command}")


def _uncertainty(r: Any) -> list[tuple[str, str]]:
    """The mean's interval and where its uncertainty comes from (docs/statistics.md)."""
    found = []
    if r.ci_low is not None and r.ci_high is not None:
        found.append(("interval:", f"{r.ci_low:.3f} – {r.ci_high:.3f} (95 %, rows as clusters)"))
    split = r.variance or {}
    if all(isinstance(split.get(k), int | float) for k in ("between", "within", "se_twice_rows")):
        found.append(
            (
                "variance:",
                f"between rows {split['between']:.4f}, within a row {split['within']:.4f} "
                f"({split['attempts_per_row']:g} attempts a row); SE with twice the rows "
                f"{split['se_twice_rows']:.3f}, twice the attempts "
                f"{split['se_twice_attempts']:.3f}",
            )
        )
    return found


def _why_stopped(r: Any) -> str:
    """``budget ($0.0005 of $0.0005)``: why a local run stopped, in words."""
    if r.stopped_reason == "budget" and r.max_cost is not None:
        return f"its cost budget ({money(r.cost_usd)} of {money(r.max_cost)})"
    words = {
        "deadline": "its deadline",
        "interrupted": "interrupted (Ctrl-C)",
        "killed": "killed before it could write its results (its journal holds them)",
        "usage_unknown": "answers without usage, under a cost budget",
        "no_price": "a model with no price, under a cost budget",
    }
    return words.get(r.stopped_reason, str(r.stopped_reason))


def _save_metrics(client: Client, run: EvalRun, root: Path) -> str | None:
    """Fetch the run's stored metrics.json into ``root``; a problem is returned, not raised."""
    from osmosis_client.errors import OsmosisError
    from osmosis_client.platform.eval.run_download import plan_download, run_download

    if run.status == "pending":
        return "Could not save metrics: a pending run has none yet"
    try:
        plan = plan_download(client, run, root, types=["metrics"], overwrite=True)
        if not plan.pending and not plan.skipped:
            return "Could not save metrics: the platform lists no metrics.json for this run"
        root.mkdir(parents=True, exist_ok=True)
        report = run_download(client, plan)
    except OsmosisError as exc:
        return f"Could not save metrics: {exc.message}"
    if report.failed:
        return f"Could not save metrics: {report.failed[0][1]}"
    return None


@handle_errors
def stop(
    ctx: typer.Context,
    name: RunArg,
    yes: YesOpt = False,
) -> None:
    """Stop a pending or running run."""
    from osmosis_client.errors import ConflictError, OsmosisError

    app_state = state(ctx)
    out = current_output()
    if not out.confirm(f"Stop eval run {name}?", yes=yes):
        out.cancelled("eval.stop")
        return
    client, _ = scoped_client(app_state)
    with client:
        try:
            run = client.eval_runs.stop(name)
        except ConflictError as exc:
            current = client.eval_runs.get(name)
            raise OsmosisError(
                f"run {current.name} is already {current.status}",
                hint="only pending or running runs can be stopped",
                code="ALREADY_TERMINAL",
            ) from exc
    message = f"Stop requested: {run.name} is {run.status}"
    if not out.operation_result("eval.stop", resource=run_item(run), message=message):
        out.info(message)
