"""``osmosis serve -m MODULE:ATTR``: an agent loop served for training (the 0.2 rollout
server protocol) until Ctrl-C or SIGTERM."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from osmosis_cli.commands.agent_loop.loading import ModuleOpt, NoCompatOpt, load_loop, show_report
from osmosis_cli.commands.agent_loop.registration import register_server
from osmosis_cli.context import state
from osmosis_cli.terminal.declare import flag
from osmosis_cli.terminal.errors import EXIT_FAILED, EXIT_INTERRUPTED, current_output, handle_errors

if TYPE_CHECKING:
    from osmosis_cli.context import AppState
    from osmosis_cli.terminal.output import Output
    from osmosis_client.rollout.agent_loop.server import RolloutServer

LOG_LEVELS = ("debug", "info", "warning", "error")


@dataclass(kw_only=True)
class ServeOptions:
    module: ModuleOpt
    port: int = flag("-p --port PORT", min=0, max=65535, default=9000)
    host: str | None = flag(
        "-H --host HOST", "Address to bind (default: 0.0.0.0; with --local, 127.0.0.1)."
    )
    local: bool = flag(
        "--local --local-debug", "No API key and no registration (local debugging).", default=False
    )
    reload: bool = flag(
        "--reload",
        "Accepted from 0.2 (which exits on it); serves without reloading.",
        default=False,
    )
    skip_register: bool = flag(
        "--skip-register", "Do not register with the platform.", default=False
    )
    api_key: str | None = flag("--api-key KEY", "The key trainers must send (default: new).")
    public_host: str | None = flag(
        "--public-host HOST", "The address to register (default: looked up)."
    )
    no_validate: bool = flag("--no-validate", "Skip the agent loop's checks.", default=False)
    log_dir: Path | None = flag("--log DIR", "ctx.log_event traces under DIR/UNIX_TIME/.")
    log_level: str = flag("--log-level LEVEL", "debug, info, warning or error.", default="info")
    max_queued: int = flag(
        "--max-queued N",
        "Rollouts that may wait beyond the running ones (more: 429 + Retry-After).",
        min=0,
        default=1000,
    )
    no_compat: NoCompatOpt = False

    @property
    def registers(self) -> bool:
        return not (self.local or self.skip_register)

    def bind_host(self) -> str:
        # without a key anyone who reaches the port can start rollouts: loopback by default
        return self.host or ("127.0.0.1" if self.local else "0.0.0.0")


@handle_errors
def serve(ctx: typer.Context, opts: ServeOptions) -> None:
    """Serve an agent loop for training (the rollout-server protocol of the 0.2 SDK)."""
    import asyncio
    import secrets
    import time

    from osmosis_client.rollout.agent_loop.server import RolloutServer
    from osmosis_client.rollout.agent_loop.validate import validate_agent_loop

    out = current_output()
    _check(out, opts)
    app_state = state(ctx)
    if opts.registers:
        app_state.resolve()  # a logged-in session is required: fail now, not after start-up
    loop = load_loop(out, opts.module, opts.no_compat)
    if not opts.no_validate:
        report = validate_agent_loop(loop)
        if not report.ok:
            show_report(out, report, verbose=False)
            raise typer.Exit(EXIT_FAILED)
    key = None if opts.local else (opts.api_key or f"osm_rollout_{secrets.token_urlsafe(24)}")
    if key and opts.api_key is None:
        out.print(f"API key (shown once; trainers send it as a Bearer token): {key}")
    _setup_logging(out, opts.log_level)
    debug_dir = opts.log_dir / str(int(time.time())) if opts.log_dir else None
    server = RolloutServer(loop, api_key=key, debug_dir=debug_dir, max_queued=opts.max_queued)
    if asyncio.run(_serve(out, app_state, server, opts, key)):
        raise typer.Exit(EXIT_INTERRUPTED)


def _check(out: Output, opts: ServeOptions) -> None:
    from osmosis_client.errors import InvalidInputError
    from osmosis_client.platform.settings import is_loopback_host

    if opts.local and opts.api_key:
        raise InvalidInputError("--local and --api-key exclude each other", code="USAGE")
    if opts.api_key is not None and not opts.api_key.strip():
        raise InvalidInputError(
            "--api-key is empty (an unset variable?)",
            hint="give the key trainers will send, or leave --api-key out to have one made",
            code="USAGE",
        )
    if opts.reload:
        out.warn(
            "--reload is not offered (0.2 accepted it, then exited before serving): serving "
            "without it; restart the command after editing the agent loop",
            code="RELOAD_IGNORED",
        )
    host = opts.bind_host()
    if opts.local and not is_loopback_host(host):
        out.warn(
            f"serving on {host} with no API key: anyone who can reach this port can start "
            "rollouts (drop --local to require a key, or bind 127.0.0.1)"
        )
    if opts.log_level.lower() not in LOG_LEVELS:
        raise InvalidInputError(
            f"unknown --log-level {opts.log_level!r}", hint="use " + ", ".join(LOG_LEVELS)
        )


async def _serve(
    out: Output, app_state: AppState, server: RolloutServer, opts: ServeOptions, key: str | None
) -> bool:
    """Serve until SIGINT/SIGTERM; True when stopped by SIGINT."""
    import asyncio
    import contextlib
    import signal

    host = opts.bind_host()
    bound = await server.start(host, opts.port)
    name = getattr(server.loop, "name", type(server.loop).__name__)
    out.info(f"Serving agent loop {name!r} on http://{host}:{bound} (Ctrl-C to stop)")
    stop = asyncio.Event()
    received: list[int] = []

    def on_signal(sig: int) -> None:
        received.append(sig)
        stop.set()

    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, on_signal, sig)
    try:
        if opts.registers:
            await register_server(out, app_state, server, host, bound, key, opts.public_host)
        await stop.wait()
    finally:
        out.info("stopping: cancelling running rollouts")
        await server.stop()
    return signal.SIGINT in received


def _setup_logging(out: Output, level: str) -> None:
    class _Handler(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            out.stderr.write(f"{record.levelname.lower()}: {record.getMessage()}\n")
            out.stderr.flush()

    log = logging.getLogger("osmosis_client.serve")
    log.setLevel(level.upper())
    log.addHandler(_Handler())
    log.propagate = False
