"""``osmosis eval run CONFIG``: an eval config — or a suite of them — offline, with the
platform's semantics."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, ClassVar

import typer

from osmosis_cli.commands.eval.execute import execute, server_echo
from osmosis_cli.commands.eval.failures import rerun_commands
from osmosis_cli.commands.eval.options import (
    OUTPUT,
    PACE,
    SERVER,
    WHAT,
    LocalRunOptions,
    RolloutModeOpt,
    RolloutPythonOpt,
    adopt_saved,
)
from osmosis_cli.terminal.errors import current_output, handle_errors
from osmosis_cli.terminal.output import Output

if TYPE_CHECKING:
    from osmosis_local_runner.run.overrides import Overrides


@dataclass(kw_only=True)
class RunOptions(LocalRunOptions):
    PANELS: ClassVar[dict[str, str]] = {
        **LocalRunOptions.PANELS,
        **dict.fromkeys(
            ("dataset", "name", "fresh", "rows_spec", "retry_failed", "seed", "secrets_file",
             "dry_run"),
            WHAT,
        ),
        **dict.fromkeys(("max_in_flight", "parallel"), PACE),
        **dict.fromkeys(("upload", "abbreviated_summary"), OUTPUT),
        **dict.fromkeys(
            ("listener_port", "advertise_url", "rollout_port", "rollout_mode", "rollout_python",
             "debug"),
            SERVER,
        ),
    }
    config_path: Annotated[
        Path, typer.Argument(metavar="CONFIG", help="configs/eval/NAME.toml", show_default=False)
    ]
    dataset: Annotated[
        Path | None,
        typer.Option(
            "--dataset",
            "--dataset-file",
            metavar="FILE",
            help="Local dataset file (overrides the TOML).",
        ),
    ] = None
    name: Annotated[
        str | None,
        typer.Option(
            "--name",
            metavar="NAME",
            help="The run's name: .osmosis/evals/NAME/ (continued when it exists).",
        ),
    ] = None
    fresh: Annotated[
        bool,
        typer.Option("--fresh", help="Start NAME over (the earlier run is archived, not deleted)."),
    ] = False
    rows_spec: Annotated[
        str | None,
        typer.Option(
            "--rows", metavar="SPEC", help='Only these source rows, e.g. "3,7,10-20" (beats limit).'
        ),
    ] = None
    retry_failed: Annotated[
        bool,
        typer.Option(
            "--retry-failed", help="Run again the attempts of NAME that errored or were skipped."
        ),
    ] = False
    max_in_flight: Annotated[
        int | None,
        typer.Option(
            "--max-in-flight", min=1, metavar="N", help="Attempts in flight (= --batch-size)."
        ),
    ] = None
    secrets_file: Annotated[
        str | None,
        typer.Option(
            "--secrets-file",
            metavar="FILE",
            help="NAME=value lines for the config's [secrets] (- reads stdin; beats the env).",
        ),
    ] = None
    yes: Annotated[  # accepted as published (local runs never ask): out of the help
        bool, typer.Option("--yes", "-y", hidden=True)
    ] = False
    upload: Annotated[
        bool,
        typer.Option(
            "--upload", help="When the run finishes, upload it to the platform (eval upload)."
        ),
    ] = False
    listener_port: Annotated[
        int | None,
        typer.Option(
            "--listener-port",
            min=1,
            max=65535,
            metavar="PORT",
            help="Server mode: the model bridge's port (default: any free one).",
        ),
    ] = None
    advertise_url: Annotated[
        str | None,
        typer.Option(
            "--advertise-url",
            metavar="URL",
            help="Server mode: the bridge's URL as a rollout in a container or sandbox "
            "reaches it (needs --listener-port).",
        ),
    ] = None
    rollout_port: Annotated[
        int | None,
        typer.Option(
            "--rollout-port",
            min=1,
            max=65535,
            metavar="PORT",
            help="Server mode: the rollout server's port (default: any free one).",
        ),
    ] = None
    log_samples: Annotated[  # accepted from older templates (transcripts are kept): hidden
        bool, typer.Option("--log-samples", hidden=True)
    ] = False
    debug: Annotated[
        bool,
        typer.Option("--debug", help="Show the rollout server's output live (older templates)."),
    ] = False
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

    def run_overrides(self, output: Path, **more: Any) -> Overrides:
        """The runner's flags with this form's own: --rows, --max-in-flight, the ports."""
        from osmosis_cli.commands.eval.rowspec import parse_row_spec

        if self.max_in_flight is not None:
            more.setdefault("batch_size", self.max_in_flight)
        if self.rows_spec is not None:
            more.setdefault("rows", parse_row_spec(self.rows_spec))
        return self.overrides(output, **more)

    def check(self, out: Output) -> None:
        """Flags that only make sense together, and notes for the published ones."""
        from osmosis_client.errors import InvalidInputError

        json_output = self.output is not None and self.output.suffix == ".json"
        if json_output and (self.name or self.fresh):
            raise InvalidInputError(
                "--name and --fresh name a run directory; -o FILE.json is one results file",
                hint="drop -o (runs live in .osmosis/evals/NAME/), or -o a directory",
                code="USAGE",
            )
        if self.advertise_url is not None:
            check_advertise_url(out, self.advertise_url, self.listener_port)
        if self.log_samples:
            out.note("--log-samples is not needed: every attempt's transcript is kept")


def check_advertise_url(out: Output, url: str, listener_port: int | None) -> None:
    from urllib.parse import urlsplit

    from osmosis_client.errors import InvalidInputError
    from osmosis_client.platform.settings import is_loopback_host

    if listener_port is None:
        raise InvalidInputError(
            "--advertise-url needs --listener-port (the port the URL forwards to)",
            hint="add --listener-port PORT",
            code="USAGE",
        )
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname or parts.query or parts.fragment:
        raise InvalidInputError(
            f"--advertise-url {url!r} is not an http(s) URL with a host",
            hint="e.g. http://host.docker.internal:8900",
            code="USAGE",
        )
    if parts.scheme == "http" and not is_loopback_host(parts.hostname):
        out.warn(
            "--advertise-url is plain http to another host: the rollout's model calls (and "
            "the run's bearer token) cross the network unencrypted",
            code="INSECURE_ADVERTISE_URL",
        )


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
    opts.check(out)
    if opts.rollout_mode is not None:
        check_mode(opts.rollout_mode, "--rollout-mode")
    echo = {"server_echo": server_echo(out) if out.verbose or opts.debug else None}
    if looks_like_suite(opts.config_path):
        _run_suite(out, opts, echo)
    else:
        _run_config(out, opts, echo, uploader(ctx, out) if opts.upload else None)


def uploader(ctx: typer.Context, out: Output) -> Any:
    """``--upload``: how a finished run directory reaches the platform."""
    from osmosis_cli.commands.eval.upload import upload_run
    from osmosis_cli.context import state

    app_state = state(ctx)
    return lambda run_dir, config_path: upload_run(
        app_state, out, run_dir, config_path=config_path, locked=False
    )


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


def _run_config(out: Output, opts: RunOptions, echo: dict[str, Any], upload: Any = None) -> None:
    from osmosis_cli.commands.eval.named import run_named
    from osmosis_cli.secret_values import load_secrets
    from osmosis_client.platform.eval_config import load_config
    from osmosis_local_runner.run.overrides import config_spec

    config = load_config(opts.config_path)
    load_secrets(out, config.secrets.required, opts.secrets_file)
    output = opts.output
    if output is None or output.suffix != ".json":
        run_named(out, opts, config, echo, upload)
        return
    if upload is not None:
        from osmosis_client.errors import InvalidInputError

        raise InvalidInputError(
            "--upload needs a run directory, not -o FILE.json",
            hint="leave out -o (or give a directory)",
            code="USAGE",
        )
    if opts.resume or opts.retry_failed:
        adopt_saved(out, opts, output)
    flags = opts.run_overrides(output, resume=opts.resume, retry_failed=opts.retry_failed, **echo)
    execute(
        lambda: config_spec(config, flags),
        out,
        quiet=opts.quiet,
        max_error_rate=opts.max_error_rate,
        dry_run=opts.dry_run,
        junit=opts.junit,
        resource=lambda: rerun_commands(out, output),
    )
