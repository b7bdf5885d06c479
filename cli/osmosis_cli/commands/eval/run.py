"""``osmosis eval run CONFIG``: an eval config — or a suite of them — offline, with the
platform's semantics."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import typer

from osmosis_cli.commands.eval.execute import (
    execute,
    latest_resumable,
    results_path,
    server_echo,
)
from osmosis_cli.commands.eval.options import (
    LocalRunOptions,
    RolloutModeOpt,
    RolloutPythonOpt,
)
from osmosis_cli.terminal.errors import current_output, handle_errors
from osmosis_cli.terminal.output import Output


@dataclass(kw_only=True)
class RunOptions(LocalRunOptions):
    config_path: Annotated[
        Path, typer.Argument(metavar="CONFIG", help="configs/eval/NAME.toml", show_default=False)
    ]
    dataset: Annotated[
        Path | None,
        typer.Option("--dataset", metavar="FILE", help="Local dataset file (overrides the TOML)."),
    ] = None
    seed: Annotated[
        int | None, typer.Option("--seed", min=0, metavar="S", help="Seed of the 10% sample.")
    ] = None
    rollout_mode: RolloutModeOpt = None
    rollout_python: RolloutPythonOpt = None
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Show what would run (a suite: every entry).")
    ] = False
    parallel: Annotated[
        int,
        typer.Option(
            "--parallel", min=1, max=64, metavar="K", help="A suite: run K entries at once."
        ),
    ] = 1
    abbreviated_summary: Annotated[
        bool, typer.Option("--abbreviated-summary", help="A suite: a compact comparison table.")
    ] = False


@handle_errors
def run(ctx: typer.Context, opts: RunOptions) -> None:
    """Run an eval config — or a suite of them — offline against a model endpoint (no
    login needed).

    A rollout written for the published osmosis-ai 0.3 SDK runs as the platform runs
    it: as its own rollout server, in its own environment, driven over HTTP. A file
    with [[eval]] / [[ablation]] tables is a suite: every entry runs, then a
    comparison table (-o names the suite's directory)."""
    from osmosis_client.platform.suite_config import looks_like_suite
    from osmosis_local_runner.server.detect import check_mode

    out = current_output()
    if opts.rollout_mode is not None:
        check_mode(opts.rollout_mode, "--rollout-mode")
    echo = {"server_echo": server_echo(out) if out.verbose else None}
    if looks_like_suite(opts.config_path):
        _run_suite(out, opts, echo)
    else:
        _run_config(out, opts, echo)


def _run_suite(out: Output, opts: RunOptions, echo: dict[str, Any]) -> None:
    from osmosis_cli.commands.eval.suite import dry_run, run_suite
    from osmosis_client.platform.suite_config import load_suite

    suite = load_suite(opts.config_path)
    flags = opts.overrides(Path("."), **echo)
    if opts.dry_run:
        dry_run(out, suite, flags)
        return
    run_suite(
        out,
        suite,
        flags,
        directory=opts.output,
        parallel=opts.parallel,
        resume=opts.resume,
        quiet=opts.quiet,
        abbreviated=opts.abbreviated_summary,
        max_error_rate=opts.max_error_rate,
        junit=opts.junit,
    )


def _run_config(out: Output, opts: RunOptions, echo: dict[str, Any]) -> None:
    from osmosis_client.platform.eval_config import load_config
    from osmosis_local_runner.run.overrides import config_spec

    config = load_config(opts.config_path)
    output = opts.output
    if opts.resume and output is None:
        output = latest_resumable(
            config.name, lambda path: config_spec(config, opts.overrides(path, **echo))
        )
        out.info(f"Resuming {output}")
    flags = opts.overrides(results_path(output, config.name, resume=opts.resume), **echo)
    execute(
        lambda: config_spec(config, flags),
        out,
        quiet=opts.quiet,
        max_error_rate=opts.max_error_rate,
        dry_run=opts.dry_run,
        junit=opts.junit,
    )
