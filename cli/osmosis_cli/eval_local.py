"""``osmosis eval run CONFIG`` and the seed form ``osmosis eval -m … -d … --eval-fn …``."""

from __future__ import annotations

import contextlib
import os
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from .errors import EXIT_INTERRUPTED, current_output, handle_errors

if TYPE_CHECKING:
    from osmosis_local_runner.runner import Progress, RunResult, RunSpec

    from .output import Output

JsonOpt = Annotated[bool, typer.Option("--json", help="Print the results document on stdout.")]
QuietOpt = Annotated[bool, typer.Option("--quiet", "-q", help="No progress output.")]
LimitOpt = Annotated[int | None, typer.Option("--limit", min=1, help="Only the first N rows.")]
NOpt = Annotated[int | None, typer.Option("--n", min=1, help="Attempts per row.")]
BatchOpt = Annotated[
    int | None, typer.Option("--batch-size", min=1, help="Attempts in flight at once.")
]
ThresholdOpt = Annotated[
    float | None, typer.Option("--pass-threshold", help="An attempt passes when score >= X.")
]
BaseUrlOpt = Annotated[
    str | None, typer.Option("--base-url", help="OpenAI-compatible endpoint, e.g. vLLM.")
]
KeyEnvOpt = Annotated[
    str | None, typer.Option("--api-key-env", help="NAME of the env var holding the key.")
]
OutOpt = Annotated[
    Path | None, typer.Option("-o", "--output", help="Results file (journal beside it).")
]
ResumeOpt = Annotated[bool, typer.Option("--resume", help="Continue the run recorded at -o PATH.")]

PLAIN_PROGRESS_EVERY = 5.0


def register(app: typer.Typer) -> None:
    app.command("run")(run_config)


def results_path(output: Path | None, stem: str, *, resume: bool) -> Path:
    """``-o`` as given, else ``.osmosis/evals/<stem>-<UTC timestamp>.json``; ``--resume``
    needs the ``-o`` of the run it continues."""
    if output is not None:
        return output
    if resume:
        from osmosis_client.errors import InvalidInputError

        raise InvalidInputError("--resume needs -o PATH", hint="pass the -o of the run to continue")
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    return Path(".osmosis") / "evals" / f"{stem}-{stamp}.json"


# --------------------------------------------------------------- eval run


@handle_errors
def run_config(
    ctx: typer.Context,
    config_path: Annotated[Path, typer.Argument(metavar="CONFIG", help="configs/eval/NAME.toml")],
    limit: LimitOpt = None,
    n: NOpt = None,
    batch_size: BatchOpt = None,
    pass_threshold: ThresholdOpt = None,
    dataset: Annotated[
        Path | None, typer.Option("--dataset", help="Local dataset file (overrides the TOML).")
    ] = None,
    model: Annotated[
        str | None, typer.Option("--model", help="Model (overrides the TOML).")
    ] = None,
    base_url: BaseUrlOpt = None,
    seed: Annotated[
        int | None, typer.Option("--seed", min=0, help="Seed of the 10% sample.")
    ] = None,
    api_key_env: KeyEnvOpt = None,
    output: OutOpt = None,
    resume: ResumeOpt = False,
    json_output: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Run an eval config offline against a model endpoint (no login needed)."""
    from osmosis_client.llm.providers import resolve_target
    from osmosis_client.platform.eval_config import load_config
    from osmosis_local_runner.dataset import find_dataset
    from osmosis_local_runner.discovery import load_rollout
    from osmosis_local_runner.runner import RunSpec

    out = current_output()
    config = load_config(config_path)
    root = config.root or Path.cwd()
    exp, ev, local = config.experiment, config.evaluation, config.local
    if dataset is not None:
        dataset_path = dataset
    elif local.dataset_file:
        dataset_path = root / local.dataset_file
    else:
        dataset_path = find_dataset(root, exp.dataset)
    target = resolve_target(
        model or exp.model_path,
        base_url=base_url or local.base_url,
        api_key_env=api_key_env or local.api_key_env,
    )
    os.environ.update(config.env)
    workflow, grader = load_rollout(config.entrypoint_path, root)
    spec = RunSpec(
        model=target,
        dataset=dataset_path,
        workflow=workflow,
        eval_fns=[grader],
        output=results_path(output, config.name, resume=resume),
        n=n or ev.n,
        batch_size=batch_size or ev.batch_size,
        pass_threshold=ev.pass_threshold if pass_threshold is None else pass_threshold,
        limit=limit if limit is not None else ev.limit,
        sample=True,
        seed=local.seed if seed is None else seed,
        agent_workflow_timeout_s=float(ev.agent_workflow_timeout_s),
        grader_timeout_s=float(ev.grader_timeout_s),
        sampling=dict(local.sampling),
        workflow_config={
            "env": dict(config.env),
            "advanced": dict(config.advanced),
            "sampling": dict(local.sampling),
        },
        resume=resume,
    )
    execute(spec, out, quiet=quiet)


# ------------------------------------------------------------- seed form


def seed_form(
    ctx: typer.Context,
    module: Annotated[
        str | None, typer.Option("-m", "--module", help="MODULE:ATTR of the agent workflow.")
    ] = None,
    dataset: Annotated[Path | None, typer.Option("-d", "--dataset", help="Dataset file.")] = None,
    model: Annotated[
        str | None, typer.Option("--model", help="provider/model or served name.")
    ] = None,
    eval_fn: Annotated[
        list[str] | None, typer.Option("--eval-fn", help="MODULE:FN (repeatable).")
    ] = None,
    base_url: BaseUrlOpt = None,
    api_key_env: KeyEnvOpt = None,
    n: NOpt = None,
    batch_size: BatchOpt = None,
    pass_threshold: ThresholdOpt = None,
    limit: LimitOpt = None,
    output: OutOpt = None,
    resume: ResumeOpt = False,
    json_output: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Submit and follow hosted eval runs; run evals locally.

    Seed form: osmosis eval -m MODULE:ATTR -d DATASET --model M --eval-fn MODULE:FN
    """
    if ctx.invoked_subcommand is not None:
        return
    _seed_form(
        ctx=ctx,
        module=module,
        dataset=dataset,
        model=model,
        eval_fn=eval_fn or [],
        base_url=base_url,
        api_key_env=api_key_env,
        n=n,
        batch_size=batch_size,
        pass_threshold=pass_threshold,
        limit=limit,
        output=output,
        resume=resume,
        json_output=json_output,
        quiet=quiet,
    )


@handle_errors
def _seed_form(
    ctx: typer.Context,
    *,
    module: str | None,
    dataset: Path | None,
    model: str | None,
    eval_fn: list[str],
    base_url: str | None,
    api_key_env: str | None,
    n: int | None,
    batch_size: int | None,
    pass_threshold: float | None,
    limit: int | None,
    output: Path | None,
    resume: bool,
    json_output: bool,
    quiet: bool,
) -> None:
    from osmosis_client.errors import InvalidInputError
    from osmosis_client.llm.providers import resolve_target
    from osmosis_local_runner.discovery import as_workflow, load_attr, load_eval_fn
    from osmosis_local_runner.runner import RunSpec

    out = current_output()
    missing = [
        flag
        for flag, value in (
            ("-m", module),
            ("-d", dataset),
            ("--model", model),
            ("--eval-fn", eval_fn),
        )
        if not value
    ]
    if missing:
        raise InvalidInputError(
            f"missing {', '.join(missing)}",
            hint="osmosis eval -m MODULE:ATTR -d DATASET --model M --eval-fn MODULE:FN",
        )
    assert module and dataset and model
    target = resolve_target(model, base_url=base_url, api_key_env=api_key_env)
    workflow_value, where = load_attr(module)
    workflow = as_workflow(workflow_value, where)
    fns = [load_eval_fn(spec) for spec in eval_fn]
    names = [fn.name for fn in fns]
    if len(set(names)) != len(names):
        raise InvalidInputError("the same --eval-fn is given twice")
    spec = RunSpec(
        model=target,
        dataset=dataset,
        workflow=workflow,
        eval_fns=fns,
        output=results_path(output, dataset.stem, resume=resume),
        n=n or 1,
        batch_size=batch_size or 1,
        pass_threshold=1.0 if pass_threshold is None else pass_threshold,
        limit=limit,
        sample=False,
        resume=resume,
    )
    execute(spec, out, quiet=quiet)


# ------------------------------------------------------------- execution


def execute(spec: RunSpec, out: Output, *, quiet: bool) -> None:
    """Run with progress, Ctrl-C handling and the final summary; exits 130 when stopped."""
    import asyncio
    import signal

    from osmosis_local_runner.runner import Runner

    display = _ProgressDisplay(out, quiet=quiet)
    runner = Runner(spec, on_progress=display.update)

    async def main() -> RunResult:
        loop = asyncio.get_running_loop()

        def on_sigint() -> None:
            out.stderr.write("\nstopping: cancelling in-flight attempts (Ctrl-C again to kill)\n")
            loop.remove_signal_handler(signal.SIGINT)
            runner.interrupt()

        with contextlib.suppress(NotImplementedError, RuntimeError):  # not the main thread
            loop.add_signal_handler(signal.SIGINT, on_sigint)
        display.start(runner.progress)
        try:
            return await runner.run()
        finally:
            display.stop(runner.progress)

    result = asyncio.run(main())
    _report(out, result)
    if result.document["summary"]["status"] == "stopped":
        raise typer.Exit(EXIT_INTERRUPTED)


def _report(out: Output, result: RunResult) -> None:
    doc = result.document
    summary = doc["summary"]
    if out.json_mode:
        out.emit_json(doc)
        return
    fns = summary["eval_fns"]
    ks = sorted(
        {int(k.split("_")[-1]) for stats in fns.values() for k in stats if k.startswith("pass_at_")}
    )
    columns = ["eval fn", "mean", "std", "min", "max", *[f"pass@{k}" for k in ks]]
    rows = []
    for name, stats in fns.items():
        rows.append(
            [
                name,
                *(_fmt(stats[key]) for key in ("mean", "std", "min", "max")),
                *(_fmt(stats.get(f"pass_at_{k}")) for k in ks),
            ]
        )
    out.table(columns, rows)
    seconds = summary["total_duration_ms"] / 1000
    out.print(
        f"{summary['total_rows']} rows, {summary['total_runs']} attempts "
        f"({summary['errored_runs']} errored), {summary['total_tokens']:,} tokens, "
        f"{seconds:.1f}s — {summary['status']}"
    )
    out.info(f"Results written to {result.output}")
    if summary["status"] == "stopped":
        out.info(f"Resume with: --resume -o {result.output}")
    errors = [
        (row["row_index"], run["run_index"], run["error"])
        for row in doc["rows"]
        for run in row["runs"]
        if run["error"]
    ]
    for row_index, run_index, error in errors[:3]:
        out.info(f"  row {row_index} run {run_index}: {error}")
    if len(errors) > 3:
        out.info(f"  … {len(errors) - 3} more errors in {result.output}")


def _fmt(value: Any) -> str:
    return "" if value is None else f"{value:.3f}"


class _ProgressDisplay:
    """A rich bar on a TTY, plain periodic lines otherwise, nothing with --quiet."""

    def __init__(self, out: Output, *, quiet: bool) -> None:
        self.out = out
        self.quiet = quiet
        self.rich = not quiet and out.stderr_is_tty
        self._bar: Any = None
        self._task: Any = None
        self._last = 0.0

    def start(self, progress: Progress) -> None:
        if self.quiet:
            return
        if self.rich:
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeRemainingColumn,
            )

            self._bar = Progress(
                TextColumn("[bold]eval"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.fields[stats]}"),
                TimeRemainingColumn(),
                console=self.out.err_console,
                transient=False,
            )
            self._task = self._bar.add_task("eval", total=progress.total, stats="")
            self._bar.start()
        self.update(progress, force=True)

    def update(self, progress: Progress, force: bool = False) -> None:
        if self.quiet:
            return
        now = time.monotonic()
        every = 0.1 if self.rich else PLAIN_PROGRESS_EVERY
        if not force and now - self._last < every:
            return
        self._last = now
        rate = progress.pass_rate
        stats = (
            f"{progress.rate:.1f}/s  pass {'-' if rate is None else f'{rate:.1%}'}  "
            f"errors {progress.errors}  tokens {progress.tokens:,}"
        )
        if self._bar is not None:
            self._bar.update(self._task, completed=progress.done, total=progress.total, stats=stats)
        elif not force or progress.done:
            eta = progress.eta
            self.out.stderr.write(
                f"progress: {progress.done}/{progress.total} attempts, {stats}"
                + (f", ETA {eta:.0f}s" if eta is not None else "")
                + "\n"
            )
            self.out.stderr.flush()

    def stop(self, progress: Progress | None = None) -> None:
        if self._bar is not None:
            if progress is not None:
                self.update(progress, force=True)
            self._bar.stop()
        elif progress is not None and not self.quiet and progress.done:
            self._last = 0.0
            self.update(progress, force=False)  # a final plain line
