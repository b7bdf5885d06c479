"""``osmosis eval run SUITE.toml``: plan, ``--dry-run``, progress per entry, the
comparison table, the suite document with ``--json``."""

from __future__ import annotations

import contextlib
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from osmosis_cli.terminal.errors import EXIT_FAILED, EXIT_INTERRUPTED
from osmosis_cli.terminal.output import Output

if TYPE_CHECKING:
    from osmosis_client.platform.eval.suite_config import Suite
    from osmosis_local_runner.api.doors import EntryRun, Overrides, SuiteRunner

PLAIN_EVERY = 5.0


def dry_run(out: Output, suite: Suite, flags: Overrides) -> None:
    """The expanded entries and where each setting came from; nothing runs."""
    from osmosis_local_runner.api.doors import settings_of

    _warn_collapsed(out, suite, flags)
    entries: list[dict[str, Any]] = []
    for entry in suite.entries:
        values, origins = settings_of(entry, flags)
        entries.append(
            {"name": entry.name, "settings": values, "origins": origins, "sweep": entry.sweep}
        )
    message = f"Suite {suite.name}: {len(entries)} entries (dry run: nothing is run)"
    if out.json_mode:
        out.operation_result(
            "eval.plan", resource={"suite": suite.name, "entries": entries}, message=message
        )
        return
    out.info(message)
    rows = []
    for item in entries:
        s = item["settings"]
        sweep = ", ".join(f"{k}={_value(v)}" for k, v in item["sweep"].items())
        rows.append(
            [
                item["name"],
                str(s.get("rollout", "")),
                str(s.get("model_path") or s.get("endpoint_id") or ""),
                str(s.get("dataset", "")),
                _value(s.get("limit", "10% sample")),
                _value(s.get("n", 1)),
                sweep,
            ]
        )
    out.table(["entry", "rollout", "model", "dataset", "limit", "n", "sweep"], rows, keep=["entry"])
    out.print("where each setting comes from (flag > entry or sweep > defaults > built-in):")
    for item in entries:
        shown = ", ".join(
            f"{k}={_value(_lookup(item['settings'], k))} ({origin})"
            for k, origin in item["origins"].items()
        )
        out.print(f"  {item['name']}: {shown}")


def _lookup(settings: dict[str, Any], dotted: str) -> Any:
    value: Any = settings
    for part in dotted.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    return value


def _value(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}={_value(v)}" for k, v in value.items()) + "}"
    return str(value)


class SuiteDisplay:
    """A bar per active entry and an overall bar on a TTY; plain lines otherwise."""

    def __init__(self, out: Output, *, quiet: bool) -> None:
        self.out = out
        self.quiet = quiet or out.json_mode
        self.rich = not self.quiet and out.stderr_is_tty
        self._bar: Any = None
        self._tasks: dict[str, Any] = {}
        self._overall: Any = None
        self._runs: list[EntryRun] = []
        self._last = 0.0

    def start(self, runs: list[EntryRun]) -> None:
        self._runs = runs
        if not self.rich:
            return
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

        self._bar = Progress(
            TextColumn("{task.description}", markup=False),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[stats]}", markup=False),
            console=self.out.err_console,
        )
        self._overall = self._bar.add_task("suite", total=self._total(), stats="")
        self._bar.start()
        bar = self._bar
        self.out.above = lambda text: bar.console.print(text, markup=False, highlight=False)

    def _total(self) -> int:
        return sum(r.plan.attempts if r.plan else 0 for r in self._runs)

    def _done(self) -> int:
        return sum(r.progress.done if r.plan else 0 for r in self._runs)

    def update(self, run: EntryRun) -> None:
        if self.quiet:
            return
        from osmosis_cli.commands.eval.local.execute import progress_stats

        fns = list((run.progress.passed or {}).keys()) or ["grader"]
        stats = progress_stats(run.progress, fns)
        if self._bar is not None:
            task = self._tasks.get(run.entry.name)
            if task is None:
                task = self._tasks[run.entry.name] = self._bar.add_task(
                    run.entry.name, total=run.progress.total, stats=""
                )
            self._bar.update(task, completed=run.progress.done, stats=stats)
            if run.status not in ("running", "pending"):
                self._bar.update(task, description=f"{run.entry.name} ({run.status})")
            self._bar.update(self._overall, completed=self._done(), total=self._total())
            return
        now = time.monotonic()
        finished = run.status not in ("running", "pending")
        if finished or now - self._last >= PLAIN_EVERY:
            self._last = now
            self.out.stderr.write(
                f"progress: {run.entry.name} {run.progress.done}/{run.progress.total} "
                f"{run.status}, {stats}; suite {self._done()}/{self._total()}\n"
            )
            self.out.stderr.flush()

    def stop(self) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None
            self.out.above = None


def run_suite(
    out: Output,
    suite: Suite,
    flags: Overrides,
    *,
    directory: Path | None,
    parallel: int,
    resume: bool,
    quiet: bool,
    abbreviated: bool,
    max_error_rate: float | None,
    junit: Path | None = None,
    sharing: dict[str, Any] | None = None,
) -> None:
    """``sharing``: ``log_to`` (``LocalRunOptions.sharing``); the step is a setting."""
    from osmosis_cli.commands.eval.results.ci import after_local, check_junit_path, local_sources
    from osmosis_local_runner.api.doors import SuiteRequest, open_suite

    check_junit_path(junit)
    display = SuiteDisplay(out, quiet=quiet)
    request = SuiteRequest(
        suite, flags, output=directory, resume=resume, parallel=parallel, **(sharing or {})
    )
    runner = open_suite(request, on_progress=display.update, on_note=out.info)
    _warn_collapsed(out, suite, flags)
    with out.user_output_to_stderr():
        runs = runner.prepare()
        _show_plan(out, runner, parallel)
        document = _execute(out, runner, display, runs)
    if out.json_mode:
        status = "partial" if document["status"] == "stopped" else "success"
        out.operation_result("eval.run", status=status, resource=document)
    else:
        _report(out, runner, abbreviated=abbreviated)
        from osmosis_cli.commands.eval.results.trackers import tracked_keys

        for run in runs:  # what became of each entry's trackers (--json: in the document)
            tracked_keys(out, run.tracked, str(run.output))
    after_local(out, junit, local_sources([(r.entry.name, r.output) for r in runs]), suite=document)
    if document["status"] == "stopped":
        _resume_hint(out, runner.directory)
        raise typer.Exit(EXIT_INTERRUPTED)
    _verdict(out, runs, runner.directory, max_error_rate)


def _warn_collapsed(out: Output, suite: Suite, flags: Overrides) -> None:
    """A flag overriding a swept setting runs several entries with the same settings."""
    from osmosis_local_runner.api.doors import collapsed

    for flag, names in collapsed(suite, flags):
        out.warn(
            f"{flag} overrides a setting the sweep varies: entries {', '.join(names)} now run "
            "the same settings",
            code="SWEEP_COLLAPSED",
        )


def _resume_hint(out: Output, directory: Path) -> None:
    """A stopped suite: its partial table was shown; the command that finishes it."""
    from osmosis_cli.commands.eval.local.failures import rerun_command

    command = rerun_command(out, directory, "--resume")
    out.info(f"Resume with: {command or f'add --resume -o {directory}'}")


def _execute(
    out: Output, runner: SuiteRunner, display: SuiteDisplay, runs: list[EntryRun]
) -> dict[str, Any]:
    """Every entry, with progress; the first Ctrl-C stops cleanly (resumable)."""
    import asyncio
    import signal

    async def main() -> dict[str, Any]:
        loop = asyncio.get_running_loop()

        def on_sigint() -> None:
            out.info("stopping: cancelling in-flight attempts (Ctrl-C again to kill)")
            loop.remove_signal_handler(signal.SIGINT)
            runner.interrupt()

        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(signal.SIGINT, on_sigint)
        display.start(runs)
        try:
            return await runner.run()
        finally:
            display.stop()

    return asyncio.run(main())


def _verdict(
    out: Output, runs: list[EntryRun], directory: Path, max_error_rate: float | None
) -> None:
    """Exit 1 when an entry failed, or errored beyond ``--max-error-rate``."""
    from osmosis_client.errors import OsmosisError
    from osmosis_local_runner.results.documents.document import error_verdict

    failed = [r for r in runs if r.status == "failed"]
    verdicts = [
        (r.entry.name, v)
        for r in runs
        if r.summary and (v := error_verdict(r.summary, max_error_rate)) is not None
    ]
    if failed or verdicts:
        names = [r.entry.name for r in failed] + [name for name, _ in verdicts]
        out.error(
            OsmosisError(
                f"{len(names)} of {len(runs)} entries failed: {', '.join(names)}",
                hint=f"see {directory / 'suite.json'}",
                code="RUN_FAILED",
            )
        )
        raise typer.Exit(EXIT_FAILED)


def _show_plan(out: Output, runner: SuiteRunner, parallel: int) -> None:
    runs = runner.runs
    done = sum(r.state == "done" for r in runs)
    attempts = sum(r.plan.attempts for r in runs if r.plan)
    line = f"Suite {runner.suite.name}: {len(runs)} entries, {attempts:,} attempts"
    if done:
        line += f" ({done} entries already finished)"
    if parallel > 1:
        line += f", {parallel} entries at once"
    out.info(line)
    out.info(f"  results: {runner.directory}")


def _report(out: Output, runner: SuiteRunner, *, abbreviated: bool) -> None:
    from osmosis_local_runner.api.doors import settings_of
    from osmosis_local_runner.results.documents.sources import primary_score

    rows = []
    ordered = sorted(
        runner.runs,
        key=lambda r: (primary_score(r.summary) is None, -(primary_score(r.summary) or 0.0)),
    )
    for run in ordered:
        summary = run.summary or {}
        fns = summary.get("eval_fns") or {}
        stats: dict[str, Any] = next(iter(fns.values()), {})
        ks = sorted(int(k.split("_")[-1]) for k in stats if k.startswith("pass_at_"))
        best = f"pass@{ks[-1]} {_fmt(stats.get(f'pass_at_{ks[-1]}'))}" if ks else ""
        # what ran: a flag (--model) wins over the entry's own model_path
        settings = settings_of(run.entry, runner.flags)[0]
        model = settings.get("model_path") or settings.get("endpoint_id")
        if abbreviated:
            rows.append(
                [run.entry.name, _fmt(stats.get("mean")), _fmt(stats.get("pass_at_1")), run.status]
            )
            continue
        rows.append(
            [
                run.entry.name,
                str(model or ""),
                _fmt(stats.get("mean")),
                _fmt(stats.get("pass_at_1")),
                best,
                f"{summary.get('total_tokens', 0):,}",
                f"{(summary.get('total_duration_ms') or 0) / 1000:.1f}s",
                str(summary.get("errored_runs", "")),
                run.status,
            ]
        )
    columns = (
        ["entry", "mean", "pass@1", "status"]
        if abbreviated
        else ["entry", "model", "mean", "pass@1", "best k", "tokens", "time", "errors", "status"]
    )
    out.table(columns, rows, keep=["entry"])
    out.info(f"Suite results in {runner.directory / 'suite.json'}")


def _fmt(value: Any) -> str:
    from osmosis_local_runner.results.statistics.scoring import score_text

    return score_text(value, "")
