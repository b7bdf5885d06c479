"""The rollout server process: start, readiness, output, stop — and no orphans.

The entrypoint runs as ``__main__`` (cwd = the rollout directory) on the rollout's
interpreter, in a new session (its own process group), with the environment of
rollout-protocol.md part B: forked by a warm interpreter that holds the rollout's
installed packages imported (warm.py), else started cold through a tiny bootstrap
(``warm_zygote.py run``). Either way the server is SIGTERMed when osmosis-client dies
(``PR_SET_PDEATHSIG``, or a pidfd on the controller) and runs the entrypoint with
``runpy``; a cold start records the installed modules it imported, for the next run.

Readiness: ``GET /health`` every 0.2 s for up to 90 s, failing at once (with the
server's last output lines) if the process exits; the instance id it reports must
be the one we set, or another process owns the port. Stop: SIGTERM to the group,
SIGKILL after a grace period. Its record (``orphans.py``) lets a later run stop it
if we are killed; its output goes through ``output.py`` (redacted, logged, echoed).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import secrets
import signal
import socket
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from osmosis_client.errors import InvalidInputError
from osmosis_client.platform.eval.eval_config import ROLLOUT_SERVER_VARS
from osmosis_local_runner.errors import RunAborted
from osmosis_local_runner.server.orphans import INSTANCE_VAR, forget, record_server
from osmosis_local_runner.server.output import Redactor, ServerOutput
from osmosis_local_runner.server.uv_sync import import_path
from osmosis_local_runner.server.warm import ZYGOTE, Warm, WarmProcess

if TYPE_CHECKING:
    import aiohttp

logger = logging.getLogger("osmosis_client.server")

PORT_VAR = "_OSMOSIS_ROLLOUT_PORT"
ARTIFACT_VAR = "_OSMOSIS_ROLLOUT_ARTIFACT_ROOT"
INSTANCE_HEADER = "x-osmosis-rollout-instance-id"
HEALTH_INTERVAL = 0.2
HEALTH_TIMEOUT = 90.0
STOP_GRACE = 15.0  # the server drains in-flight rollouts for up to ~10 s


class ServerStartError(RunAborted):
    """The rollout server did not come up (exit 1); ``issues`` holds its last output."""

    code = "ROLLOUT_SERVER_FAILED"

    def __init__(
        self,
        message: str,
        *,
        output: Iterable[str] = (),
        hint: str | None = None,
        log: Path | None = None,
    ):
        lines = list(output)
        where = f"all of its output is in {log}" if log is not None else "see the run log"
        shown = f"its last lines are below; {where}" if lines else where
        super().__init__(
            message,
            hint=f"{hint}; {shown}" if hint else shown,
            data={"output": lines, **({"log": str(log)} if log is not None else {})},
        )
        self.issues = [f"| {line}" for line in lines]


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def check_reserved(env: Mapping[str, str], where: str = "[env]") -> None:
    """The three variables osmosis-client sets may not be overridden."""
    clash = sorted(name for name in ROLLOUT_SERVER_VARS if name in env)
    if clash:
        raise InvalidInputError(
            f"{where} sets {', '.join(clash)}, which osmosis-client sets for the rollout server",
            hint="remove it from the config",
            code="RESERVED_ENV",
        )


# ------------------------------------------------------------------ process


@dataclass(frozen=True)
class Health:
    capacity: int | None  # None: unbounded
    body: dict[str, Any]


def capacity_of(body: Mapping[str, Any], default: int = 4) -> int | None:
    """``concurrency.max_concurrent`` (null: unbounded), else a Harbor backend's
    ``max_queue_depth``, else the SDK's default of 4."""
    concurrency = body.get("concurrency")
    if isinstance(concurrency, dict):
        if "max_concurrent" in concurrency:
            value = concurrency["max_concurrent"]
            if value is None:
                return None
            if isinstance(value, int) and not isinstance(value, bool) and value >= 1:
                return value
        value = concurrency.get("max_queue_depth")
        if isinstance(value, int) and not isinstance(value, bool) and value >= 1:
            return value
    return default


class ServerProcess:
    """One rollout server, started and stopped by the controller."""

    def __init__(
        self,
        python: Path,
        entrypoint: Path,
        *,
        env: Mapping[str, str],
        run_dir: Path,
        registry: Path | None,
        redact: Redactor,
        echo: Callable[[str], None] | None = None,
        health_timeout: float = HEALTH_TIMEOUT,
        health_interval: float = HEALTH_INTERVAL,
        stop_grace: float = STOP_GRACE,
        port: int = 0,
        warm: Warm | None = None,
    ) -> None:
        self.python = python
        self.warm = warm
        #: whether the running server was forked warm (None: not started)
        self.started_warm: bool | None = None
        #: how long it took to answer its health check (a warm interpreter importing the
        #: same packages takes about as long to be ready)
        self.startup_seconds: float | None = None
        self.fixed_port = port  # --rollout-port (0: a free port each start)
        self.entrypoint = entrypoint
        self.base_env = dict(env)
        self.run_dir = run_dir
        self.registry = registry
        self.redact = redact
        self.echo = echo
        self.health_timeout = health_timeout
        self.health_interval = health_interval
        self.stop_grace = stop_grace
        self.port = 0
        self.instance_id = ""
        self.proc: asyncio.subprocess.Process | WarmProcess | None = None
        self.output = ServerOutput(run_dir, redact, echo)
        self._reader: asyncio.Task[None] | None = None
        self._exited: asyncio.Task[int] | None = None
        self._records: list[Path] = []

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def artifact_root(self) -> Path:
        return self.run_dir / "rollout_trials"

    @property
    def exited(self) -> bool:
        return self.proc is None or self.proc.returncode is not None

    @property
    def returncode(self) -> int | None:
        return None if self.proc is None else self.proc.returncode

    def last_output(self) -> list[str]:
        return list(self.output.lines)

    @property
    def log_path(self) -> Path:
        """Where all of the server's output is written (redacted)."""
        return self.output.log_path

    # ------------------------------------------------------------ start

    async def start(self, session: aiohttp.ClientSession, *, attempts: int = 3) -> Health:
        """Start and wait until healthy; a port lost to another process is retried."""
        began = time.monotonic()
        for attempt in range(attempts):
            try:
                health = await self._start_once(session)
                self.startup_seconds = time.monotonic() - began
                return health
            except _PortTaken as exc:
                await self.stop()
                if self.fixed_port:
                    raise ServerStartError(
                        f"port {self.fixed_port} (--rollout-port) is taken by another process",
                        output=self.last_output(),
                        log=self.log_path,
                    ) from exc
                if attempt == attempts - 1:
                    raise ServerStartError(
                        "another process kept taking the rollout server's port",
                        output=self.last_output(),
                        log=self.log_path,
                    ) from exc
        raise AssertionError("unreachable")

    async def _start_once(self, session: aiohttp.ClientSession) -> Health:
        self.port = self.fixed_port or free_port()
        self.instance_id = secrets.token_hex(16)
        self.artifact_root.mkdir(parents=True, exist_ok=True)
        env = dict(self.base_env)
        env.update(
            {
                PORT_VAR: str(self.port),
                ARTIFACT_VAR: str(self.artifact_root.resolve()),
                INSTANCE_VAR: self.instance_id,
                "PYTHONUNBUFFERED": "1",
                # its own code, importable as when installed (uv syncs only its deps)
                "PYTHONPATH": import_path(self.entrypoint.parent, env.get("PYTHONPATH")),
            }
        )
        self.output.open()
        self.output.write(
            f"--- {time.strftime('%Y-%m-%dT%H:%M:%S%z')} starting {self.entrypoint.name} on "
            f"port {self.port} (instance {self.instance_id[:8]}) ---"
        )
        try:
            self.proc = await self._launch(env)
        except OSError as exc:
            raise ServerStartError(
                f"cannot start the rollout server: {exc}", log=self.log_path
            ) from exc
        self._records = record_server(
            self.proc.pid,
            port=self.port,
            instance_id=self.instance_id,
            run_dir=self.run_dir,
            registry=self.registry,
        )
        assert self.proc.stdout is not None
        self._reader = asyncio.ensure_future(self.output.read(self.proc.stdout))
        self._exited = asyncio.ensure_future(self.proc.wait())
        return await self._wait_ready(session)

    async def _launch(self, env: dict[str, str]) -> asyncio.subprocess.Process | WarmProcess:
        """Forked by the warm interpreter when there is one (started now if it can be),
        else cold — recording what a warm one would pre-import."""
        exclude = self.entrypoint.parent
        if self.warm is not None and self.warm.usable and self.warm.start():
            forked = await self.warm.spawn(self.entrypoint, env, exclude)
            if forked is not None:
                self.started_warm = True
                self.output.write(f"--- forked by the warm interpreter {self.warm.key[:8]} ---")
                return forked
        self.started_warm = False
        record = [str(self.warm.modules), str(exclude.resolve())] if self.warm else []
        return await asyncio.create_subprocess_exec(
            str(self.python),
            str(ZYGOTE),
            "run",
            str(os.getpid()),
            str(self.entrypoint.resolve()),
            *record,
            cwd=str(self.entrypoint.parent),
            env=env,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            start_new_session=True,
        )

    async def _wait_ready(self, session: aiohttp.ClientSession) -> Health:
        import aiohttp

        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.health_timeout
        assert self._exited is not None
        while True:
            if self._exited.done():
                await self._drain_output()
                code = self._exited.result()
                if any("address already in use" in line.lower() for line in self.output.lines):
                    raise _PortTaken
                raise ServerStartError(
                    f"the rollout server exited with code {code} before it was ready",
                    output=self.last_output(),
                    log=self.log_path,
                )
            try:
                async with session.get(
                    f"{self.url}/health", timeout=aiohttp.ClientTimeout(total=2.0)
                ) as response:
                    if response.status < 400:
                        body = await response.json(content_type=None)
                        if isinstance(body, dict):
                            reported = response.headers.get(INSTANCE_HEADER) or body.get(
                                "instance_id"
                            )
                            if reported is not None and reported != self.instance_id:
                                raise _PortTaken
                            return Health(capacity_of(body), body)
            except (aiohttp.ClientError, asyncio.TimeoutError, ValueError):
                pass
            if loop.time() >= deadline:
                await self.stop()
                raise ServerStartError(
                    f"the rollout server was not ready after {self.health_timeout:g}s "
                    f"(GET {self.url}/health)",
                    output=self.last_output(),
                    hint=f"check that main.py serves on the port in {PORT_VAR}",
                    log=self.log_path,
                )
            await asyncio.wait({self._exited}, timeout=self.health_interval)

    # ------------------------------------------------------------ stop

    async def _drain_output(self) -> None:
        if self._reader is not None:
            with contextlib.suppress(asyncio.TimeoutError, asyncio.CancelledError):
                await asyncio.wait_for(asyncio.shield(self._reader), 1.0)

    async def stop(self) -> int | None:
        """SIGTERM to the group, SIGKILL after the grace period; the exit code."""
        proc = self.proc
        if proc is not None:
            if proc.returncode is None:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(proc.pid, signal.SIGTERM)
                assert self._exited is not None
                done, _ = await asyncio.wait({self._exited}, timeout=self.stop_grace)
                if not done:
                    self.output.write("--- not stopped after the grace period: SIGKILL ---")
                    with contextlib.suppress(ProcessLookupError, PermissionError):
                        os.killpg(proc.pid, signal.SIGKILL)
                    await asyncio.wait({self._exited}, timeout=5.0)
            else:
                # the leader is gone; its children (same group) may not be
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(proc.pid, signal.SIGKILL)
            await self._drain_output()
            self.output.write(f"--- stopped (exit {proc.returncode}) ---")
        forget(self._records)
        self.output.close()
        if self.warm is not None and self.started_warm is False:
            self.warm.start()  # warm for the next run (in the background; exits when idle)
        return None if proc is None else proc.returncode


class _PortTaken(Exception):
    """Another process answers on the port we chose (or took it first)."""
