"""Running one local evaluation from the terminal: plan, progress, Ctrl-C, the results
table, the exit code — and where results go when ``-o`` is not given."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from osmosis_cli.terminal.errors import EXIT_FAILED, EXIT_INTERRUPTED

if TYPE_CHECKING:
    from osmosis_cli.terminal.output import Output
    from osmosis_local_runner.run.runner import Runner
    from osmosis_local_runner.run.spec import Progress, RunPlan, RunResult, RunSpec


def default_results_path(stem: str) -> Path:
    """``.osmosis/evals/<stem>-<UTC timestamp>-<random>.json``: unique even for runs
    started in the same second."""
    import secrets

    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    while True:  # the random part makes a clash unlikely; checking makes it impossible
        path = Path(".osmosis") / "evals" / f"{stem}-{stamp}-{secrets.token_hex(2)}.json"
        if not path.exists() and not path.with_name(path.name + ".journal.jsonl").exists():
            return path
        stamp = f"{stamp[:16]}{secrets.token_hex(1)}"  # a new name, even if token_hex repeats


def results_path(output: Path | None, stem: str, *, resume: bool) -> Path:
    """``-o`` as given, else a fresh default path; ``--resume`` needs the ``-o`` of the run
    it continues."""
    if output is not None:
        return output
    if resume:
        from osmosis_client.errors import InvalidInputError

        raise InvalidInputError("--resume needs -o PATH", hint="pass the -o of the run to continue")
    return default_results_path(stem)


def server_echo(out: Output) -> Callable[[str], None]:
    """-v: the rollout server's output, live on stderr (already redacted)."""

    def echo(line: str) -> None:
        out.line(f"  server| {line}")

    return echo


def execute(
    make_spec: Callable[[], RunSpec],
    out: Output,
    *,
    quiet: bool,
    max_error_rate: float | None,
    dry_run: bool = False,
    junit: Path | None = None,
    prepared: Callable[[Runner], None] | None = None,
    resource: Callable[[], dict[str, Any]] | None = None,
) -> None:
    """Load, plan, run with progress and Ctrl-C handling, report; exit 130 when stopped
    and 1 when every attempt (or more than ``--max-error-rate``) errored. With
    ``--json``, whatever user code prints goes to stderr: stdout holds the document.
    ``--junit`` and the GitHub step summary are written whatever the verdict.
    ``prepared`` sees the runner once the rows are chosen (nothing has run yet);
    ``resource`` adds keys to the ``--json`` result."""
    from osmosis_cli.commands.eval.ci import after_local, check_junit_path, local_sources
    from osmosis_client.errors import OsmosisError
    from osmosis_local_runner.results.document import error_verdict

    with out.user_output_to_stderr():
        spec = make_spec()
        check_junit_path(junit, spec.output)
        before = _stamp(spec.output)
        try:
            result = _run(spec, out, quiet=quiet, dry_run=dry_run, prepared=prepared)
        except OsmosisError:
            # stopped by a deadline or a journal failure: the document of what finished
            # was written — CI still gets its artefacts
            if _stamp(spec.output) not in (None, before):
                after_local(out, junit, local_sources([(None, spec.output)]))
            raise
    if result is None:
        return
    report_result(out, result, **(resource() if resource else {}))
    after_local(out, junit, local_sources([(None, result.output)]))
    summary = result.summary
    if summary["status"] == "stopped":
        raise typer.Exit(EXIT_INTERRUPTED)
    verdict = error_verdict(summary, max_error_rate)
    if verdict is not None:
        out.error(
            OsmosisError(verdict, hint=f"see the errors in {result.output}", code="RUN_FAILED")
        )
        raise typer.Exit(EXIT_FAILED)


def _stamp(path: Path) -> tuple[int, int, int] | None:
    """Which file is at ``path`` (documents are replaced whole, so a new one is a new
    inode), or None."""
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_ino, st.st_mtime_ns, st.st_size


def _run(
    spec: RunSpec,
    out: Output,
    *,
    quiet: bool,
    dry_run: bool,
    prepared: Callable[[Runner], None] | None = None,
) -> RunResult | None:
    import asyncio
    import signal

    from osmosis_local_runner.run.runner import Runner

    fns = [fn.name for fn in spec.eval_fns] or ["grader"]
    display = _RunDisplay(out, fns, quiet=quiet)
    runner = Runner(spec, on_progress=display.update, on_note=out.info)
    plan = runner.prepare()
    _show_plan(out, plan, spec)
    if prepared is not None and not dry_run:
        prepared(runner)
    if dry_run:
        out.operation_result(
            "eval.plan", resource={"plan": _plan_json(plan)}, message="dry run: nothing ran"
        )
        return None

    async def main() -> RunResult:
        loop = asyncio.get_running_loop()

        def on_sigint() -> None:
            # once, above a live bar (a raw write under it is drawn again by its refresh)
            out.info("stopping: cancelling in-flight attempts (Ctrl-C again to kill)")
            loop.remove_signal_handler(signal.SIGINT)
            runner.interrupt()

        with contextlib.suppress(NotImplementedError, RuntimeError):  # not the main thread
            loop.add_signal_handler(signal.SIGINT, on_sigint)
        display.start(runner.progress)
        try:
            return await runner.run()
        finally:
            display.stop(runner.progress)

    return asyncio.run(main())  # the runner paces garbage collection while it runs


def _plan_json(plan: RunPlan) -> dict[str, Any]:
    from dataclasses import asdict

    return {k: str(v) if isinstance(v, Path) else v for k, v in asdict(plan).items()}


def _show_plan(out: Output, plan: RunPlan, spec: RunSpec) -> None:
    if plan.sampled:
        share = plan.selected_rows / plan.total_rows
        out.info(
            f"sampling {plan.selected_rows:,} of {plan.total_rows:,} rows ({share:.0%}, seed "
            f"{plan.seed}) — set limit (or --limit) to change"
        )
    rows = f"{plan.selected_rows:,} rows × {spec.n} = {plan.attempts:,} attempts"
    if plan.resumed:
        rows += f" ({plan.resumed:,} already done)"
    out.info(f"Plan: {rows}, {spec.batch_size} in flight")
    out.info(f"  rollout: {plan.rollout}")
    out.info(f"  model:   {plan.model}")
    if plan.baseline:
        out.info(f"  baseline: {plan.baseline}")
    out.info(f"  results: {plan.output}")


def _short(fn: str) -> str:
    return fn.rsplit(":", 1)[-1]


def progress_stats(progress: Progress, fns: list[str]) -> str:
    """``12.3/s  pass 80.0%  errors 1  tokens 1,234`` — each eval fn's pass rate labelled."""
    rates = []
    for fn in fns[:3]:
        rate = progress.pass_rate(fn)
        shown = "-" if rate is None else f"{rate:.1%}"
        rates.append(f"pass {shown}" if len(fns) == 1 else f"pass[{_short(fn)}] {shown}")
    if len(fns) > 3:
        rates.append(f"(+{len(fns) - 3} fns)")
    retries = f"  retries {progress.retries:,}" if progress.retries else ""
    return (
        f"{progress.rate:.1f}/s  {'  '.join(rates)}  errors {progress.errors}{retries}  "
        f"tokens {progress.tokens:,}  elapsed {_clock(progress.elapsed)}"
    )


def _clock(seconds: float) -> str:
    """``42s``, ``3m05s``, ``1h02m``."""
    whole = int(seconds)
    if whole < 60:
        return f"{whole}s"
    if whole < 3600:
        return f"{whole // 60}m{whole % 60:02d}s"
    return f"{whole // 3600}h{whole % 3600 // 60:02d}m"


class _RunDisplay:
    def __init__(self, out: Output, fns: list[str], *, quiet: bool) -> None:
        from osmosis_cli.terminal.progress import ProgressDisplay

        self.fns = fns
        self.display = ProgressDisplay(out, label="attempts", quiet=quiet)

    def start(self, progress: Progress) -> None:
        self.display.start(progress.total)

    def update(self, progress: Progress) -> None:
        self.display.update(
            progress.done, progress.total, progress_stats(progress, self.fns), eta=progress.eta
        )

    def stop(self, progress: Progress) -> None:
        self.display.stop(progress.done, progress.total, progress_stats(progress, self.fns))


def report_result(
    out: Output, result: RunResult, operation: str = "eval.run", **resource: Any
) -> None:
    """The summary table (``--plain``: its rows), or with ``--json`` the operation
    envelope whose ``resource`` holds the published CLI's keys, ``resource`` and the whole
    results document (streamed from disk)."""
    summary = result.summary
    if out.json_mode:
        stopped = summary["status"] == "stopped"
        out.operation_with_file(
            operation,
            status="partial" if stopped else "success",
            resource={**run_resource(result), **resource},
            path=result.output,
            message=f"{summary['total_runs']} attempts ({summary['errored_runs']} errored)"
            + (" — stopped" if stopped else ""),
        )
        return
    from osmosis_cli.commands.eval.failures import rows_command, show_failures
    from osmosis_cli.commands.eval.slicing import show_run_slices

    _summary_table(out, summary, result.head.get("model_summaries"))
    show_run_slices(out, summary.get("slices"))
    failing, shown = show_failures(out, result.output)  # each error once, with its row
    out.info(f"Results written to {result.output}")
    resume = resource.get("resume_command") or f"add --resume -o {result.output}"
    if summary["status"] == "stopped":
        out.info(f"Resume with: {resume}")
        return
    if summary["errored_runs"] and resource.get("retry_command"):
        out.info(f"Run the errored attempts again: {resource['retry_command']}")
    again = rows_command(out, failing)
    if again is not None:
        out.info(f"Run the rows that did not pass again: {again}")
    _report_errors(out, result, shown)


def _summary_table(
    out: Output, summary: dict[str, Any], per_model: list[dict[str, Any]] | None = None
) -> None:
    """The statistics per eval fn; with a baseline model, one table per model (as 0.2)."""
    for entry in per_model or [summary]:
        if per_model:  # a line naming each model carries its own results (as 0.2's did)
            out.print(f"{entry['model']} ({entry['model_tag']}): {_headline(entry['eval_fns'])}")
        _fn_table(out, entry["eval_fns"])
        if per_model:
            out.print(
                f"  {entry['total_runs']:,} attempts ({entry['errored_runs']:,} errored), "
                f"{entry['total_tokens']:,} tokens"
            )
    seconds = summary["total_duration_ms"] / 1000
    out.print(
        f"{summary['total_rows']:,} rows, {summary['total_runs']:,} attempts "
        f"({summary['errored_runs']:,} errored), {summary['total_tokens']:,} tokens, "
        f"{seconds:.1f}s — {summary['status']}"
    )


def _headline(fns: dict[str, Any]) -> str:
    """``mean 0.62, pass@1 0.60`` of each eval fn (named when there are several)."""
    parts = []
    for name, stats in fns.items():
        label = f"{_short(name)} " if len(fns) > 1 else ""
        mean, first = _fmt(stats.get("mean")), _fmt(stats.get("pass_at_1"))
        parts.append(f"{label}mean {mean}, pass@1 {first}")
    return "; ".join(parts) or "no scores"


def _fn_table(out: Output, fns: dict[str, Any]) -> None:
    ks = sorted(
        {int(k.split("_")[-1]) for stats in fns.values() for k in stats if k.startswith("pass_at_")}
    )
    columns = ["eval fn", "mean", "std", "min", "max", *[f"pass@{k}" for k in ks]]
    rows = [
        [
            name,
            *(_fmt(stats[key]) for key in ("mean", "std", "min", "max")),
            *(_fmt(stats.get(f"pass_at_{k}")) for k in ks),
        ]
        for name, stats in fns.items()
    ]
    out.table(columns, rows)


def report_document(
    out: Output, path: Path, *, message: str, next_steps: list[dict[str, Any]]
) -> None:
    """A results document already on disk, shown as a run's result (nothing ran)."""
    from osmosis_local_runner.results.documents import ResultsFile

    summary = ResultsFile(path).summary
    resource = {
        "output_path": str(path.parent),
        "total_work_items": summary.get("total_runs"),
        "dispatched": 0,
        "cancelled": False,
    }
    if out.json_mode:
        out.operation_with_file(
            "eval.run", status="success", resource=resource, path=path, message=message
        )
        return
    _summary_table(out, summary)
    out.info(message)
    for step in next_steps:
        out.info(f"  {step['description']}")


def run_resource(result: RunResult) -> dict[str, Any]:
    """The published ``eval run`` resource keys a results document answers."""
    summary = result.summary
    total, errored = summary["total_runs"], summary["errored_runs"]
    return {
        "output_path": str(result.output),
        "total_work_items": total,
        "succeeded": total - errored,
        "failed": errored,
        "cancelled": summary["status"] == "stopped",
        "duration_ms": summary["total_duration_ms"],
    }


def _report_errors(out: Output, result: RunResult, shown: set[int]) -> None:
    """Errors of the rows not shown above (each error once), in row order."""
    from osmosis_client._redact import safe_text

    errors = sorted(e for e in result.errors() if e[0] not in shown)
    if errors:
        out.info(f"Errors ({min(3, len(errors))} of {len(errors):,}):")
    for row_index, run_index, error in errors[:3]:
        out.info(f"  row {row_index} run {run_index}: {safe_text(error)}")
    if len(errors) > 3:
        out.info(f"  … {len(errors) - 3} more errors in {result.output}")


def _fmt(value: Any) -> str:
    from osmosis_local_runner.results.scoring import score_text

    return score_text(value, "")
