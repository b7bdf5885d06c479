"""``osmosis eval run CONFIG``: an eval config — or a suite of them — offline, with the
platform's semantics."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import typer

from osmosis_cli.commands.eval.local.execute import execute, server_echo
from osmosis_cli.commands.eval.local.failures import rerun_commands
from osmosis_cli.commands.eval.local.options import (
    OUTPUT,
    PACE,
    SERVER,
    WHAT,
    LocalRunOptions,
    RowsOpt,
)
from osmosis_cli.terminal.declare import arg, flag
from osmosis_cli.terminal.errors import current_output, handle_errors
from osmosis_cli.terminal.output import Output

if TYPE_CHECKING:
    from osmosis_local_runner.api.doors import RunRequest, Uploader


@dataclass(kw_only=True)
class RunOptions(LocalRunOptions):
    PANELS: ClassVar[dict[str, str]] = {
        **LocalRunOptions.PANELS,
        **dict.fromkeys(
            (
                "dataset",
                "name",
                "fresh",
                "rows_spec",
                "retry_failed",
                "seed",
                "secrets_file",
                "dry_run",
            ),
            WHAT,
        ),
        **dict.fromkeys(("max_in_flight", "parallel"), PACE),
        **dict.fromkeys(("upload", "abbreviated_summary"), OUTPUT),
        **dict.fromkeys(
            (
                "listener_port",
                "advertise_url",
                "rollout_port",
                "rollout_mode",
                "rollout_python",
                "debug",
            ),
            SERVER,
        ),
    }
    config_path: Path = arg(metavar="CONFIG", help="configs/eval/NAME.toml", show_default=False)
    dataset: Path | None = flag(
        "--dataset --dataset-file FILE", "Local dataset file (overrides the TOML)."
    )
    name: str | None = flag(
        "--name NAME", "The run's name: .osmosis/evals/NAME/ (continued when it exists)."
    )
    fresh: bool = flag(
        "--fresh", "Start NAME over (the earlier run is archived, not deleted).", default=False
    )
    rows_spec: RowsOpt = None
    retry_failed: bool = flag(
        "--retry-failed",
        "Run again the attempts of NAME that errored or were skipped.",
        default=False,
    )
    max_in_flight: int | None = flag(
        "--max-in-flight N", "Attempts in flight (= --batch-size).", min=1
    )
    secrets_file: str | None = flag(
        "--secrets-file FILE",
        "NAME=value lines for the config's [secrets] (- reads stdin; beats the env).",
    )
    # accepted as published (local runs never ask): out of the help
    yes: bool = flag("--yes -y", hidden=True, default=False)
    upload: bool = flag(
        "--upload", "When the run finishes, upload it to the platform (eval upload).", default=False
    )
    listener_port: int | None = flag(
        "--listener-port PORT",
        "Server mode: the model bridge's port (default: any free one).",
        min=1,
        max=65535,
    )
    advertise_url: str | None = flag(
        "--advertise-url URL",
        "Server mode: the bridge's URL as a rollout in a container or sandbox "
        "reaches it (needs --listener-port).",
    )
    rollout_port: int | None = flag(
        "--rollout-port PORT",
        "Server mode: the rollout server's port (default: any free one).",
        min=1,
        max=65535,
    )
    # accepted from older templates (transcripts are kept): hidden
    log_samples: bool = flag("--log-samples", hidden=True, default=False)
    debug: bool = flag(
        "--debug", "Show the rollout server's output live (older templates).", default=False
    )
    seed: int | None = flag("--seed S", "Seed of the 10% sample.", min=0)
    rollout_mode: str | None = flag(
        "--rollout-mode server|native",
        "server: run a published-SDK rollout as its own server (detected from the "
        "rollout's pyproject.toml / imports); native: in-process.",
    )
    rollout_python: Path | None = flag(
        "--rollout-python PATH",
        "Server mode: the rollout's interpreter or virtualenv (default: uv, then "
        "rollouts/NAME/.venv).",
    )
    dry_run: bool = flag("--dry-run", "Show what would run (a suite: every entry).", default=False)
    parallel: int = flag(
        "--parallel K", "A suite: run K entries at once.", min=1, max=64, default=1
    )
    abbreviated_summary: bool = flag(
        "--abbreviated-summary", "A suite: a compact comparison table.", default=False
    )

    RENAMED: ClassVar[dict[str, str]] = {
        **LocalRunOptions.RENAMED,
        "rows_spec": "rows",
        "max_in_flight": "batch_size",
    }
    PRESENTATION: ClassVar[frozenset[str]] = LocalRunOptions.PRESENTATION | {
        "config_path",
        "name",
        "fresh",
        "retry_failed",
        "dry_run",
        "upload",
        "yes",
        "log_samples",
        "debug",
        "parallel",
        "abbreviated_summary",
        "secrets_file",
    }

    def renamed_settings(self) -> dict[str, Any]:
        """``--rows`` and ``--max-in-flight`` (the published name of ``--batch-size``)."""
        from osmosis_local_runner.api.doors import parse_rows

        found: dict[str, Any] = {}
        if self.max_in_flight is not None:
            found["batch_size"] = self.max_in_flight
        if self.rows_spec is not None:
            found["rows"] = parse_rows(self.rows_spec)
        return found

    def request(self, **more: Any) -> RunRequest:
        """What this invocation asks the runner for."""
        from osmosis_local_runner.api.doors import RunRequest

        return RunRequest(
            settings=self.run_settings(),
            config=self.config_path,
            output=self.output,
            name=self.name,
            resume=self.resume,
            fresh=self.fresh,
            retry_failed=self.retry_failed,
            continue_named=True,
            dry_run=self.dry_run,
            **self.sharing(),
            **more,
        )

    def check(self, out: Output) -> None:
        """Flags that only make sense together, and notes for the published ones."""
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
    from osmosis_client.platform.eval.suite_config import looks_like_suite
    from osmosis_local_runner.api.doors import check_mode

    out = current_output()
    opts.check(out)
    if opts.rollout_mode is not None:
        check_mode(opts.rollout_mode, "--rollout-mode")
    echo = server_echo(out) if out.verbose or opts.debug else None
    if looks_like_suite(opts.config_path):
        _run_suite(out, opts, echo)
    else:
        _run_config(ctx, out, opts, echo)


def _run_suite(out: Output, opts: RunOptions, echo: Any) -> None:
    from osmosis_cli.commands.eval.local.suite import dry_run, run_suite
    from osmosis_client.platform.eval.suite_config import load_suite
    from osmosis_local_runner.api.doors import suite_flags

    suite = load_suite(opts.config_path)
    flags = suite_flags(opts.run_settings(), echo)
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
        sharing=opts.sharing(),
    )


def _run_config(ctx: typer.Context, out: Output, opts: RunOptions, echo: Any) -> None:
    from osmosis_cli.commands.eval.local.outcome import named_resource
    from osmosis_cli.secret_values import local_secrets
    from osmosis_client.errors import InvalidInputError
    from osmosis_client.platform.eval.eval_config import load_config

    config = load_config(opts.config_path, replaced=opts.run_settings().replaced_keys())
    secrets = local_secrets(out, config.secrets.required, opts.secrets_file)
    to_file = opts.output is not None and opts.output.suffix == ".json"
    if opts.upload and to_file:
        raise InvalidInputError(
            "--upload needs a run directory, not -o FILE.json",
            hint="leave out -o (or give a directory)",
            code="USAGE",
        )
    upload = uploader(ctx, out) if opts.upload else None
    request = opts.request(
        upload=upload, server_echo=echo, price_source=platform_prices(ctx), secrets=secrets
    )
    resource = (
        (lambda s: rerun_commands(out, s.results))
        if to_file
        else (lambda s: named_resource(out, s))
    )
    execute(request, out, opts, resource)


def platform_prices(ctx: typer.Context) -> Callable[[list[str]], Any]:
    """``--prices platform``: the platform's published prices, read with this face's
    logged-in client — only if the run asks for them."""
    from osmosis_cli.context import state

    app_state = state(ctx)

    def read(models: list[str]) -> Any:
        client, _ = app_state.scoped_client()
        with client:
            return client.models.prices(models)

    return read


def uploader(ctx: typer.Context, out: Output) -> Uploader:
    """``--upload``: how a finished run reaches the platform (this face's client, with a
    progress bar)."""
    from osmosis_cli.commands.eval.hosted.upload import send_upload
    from osmosis_cli.context import state

    app_state = state(ctx)
    return lambda upload: send_upload(app_state, out, upload)
