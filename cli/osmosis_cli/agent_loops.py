"""``osmosis serve`` and ``osmosis validate``: 0.2 agent loops as rollout servers."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from osmosis_cli._typer import Command
from osmosis_cli.context import state
from osmosis_cli.errors import EXIT_FAILED, EXIT_INTERRUPTED, current_output, handle_errors

if TYPE_CHECKING:
    from osmosis_cli.context import AppState
    from osmosis_cli.output import Output
    from osmosis_client.rollout.agent_loop.server import RolloutServer
    from osmosis_client.rollout.agent_loop.validate import ValidationReport

ModuleOpt = Annotated[
    str, typer.Option("-m", "--module", metavar="MODULE:ATTR", help="The RolloutAgentLoop.")
]
NoCompatOpt = Annotated[
    bool,
    typer.Option("--no-compat", help="Do not serve `osmosis_ai` 0.2 imports from osmosis-client."),
]
LOG_LEVELS = ("debug", "info", "warning", "error")
PUBLIC_ADDRESS_SERVICE = "https://api.ipify.org"


def register(app: typer.Typer) -> None:
    app.command("serve", cls=Command)(serve)
    app.command("validate", cls=Command)(validate)


def _load_loop(out: Output, module: str, no_compat: bool) -> Any:
    from osmosis_cli.user_imports import prepare_user_imports
    from osmosis_local_runner.run.discovery import load_agent_loop, load_attr

    prepare_user_imports(out, no_compat=no_compat)
    value, where = load_attr(module)
    return load_agent_loop(value, where)


def _show_report(out: Output, report: ValidationReport, *, verbose: bool) -> None:
    name = report.loop_name or "?"
    verdict = "valid" if report.ok else "INVALID"
    out.print(f"Agent loop {name!r} ({report.loop_class}): {verdict}")
    tools = ", ".join(report.tools) or "none"
    out.print(f"  tools ({len(report.tools)}): {tools}")
    for warning in report.warnings:
        out.print(f"  warning: {warning}")
    for error in report.errors:
        out.print(f"  error: {error}")
    if verbose and report.ok:
        out.print("  run() is async; get_tools() accepted the validation request")


@handle_errors
def validate(
    ctx: typer.Context,
    module: ModuleOpt,
    verbose: Annotated[bool, typer.Option("-v", "--verbose", help="A longer report.")] = False,
    no_compat: NoCompatOpt = False,
) -> None:
    """Check an agent loop without running it (exit 0 valid, 1 not)."""
    from osmosis_client.rollout.agent_loop.validate import validate_agent_loop

    out = current_output()
    report = validate_agent_loop(_load_loop(out, module, no_compat))
    _show_report(out, report, verbose=verbose)
    if not report.ok:
        raise typer.Exit(EXIT_FAILED)


@handle_errors
def serve(
    ctx: typer.Context,
    module: ModuleOpt,
    port: Annotated[int, typer.Option("-p", "--port", min=0, max=65535, metavar="PORT")] = 9000,
    host: Annotated[
        str | None,
        typer.Option(
            "-H",
            "--host",
            metavar="HOST",
            help="Address to bind (default: 0.0.0.0; with --local, 127.0.0.1).",
        ),
    ] = None,
    local: Annotated[
        bool, typer.Option("--local", help="No API key and no registration (local debugging).")
    ] = False,
    skip_register: Annotated[
        bool, typer.Option("--skip-register", help="Do not register with the platform.")
    ] = False,
    api_key: Annotated[
        str | None,
        typer.Option("--api-key", metavar="KEY", help="The key trainers must send (default: new)."),
    ] = None,
    public_host: Annotated[
        str | None,
        typer.Option(
            "--public-host", metavar="HOST", help="The address to register (default: looked up)."
        ),
    ] = None,
    no_validate: Annotated[
        bool, typer.Option("--no-validate", help="Skip the agent loop's checks.")
    ] = False,
    log_dir: Annotated[
        Path | None,
        typer.Option("--log", metavar="DIR", help="ctx.log_event traces under DIR/UNIX_TIME/."),
    ] = None,
    log_level: Annotated[
        str, typer.Option("--log-level", metavar="LEVEL", help="debug, info, warning or error.")
    ] = "info",
    max_queued: Annotated[
        int,
        typer.Option(
            "--max-queued",
            min=0,
            metavar="N",
            help="Rollouts that may wait beyond the running ones (more: 429 + Retry-After).",
        ),
    ] = 1000,
    no_compat: NoCompatOpt = False,
) -> None:
    """Serve an agent loop for training (the rollout-server protocol of the 0.2 SDK)."""
    import asyncio
    import secrets
    import time

    from osmosis_client.errors import InvalidInputError
    from osmosis_client.platform.settings import is_loopback_host
    from osmosis_client.rollout.agent_loop.server import RolloutServer
    from osmosis_client.rollout.agent_loop.validate import validate_agent_loop

    out = current_output()
    if local and api_key:
        raise InvalidInputError("--local and --api-key exclude each other", code="USAGE")
    if api_key is not None and not api_key.strip():
        raise InvalidInputError(
            "--api-key is empty (an unset variable?)",
            hint="give the key trainers will send, or leave --api-key out to have one made",
            code="USAGE",
        )
    # without a key anyone who reaches the port can start rollouts: loopback by default
    host = host or ("127.0.0.1" if local else "0.0.0.0")
    if local and not is_loopback_host(host):
        out.warn(
            f"serving on {host} with no API key: anyone who can reach this port can start "
            "rollouts (drop --local to require a key, or bind 127.0.0.1)"
        )
    if log_level.lower() not in LOG_LEVELS:
        raise InvalidInputError(
            f"unknown --log-level {log_level!r}", hint="use " + ", ".join(LOG_LEVELS)
        )
    register_it = not (local or skip_register)
    app_state = state(ctx)
    if register_it:
        app_state.resolve()  # a logged-in session is required: fail now, not after start-up
    loop = _load_loop(out, module, no_compat)
    if not no_validate:
        report = validate_agent_loop(loop)
        if not report.ok:
            _show_report(out, report, verbose=False)
            raise typer.Exit(EXIT_FAILED)
    key = None if local else (api_key or f"osm_rollout_{secrets.token_urlsafe(24)}")
    if key and api_key is None:
        out.print(f"API key (shown once; trainers send it as a Bearer token): {key}")
    _setup_logging(out, log_level)
    debug_dir = log_dir / str(int(time.time())) if log_dir else None
    server = RolloutServer(loop, api_key=key, debug_dir=debug_dir, max_queued=max_queued)
    stopped_by_sigint = asyncio.run(
        _serve(
            out,
            app_state,
            server,
            host,
            port,
            key,
            public_host if register_it else None,
            register_it,
        )
    )
    if stopped_by_sigint:
        raise typer.Exit(EXIT_INTERRUPTED)


async def _serve(
    out: Output,
    app_state: AppState,
    server: RolloutServer,
    host: str,
    port: int,
    key: str | None,
    public_host: str | None,
    register_it: bool,
) -> bool:
    """Serve until SIGINT/SIGTERM; True when stopped by SIGINT."""
    import asyncio
    import contextlib
    import signal

    bound = await server.start(host, port)
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
        if register_it:
            await _register(out, app_state, server, host, bound, key, public_host)
        await stop.wait()
    finally:
        out.info("stopping: cancelling running rollouts")
        await server.stop()
    return signal.SIGINT in received


async def _register(
    out: Output,
    app_state: AppState,
    server: RolloutServer,
    host: str,
    port: int,
    key: str | None,
    public_host: str | None,
) -> None:
    """Register after /health answers locally (the platform health-checks us at once).
    A failed registration is a warning: the server keeps serving."""
    import asyncio

    from osmosis_client.errors import OsmosisError

    if not await _healthy(port):
        out.warn("the server does not answer /health locally; not registering")
        return
    address = public_host or await _advertised(out, host)
    if address is None:
        return
    auth = app_state.resolve()
    name = str(getattr(server.loop, "name", ""))
    try:
        client = app_state.client(auth)
        with client:
            register = client.rollout_servers.register
            result = await asyncio.to_thread(register, address, port, name, key)
    except OsmosisError as exc:
        out.warn(f"registration with the platform failed ({exc.message}); still serving")
        return
    check = result.health_check_result
    detail = f" — {check.error}" if check and check.error else ""
    out.info(f"Registered with the platform as {result.id}: {result.status}{detail}")


async def _healthy(port: int) -> bool:
    import asyncio

    import aiohttp

    async with aiohttp.ClientSession() as session:
        for _ in range(50):
            try:
                async with session.get(f"http://127.0.0.1:{port}/health") as response:
                    if response.status == 200:
                        return True
            except aiohttp.ClientError:
                pass
            await asyncio.sleep(0.1)
    return False


async def _advertised(out: Output, host: str) -> str | None:
    """The address to register: -H when it is specific, else this machine's public
    address — looked up (and said so) only because registration needs it."""
    if host not in ("0.0.0.0", "::", ""):
        return host
    import ipaddress

    import httpx

    out.info(
        f"looking up this machine's public address at {PUBLIC_ADDRESS_SERVICE} to register "
        "it (pass --public-host to skip)"
    )
    try:
        async with httpx.AsyncClient(timeout=5.0) as client:
            response = await client.get(PUBLIC_ADDRESS_SERVICE)
            response.raise_for_status()
            return str(ipaddress.ip_address(response.text[:64].strip()))
    except (httpx.HTTPError, ValueError) as exc:
        out.warn(f"could not learn the public address ({type(exc).__name__}); not registering")
        return None


def _setup_logging(out: Output, level: str) -> None:
    class _Handler(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            out.stderr.write(f"{record.levelname.lower()}: {record.getMessage()}\n")
            out.stderr.flush()

    log = logging.getLogger("osmosis_client.serve")
    log.setLevel(level.upper())
    log.addHandler(_Handler())
    log.propagate = False
