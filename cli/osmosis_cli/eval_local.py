"""``osmosis eval run CONFIG`` and the seed form ``osmosis eval -m … -d … --eval-fn …``
(registered as ``osmosis eval seed``)."""

from __future__ import annotations

import contextlib
import json
import secrets
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from osmosis_cli._typer import SEED_COMMAND, Command
from osmosis_cli.errors import EXIT_FAILED, EXIT_INTERRUPTED, current_output, handle_errors

if TYPE_CHECKING:
    from osmosis_cli.output import Output
    from osmosis_local_runner.run.spec import Progress, RunPlan, RunResult, RunSpec

JsonOpt = Annotated[bool, typer.Option("--json", help="Print the results document on stdout.")]
QuietOpt = Annotated[bool, typer.Option("--quiet", "-q", help="No progress output.")]
LimitOpt = Annotated[
    int | None, typer.Option("--limit", min=1, metavar="N", help="Only the first N rows.")
]
NOpt = Annotated[int | None, typer.Option("--n", min=1, metavar="N", help="Attempts per row.")]
BatchOpt = Annotated[
    int | None,
    typer.Option("--batch-size", min=1, metavar="N", help="Attempts in flight at once."),
]
ThresholdOpt = Annotated[
    float | None,
    typer.Option("--pass-threshold", metavar="X", help="An attempt passes when score >= X."),
]
ModelOpt = Annotated[
    str | None,
    typer.Option("--model", metavar="MODEL", help="provider/model, a served name, or mock/…"),
]
BaseUrlOpt = Annotated[
    str | None,
    typer.Option("--base-url", metavar="URL", help="OpenAI-compatible endpoint, e.g. vLLM."),
]
KeyEnvOpt = Annotated[
    str | None,
    typer.Option("--api-key-env", metavar="NAME", help="NAME of the env var holding the key."),
]
OutOpt = Annotated[
    Path | None,
    typer.Option("-o", "--output", metavar="PATH", help="Results file (journal beside it)."),
]
ResumeOpt = Annotated[bool, typer.Option("--resume", help="Continue the run recorded at -o PATH.")]
NoCompatOpt = Annotated[
    bool,
    typer.Option(
        "--no-compat",
        help="Do not serve `osmosis_ai` 0.2 imports from osmosis-client's compatibility layer.",
    ),
]
MaxErrorRateOpt = Annotated[
    float | None,
    typer.Option(
        "--max-error-rate",
        min=0.0,
        max=1.0,
        metavar="X",
        help="Exit 1 when more than this fraction of attempts errored (always: all of them).",
    ),
]


MaxRetriesOpt = Annotated[
    int | None,
    typer.Option(
        "--max-retries",
        min=0,
        metavar="N",
        help="Retry an attempt up to N times after a transient infrastructure error "
        "(a crashed rollout server, a lost connection); never after a wrong answer.",
    ),
]
RolloutModeOpt = Annotated[
    str | None,
    typer.Option(
        "--rollout-mode",
        metavar="server|native",
        help="server: run a published-SDK rollout as its own server (detected from the "
        "rollout's pyproject.toml / imports); native: in-process.",
    ),
]
RolloutPythonOpt = Annotated[
    Path | None,
    typer.Option(
        "--rollout-python",
        metavar="PATH",
        help="Server mode: the rollout's interpreter or virtualenv (default: uv, then "
        "rollouts/NAME/.venv).",
    ),
]


DeadlineOpt = Annotated[
    float | None,
    typer.Option(
        "--deadline",
        min=0.001,
        metavar="SECONDS",
        help="Stop the whole run after SECONDS (finished attempts kept; exit 1; resumable).",
    ),
]
NoTranscriptsOpt = Annotated[
    bool,
    typer.Option(
        "--no-transcripts",
        help="Do not keep each attempt's final messages in the results (smaller files; "
        "`eval rescore` and the report's transcripts need them).",
    ),
]
CaBundleOpt = Annotated[
    Path | None,
    typer.Option(
        "--ca-bundle",
        metavar="PATH",
        help="Also trust the certificates in this PEM file (a private gateway's CA); "
        "default: $OSMOSIS_CA_BUNDLE. Certificates are always verified.",
    ),
]
JunitOpt = Annotated[
    Path | None,
    typer.Option(
        "--junit",
        metavar="PATH",
        help="Also write JUnit XML: one test case per row, one suite per eval fn (per entry).",
    ),
]


EndpointsOpt = Annotated[
    Path | None,
    typer.Option(
        "--endpoints",
        metavar="PATH",
        help="Endpoint registry (default: configs/endpoints.toml); --model names a row.",
    ),
]
HeaderOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--header",
        metavar='"NAME: VALUE"',
        help="An extra HTTP header for model calls (repeatable; wins over the files).",
    ),
]
SamplingArgsOpt = Annotated[
    str | None,
    typer.Option(
        "--sampling-args",
        metavar="JSON",
        help='Chat-completions parameters, e.g. \'{"temperature": 0.7, "top_p": 0.9}\'.',
    ),
]
TemperatureOpt = Annotated[
    float | None, typer.Option("--temperature", metavar="T", help="Sampling temperature.")
]


def sampling_args(text: str | None) -> dict[str, Any]:
    """``--sampling-args``: a JSON object of chat-completions parameters (finite numbers)."""
    if text is None:
        return {}
    from osmosis_client.errors import InvalidInputError

    def refuse(constant: str) -> Any:
        raise InvalidInputError(f"--sampling-args must hold finite numbers, not {constant}")

    try:
        value = json.loads(text, parse_constant=refuse)
    except json.JSONDecodeError as exc:
        raise InvalidInputError(
            f"--sampling-args is not JSON ({exc.msg})", hint="""e.g. '{"temperature": 0.7}'"""
        ) from None
    if not isinstance(value, dict):
        raise InvalidInputError("--sampling-args must be a JSON object")
    return value


def register(app: typer.Typer) -> None:
    app.command("run", cls=Command)(run_config)
    app.command(SEED_COMMAND, cls=Command)(seed)


def default_results_path(stem: str) -> Path:
    """``.osmosis/evals/<stem>-<UTC timestamp>-<random>.json``: unique even for runs
    started in the same second."""
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    while True:  # the random part makes a clash unlikely; checking makes it impossible
        path = Path(".osmosis") / "evals" / f"{stem}-{stamp}-{secrets.token_hex(2)}.json"
        if not path.exists() and not path.with_name(path.name + ".journal.jsonl").exists():
            return path
        stamp = f"{stamp[:16]}{secrets.token_hex(1)}"  # a new name, even if token_hex repeats


def _latest_resumable(stem: str, make_spec: Callable[[Path], RunSpec]) -> Path:
    """``--resume`` without ``-o``: the newest unfinished run of this config (under
    ``.osmosis/evals``) whose settings match the current ones."""
    from osmosis_client.errors import InvalidInputError
    from osmosis_local_runner.results.document import finished
    from osmosis_local_runner.run.runner import Runner

    journals = sorted(
        Path(".osmosis", "evals").glob(f"{stem}-*.json.journal.jsonl"),
        key=lambda p: p.stat().st_mtime,
        reverse=True,
    )
    for journal in journals:
        results = journal.with_name(journal.name[: -len(".journal.jsonl")])
        if finished(results):
            continue
        try:
            Runner(make_spec(results)).prepare()
        except InvalidInputError as exc:
            if exc.code == "RESUME_MISMATCH":
                continue
            raise
        return results
    raise InvalidInputError(
        f"nothing to resume: no unfinished run of {stem} with these settings in .osmosis/evals",
        hint="pass -o PATH of the run to continue",
        code="NOTHING_TO_RESUME",
    )


def results_path(output: Path | None, stem: str, *, resume: bool) -> Path:
    """``-o`` as given, else a fresh default path; ``--resume`` needs the ``-o`` of the run
    it continues."""
    if output is not None:
        return output
    if resume:
        from osmosis_client.errors import InvalidInputError

        raise InvalidInputError("--resume needs -o PATH", hint="pass the -o of the run to continue")
    return default_results_path(stem)


# --------------------------------------------------------------- eval run


@handle_errors
def run_config(
    ctx: typer.Context,
    config_path: Annotated[
        Path, typer.Argument(metavar="CONFIG", help="configs/eval/NAME.toml", show_default=False)
    ],
    limit: LimitOpt = None,
    n: NOpt = None,
    batch_size: BatchOpt = None,
    pass_threshold: ThresholdOpt = None,
    dataset: Annotated[
        Path | None,
        typer.Option("--dataset", metavar="FILE", help="Local dataset file (overrides the TOML)."),
    ] = None,
    model: ModelOpt = None,
    base_url: BaseUrlOpt = None,
    seed: Annotated[
        int | None, typer.Option("--seed", min=0, metavar="S", help="Seed of the 10% sample.")
    ] = None,
    api_key_env: KeyEnvOpt = None,
    output: OutOpt = None,
    resume: ResumeOpt = False,
    rollout_mode: RolloutModeOpt = None,
    rollout_python: RolloutPythonOpt = None,
    endpoints: EndpointsOpt = None,
    header: HeaderOpt = None,
    sampling_args_json: SamplingArgsOpt = None,
    temperature: TemperatureOpt = None,
    max_retries: MaxRetriesOpt = None,
    max_error_rate: MaxErrorRateOpt = None,
    deadline: DeadlineOpt = None,
    no_transcripts: NoTranscriptsOpt = False,
    junit: JunitOpt = None,
    ca_bundle: CaBundleOpt = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Show what would run (a suite: every entry).")
    ] = False,
    parallel: Annotated[
        int,
        typer.Option(
            "--parallel", min=1, max=64, metavar="K", help="A suite: run K entries at once."
        ),
    ] = 1,
    abbreviated_summary: Annotated[
        bool, typer.Option("--abbreviated-summary", help="A suite: a compact comparison table.")
    ] = False,
    json_output: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Run an eval config — or a suite of them — offline against a model endpoint (no
    login needed).

    A rollout written for the published osmosis-ai 0.3 SDK runs as the platform runs
    it: as its own rollout server, in its own environment, driven over HTTP. A file
    with [[eval]] / [[ablation]] tables is a suite: every entry runs, then a
    comparison table (-o names the suite's directory)."""
    from osmosis_client.platform.eval_config import load_config
    from osmosis_client.platform.suite_config import load_suite, looks_like_suite
    from osmosis_local_runner.run.overrides import Overrides, config_spec
    from osmosis_local_runner.server.detect import check_mode

    out = current_output()
    if rollout_mode is not None:
        check_mode(rollout_mode, "--rollout-mode")
    common: dict[str, Any] = {
        "limit": limit,
        "n": n,
        "batch_size": batch_size,
        "pass_threshold": pass_threshold,
        "dataset": dataset,
        "model": model,
        "base_url": base_url,
        "api_key_env": api_key_env,
        "seed": seed,
        "rollout_mode": rollout_mode,
        "rollout_python": rollout_python,
        "max_retries": max_retries,
        "deadline": deadline,
        "server_echo": _server_echo(out) if out.verbose else None,
        "endpoints": endpoints,
        "headers": list(header or []),
        "sampling_args": sampling_args(sampling_args_json),
        "temperature": temperature,
        "transcripts": not no_transcripts,
        "ca_bundle": ca_bundle,
    }
    if looks_like_suite(config_path):
        from osmosis_cli.suites import dry_run as suite_dry_run
        from osmosis_cli.suites import run_suite

        suite = load_suite(config_path)
        suite_flags = Overrides(output=Path("."), **common)
        if dry_run:
            suite_dry_run(out, suite, suite_flags)
            return
        run_suite(
            out,
            suite,
            suite_flags,
            directory=output,
            parallel=parallel,
            resume=resume,
            quiet=quiet,
            abbreviated=abbreviated_summary,
            max_error_rate=max_error_rate,
            junit=junit,
        )
        return
    config = load_config(config_path)
    if resume and output is None:
        output = _latest_resumable(
            config.name, lambda path: config_spec(config, Overrides(path, resume=True, **common))
        )
        out.info(f"Resuming {output}")
    flags = Overrides(
        output=results_path(output, config.name, resume=resume), resume=resume, **common
    )
    execute(
        lambda: config_spec(config, flags),
        out,
        quiet=quiet,
        max_error_rate=max_error_rate,
        dry_run=dry_run,
        junit=junit,
    )


def _server_echo(out: Output) -> Callable[[str], None]:
    """-v: the rollout server's output, live on stderr (already redacted)."""

    def echo(line: str) -> None:
        out.line(f"  server| {line}")

    return echo


# ------------------------------------------------------------- seed form


@handle_errors
def seed(
    ctx: typer.Context,
    module: Annotated[
        str | None,
        typer.Option(
            "-m", "--module", metavar="MODULE:ATTR", help="An AgentWorkflow or a RolloutAgentLoop."
        ),
    ] = None,
    dataset: Annotated[
        Path | None, typer.Option("-d", "--dataset", metavar="FILE", help="Dataset file.")
    ] = None,
    model: ModelOpt = None,
    eval_fn: Annotated[
        list[str] | None,
        typer.Option("--eval-fn", metavar="MODULE:FN", help="An eval function (repeatable)."),
    ] = None,
    base_url: BaseUrlOpt = None,
    api_key_env: KeyEnvOpt = None,
    api_key: Annotated[
        str | None,
        typer.Option(
            "--api-key",
            metavar="KEY",
            help="The key itself (visible to other users in argv: prefer --api-key-env).",
        ),
    ] = None,
    n: NOpt = None,
    batch_size: BatchOpt = None,
    pass_threshold: ThresholdOpt = None,
    limit: LimitOpt = None,
    offset: Annotated[
        int,
        typer.Option("--offset", min=0, metavar="N", help="Skip the first N rows (indices stay)."),
    ] = 0,
    endpoints: EndpointsOpt = None,
    header: HeaderOpt = None,
    sampling_args_json: SamplingArgsOpt = None,
    max_turns: Annotated[
        int | None,
        typer.Option("--max-turns", min=1, metavar="N", help="Agent loops: turns (default 10)."),
    ] = None,
    temperature: Annotated[
        float | None, typer.Option("--temperature", metavar="T", help="Sampling temperature.")
    ] = None,
    max_tokens: Annotated[
        int | None,
        typer.Option("--max-tokens", min=1, metavar="N", help="Tokens per model answer."),
    ] = None,
    baseline_model: Annotated[
        str | None,
        typer.Option(
            "--baseline-model", metavar="MODEL", help="Also run every item on this model."
        ),
    ] = None,
    baseline_base_url: Annotated[
        str | None,
        typer.Option("--baseline-base-url", metavar="URL", help="The baseline's endpoint."),
    ] = None,
    baseline_api_key_env: Annotated[
        str | None,
        typer.Option(
            "--baseline-api-key-env", metavar="NAME", help="NAME of the baseline's key variable."
        ),
    ] = None,
    debug: Annotated[
        bool, typer.Option("--debug", help="Agent loops: ctx.log_event traces to ./local_debug/.")
    ] = False,
    no_compat: NoCompatOpt = False,
    output: OutOpt = None,
    resume: ResumeOpt = False,
    max_retries: MaxRetriesOpt = None,
    max_error_rate: MaxErrorRateOpt = None,
    deadline: DeadlineOpt = None,
    no_transcripts: NoTranscriptsOpt = False,
    junit: JunitOpt = None,
    ca_bundle: CaBundleOpt = None,
    json_output: JsonOpt = False,
    quiet: QuietOpt = False,
    stray: Annotated[list[str] | None, typer.Argument(hidden=True, metavar="")] = None,
) -> None:
    """The seed form: osmosis eval -m MODULE:ATTR -d DATASET --model M --eval-fn MODULE:FN.

    Runs an AgentWorkflow or a 0.2 RolloutAgentLoop over every row of a dataset
    (unless --limit) and scores each attempt with the eval functions.
    """
    from osmosis_cli.user_imports import prepare_user_imports
    from osmosis_client.errors import InvalidInputError
    from osmosis_local_runner.run.overrides import Overrides, seed_spec

    out = current_output()
    _refuse_stray(stray)
    given = {"-m": module, "-d": dataset, "--model": model, "--eval-fn": eval_fn}
    missing = [flag for flag, value in given.items() if not value]
    if missing or module is None or dataset is None:
        raise InvalidInputError(
            f"missing {', '.join(missing)}",
            hint="osmosis eval -m MODULE:ATTR -d DATASET --model M --eval-fn MODULE:FN",
        )
    if api_key is not None:
        out.warn(
            "--api-key puts the key in your shell history and the process list: "
            "prefer --api-key-env NAME"
        )
    flags = Overrides(
        output=results_path(output, dataset.stem, resume=resume),
        limit=limit,
        n=n,
        batch_size=batch_size,
        pass_threshold=pass_threshold,
        model=model,
        base_url=base_url,
        api_key_env=api_key_env,
        resume=resume,
        max_retries=max_retries,
        deadline=deadline,
        transcripts=not no_transcripts,
        ca_bundle=ca_bundle,
        endpoints=endpoints,
        headers=list(header or []),
        sampling_args=sampling_args(sampling_args_json),
        offset=offset,
        max_turns=max_turns,
        temperature=temperature,
        max_tokens=max_tokens,
        api_key=api_key,
        baseline_model=baseline_model,
        baseline_base_url=baseline_base_url,
        baseline_api_key_env=baseline_api_key_env,
        debug_dir=Path("local_debug") if debug else None,
    )

    def make_spec() -> RunSpec:
        assert module is not None and dataset is not None
        prepare_user_imports(out, no_compat=no_compat)
        return seed_spec(module, dataset, eval_fn or [], flags)

    execute(make_spec, out, quiet=quiet, max_error_rate=max_error_rate, junit=junit)


def _refuse_stray(stray: list[str] | None) -> None:
    """``osmosis eval --limit 2 run CONFIG``: options go after the subcommand."""
    if not stray:
        return
    from osmosis_cli.main import eval_app
    from osmosis_client.errors import InvalidInputError

    commands = {c.name for c in eval_app.registered_commands if c.name}
    if stray[0] in commands:
        raise InvalidInputError(
            f"options before the subcommand {stray[0]!r} are not allowed",
            hint=f"put them after it: osmosis eval {stray[0]} … --option",
            code="USAGE",
        )
    raise InvalidInputError(
        f"unexpected argument {stray[0]!r}",
        hint="the seed form takes only options; see `osmosis eval seed --help`",
        code="USAGE",
    )


# ------------------------------------------------------------- execution


def execute(
    make_spec: Callable[[], RunSpec],
    out: Output,
    *,
    quiet: bool,
    max_error_rate: float | None,
    dry_run: bool = False,
    junit: Path | None = None,
) -> None:
    """Load, plan, run with progress and Ctrl-C handling, report; exit 130 when stopped
    and 1 when every attempt (or more than ``--max-error-rate``) errored. With
    ``--json``, whatever user code prints goes to stderr: stdout holds the document.
    ``--junit`` and the GitHub step summary are written whatever the verdict."""
    from osmosis_cli.ci_outputs import after_local, check_junit_path, local_sources
    from osmosis_client.errors import OsmosisError
    from osmosis_local_runner.results.document import error_verdict

    with out.user_output_to_stderr():
        spec = make_spec()
        check_junit_path(junit, spec.output)
        before = _stamp(spec.output)
        try:
            result = _run(spec, out, quiet=quiet, dry_run=dry_run)
        except OsmosisError:
            # stopped by a deadline or a journal failure: the document of what finished
            # was written — CI still gets its artefacts
            if _stamp(spec.output) not in (None, before):
                after_local(out, junit, local_sources([(spec.output.stem, spec.output)]))
            raise
    if result is None:
        return
    report_result(out, result)
    after_local(out, junit, local_sources([(result.output.stem, result.output)]))
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


def _run(spec: RunSpec, out: Output, *, quiet: bool, dry_run: bool) -> RunResult | None:
    import asyncio
    import signal

    from osmosis_local_runner.run.runner import Runner

    fns = [fn.name for fn in spec.eval_fns] or ["grader"]
    display = _RunDisplay(out, fns, quiet=quiet)
    runner = Runner(spec, on_progress=display.update, on_note=out.info)
    plan = runner.prepare()
    _show_plan(out, plan, spec)
    if dry_run:
        if out.json_mode:
            out.emit_json({"plan": _plan_json(plan)})
        return None

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

    import gc

    gc.collect()
    gc.freeze()  # start-up objects never move again: the run's collections stay short
    return asyncio.run(main())


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
    return (
        f"{progress.rate:.1f}/s  {'  '.join(rates)}  errors {progress.errors}  "
        f"tokens {progress.tokens:,}"
    )


class _RunDisplay:
    def __init__(self, out: Output, fns: list[str], *, quiet: bool) -> None:
        from osmosis_cli.progress import ProgressDisplay

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


def report_result(out: Output, result: RunResult) -> None:
    summary = result.summary
    if out.json_mode:
        out.emit_file(result.output)  # the document as written, byte for byte
        return
    fns = summary["eval_fns"]
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
    seconds = summary["total_duration_ms"] / 1000
    out.print(
        f"{summary['total_rows']} rows, {summary['total_runs']} attempts "
        f"({summary['errored_runs']} errored), {summary['total_tokens']:,} tokens, "
        f"{seconds:.1f}s — {summary['status']}"
    )
    out.info(f"Results written to {result.output}")
    if summary["status"] == "stopped":
        out.info(f"Resume with: --resume -o {result.output}")
    _report_errors(out, result)


def _report_errors(out: Output, result: RunResult) -> None:
    from osmosis_client._redact import safe_text

    errors = list(result.errors())
    for row_index, run_index, error in errors[:3]:
        out.info(f"  row {row_index} run {run_index}: {safe_text(error)}")
    if len(errors) > 3:
        out.info(f"  … {len(errors) - 3} more errors in {result.output}")


def _fmt(value: Any) -> str:
    from osmosis_local_runner.results.scoring import score_text

    return score_text(value, "")
