"""Running one local evaluation from the terminal — the runner's session (the one run
path the library shares) with this face's plan, live progress, Ctrl-C and exit codes;
``outcome.py`` shows what it produced."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from osmosis_cli.terminal.errors import EXIT_FAILED, EXIT_INTERRUPTED

if TYPE_CHECKING:
    from osmosis_cli.commands.eval.local.options import LocalRunOptions
    from osmosis_cli.terminal.output import Output
    from osmosis_local_runner.api.doors import (
        Progress,
        RunPlan,
        RunRequest,
        RunResult,
        RunSession,
        RunSpec,
    )


def server_echo(out: Output) -> Callable[[str], None]:
    """-v: the rollout server's output, live on stderr (already redacted)."""

    def echo(line: str) -> None:
        out.line(f"  server| {line}")

    return echo


def execute(
    request: RunRequest,
    out: Output,
    opts: LocalRunOptions,
    resource: Callable[[RunSession], dict[str, Any]] | None = None,
) -> None:
    """One local run through the runner's session (the library's one run path), shown:
    the plan, live progress, Ctrl-C (the first stops cleanly), the result, the exit code
    — 130 when stopped, 1 when every attempt (or more than ``--max-error-rate``)
    errored. With ``--json``, whatever user code prints goes to stderr: stdout holds the
    document. ``--junit`` and the GitHub step summary are written whatever the verdict;
    ``resource`` adds keys to the ``--json`` result; what a continued run took from its
    journal is said in this form's flags (``opts.adopted_line``)."""
    from osmosis_cli.commands.eval.local.failures import adopted_args
    from osmosis_cli.commands.eval.local.outcome import report_finished, report_result
    from osmosis_local_runner.api.doors import RunSession

    with (
        out.user_output_to_stderr(),
        RunSession(request, on_note=out.info, on_warning=out.warn) as session,
    ):
        if session.opening == "finished":
            report_finished(out, session)
            return
        line = opts.adopted_line(session.adopted)
        if line:
            out.info(line)
        result = _run(session, out, quiet=opts.quiet, junit=opts.junit)
    if result is None:
        return
    from osmosis_cli.commands.eval.results.trackers import tracked_keys

    name = session.run.name if session.run is not None else None
    keys = {**(resource(session) if resource else {}), **tracked_keys(out, session.tracked, name)}
    report_result(out, result, adopted=adopted_args(opts, session.adopted), **keys)
    _verdict(out, result, opts.junit, opts.max_error_rate)


def _run(session: RunSession, out: Output, *, quiet: bool, junit: Path | None) -> RunResult | None:
    """Plan, run and finish the session (``None``: a dry run, nothing ran)."""
    from osmosis_cli.commands.eval.results.ci import after_local, check_junit_path, local_sources
    from osmosis_client.errors import OsmosisError

    check_junit_path(junit, session.results)
    before = _stamp(session.results)
    display = _RunDisplay(out, quiet=quiet)
    session.on_progress = display.update
    try:
        plan = session.prepare()
        assert session.runner is not None
        _show_plan(out, plan, session.runner.spec)
        if session.request.dry_run:
            out.operation_result(
                "eval.plan", resource={"plan": _plan_json(plan)}, message="dry run: nothing ran"
            )
            return None
        result = _interruptible(session, out, display)
        session.finish()
    except OsmosisError:
        # stopped by a deadline or a journal failure: the document of what finished was
        # written — CI still gets its artefacts
        if _stamp(session.results) not in (None, before):
            after_local(out, junit, local_sources([(None, session.results)]))
        raise
    return result


def _stamp(path: Path) -> tuple[int, int, int] | None:
    """Which file is at ``path`` (documents are replaced whole, so a new one is a new
    inode), or None."""
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_ino, st.st_mtime_ns, st.st_size


def _interruptible(session: RunSession, out: Output, display: _RunDisplay) -> RunResult:
    """The run, with the first Ctrl-C stopping it cleanly (the second kills)."""
    import asyncio
    import signal

    async def main() -> RunResult:
        loop = asyncio.get_running_loop()

        def on_sigint() -> None:
            # once, above a live bar (a raw write under it is drawn again by its refresh)
            out.info("stopping: cancelling in-flight attempts (Ctrl-C again to kill)")
            loop.remove_signal_handler(signal.SIGINT)
            session.interrupt()

        with contextlib.suppress(NotImplementedError, RuntimeError):  # not the main thread
            loop.add_signal_handler(signal.SIGINT, on_sigint)
        assert session.runner is not None
        display.start(session.runner.progress)
        try:
            return await session.execute()
        finally:
            display.stop(session.runner.progress)

    return asyncio.run(main())  # the runner paces garbage collection while it runs


def _verdict(
    out: Output, result: RunResult, junit: Path | None, max_error_rate: float | None
) -> None:
    """JUnit and the step summary, then the exit code the result earns."""
    from osmosis_cli.commands.eval.results.ci import after_local, local_sources
    from osmosis_client.errors import OsmosisError
    from osmosis_local_runner.results.documents.document import error_verdict

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
    cut = f"  truncated {progress.truncated:,}" if progress.truncated else ""
    cost = f"  ${progress.cost_usd:.4f}" if progress.cost_usd else ""
    return (
        f"{progress.rate:.1f}/s  {'  '.join(rates)}  errors {progress.errors}{retries}{cut}  "
        f"tokens {progress.tokens:,}{cost}  elapsed {_clock(progress.elapsed)}"
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
    def __init__(self, out: Output, *, quiet: bool) -> None:
        from osmosis_cli.terminal.progress import ProgressDisplay

        self.display = ProgressDisplay(out, label="attempts", quiet=quiet)

    def start(self, progress: Progress) -> None:
        self.display.start(progress.total)

    def update(self, progress: Progress) -> None:
        self.display.update(
            progress.done, progress.total, progress_stats(progress, progress.fns), eta=progress.eta
        )

    def stop(self, progress: Progress) -> None:
        self.display.stop(progress.done, progress.total, progress_stats(progress, progress.fns))
