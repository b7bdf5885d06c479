"""The rollout server process: start, readiness, output, stop — and no orphans.

The entrypoint runs as ``__main__`` (cwd = the rollout directory) on the rollout's
interpreter, in a new session (its own process group), with the environment of
rollout-protocol.md part B. A tiny bootstrap runs first: it asks the kernel to
SIGTERM the server when osmosis-client dies (``PR_SET_PDEATHSIG``; elsewhere a
thread watching the parent pid), then runs the entrypoint with ``runpy``.

Readiness: ``GET /health`` every 0.2 s for up to 90 s, failing at once (with the
server's last output lines) if the process exits; the instance id it reports must
be the one we set, or another process owns the port. Stop: SIGTERM to the group,
SIGKILL after a grace period. The server's pid/pgid is recorded in the run
directory and in ``.osmosis/servers/`` under the project; a later run reaps the
group of a recorded server whose controller died.

All output goes to ``<run dir>/server.log`` with secrets redacted (and to a live
echo with ``-v``); the last lines are kept for error messages.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import json
import logging
import os
import re
import secrets
import signal
import socket
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from osmosis_client._redact import redact_urls_in, safe_text
from osmosis_client.errors import InvalidInputError
from osmosis_client.platform.eval_config import ROLLOUT_SERVER_VARS
from osmosis_local_runner.errors import RunAborted

if TYPE_CHECKING:
    import aiohttp

logger = logging.getLogger("osmosis_client.server")

PORT_VAR = "_OSMOSIS_ROLLOUT_PORT"
ARTIFACT_VAR = "_OSMOSIS_ROLLOUT_ARTIFACT_ROOT"
INSTANCE_VAR = "_OSMOSIS_ROLLOUT_INSTANCE_ID"
INSTANCE_HEADER = "x-osmosis-rollout-instance-id"
#: what a rollout server gets from our environment: what a process needs to run (paths,
#: locale, temporary files, certificates, proxies, caches) — as the platform passes it
#: [env] and [secrets] and nothing of the user's shell. Never the model key or tokens.
PASSED = frozenset(
    {
        "PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "TZ",
        "TMPDIR", "TMP", "TEMP", "LD_LIBRARY_PATH", "DYLD_LIBRARY_PATH", "SYSTEMROOT",
        "SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE",
        "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY",
        "http_proxy", "https_proxy", "no_proxy", "all_proxy",
        "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_RUNTIME_DIR",
        "HF_HOME", "HF_HUB_CACHE", "HF_HUB_OFFLINE", "TIKTOKEN_CACHE_DIR",
        "PYTHONIOENCODING", "PYTHONUTF8", "PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX",
        "NO_COLOR",
    }
)  # fmt: skip
PASSED_PREFIXES = ("LC_",)
#: names whose values are treated as secrets wherever they appear in the server's output
SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH|COOKIE", re.I)


def server_env(environ: Mapping[str, str]) -> dict[str, str]:
    """The part of our environment a rollout server inherits (see :data:`PASSED`)."""
    return {
        k: v for k, v in environ.items() if k in PASSED or k.startswith(PASSED_PREFIXES)
    }


def secret_values(environ: Mapping[str, str]) -> list[str]:
    """Values of variables named like secrets (``*_API_KEY``, ``*TOKEN*``…), to redact."""
    return [v for k, v in environ.items() if SECRET_NAME.search(k) and len(v) >= 8]

HEALTH_INTERVAL = 0.2
HEALTH_TIMEOUT = 90.0
STOP_GRACE = 15.0  # the server drains in-flight rollouts for up to ~10 s
LAST_LINES = 20
MAX_LINE_BYTES = 1 << 20  # of one output line kept in server.log
MAX_ECHO = 8192  # characters of a line echoed live (-v)

BOOTSTRAP = """\
import os, runpy, signal, sys, threading, time
parent, script = int(sys.argv[1]), sys.argv[2]
def _orphaned():
    os.kill(os.getpid(), signal.SIGTERM)
    time.sleep(20)
    os._exit(1)
try:
    import ctypes
    if ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM, 0, 0, 0) != 0:
        raise OSError
except Exception:
    def _watch():
        while os.getppid() == parent:
            time.sleep(1.0)
        _orphaned()
    threading.Thread(target=_watch, name="osmosis-client-watchdog", daemon=True).start()
if os.getppid() != parent:
    _orphaned()
sys.argv = [script]
sys.path[0] = os.path.dirname(os.path.abspath(script))
runpy.run_path(script, run_name="__main__")
"""


class ServerStartError(RunAborted):
    """The rollout server did not come up (exit 1); ``issues`` holds its last output."""

    code = "ROLLOUT_SERVER_FAILED"

    def __init__(self, message: str, *, output: Iterable[str] = (), hint: str | None = None):
        lines = list(output)
        super().__init__(
            message,
            hint=hint or "see the server's output above and in the run log",
            data={"output": lines},
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


class Redactor:
    """Replaces secret values (and URL credentials) in text."""

    def __init__(self, values: Iterable[str] = ()) -> None:
        self._values = sorted({v for v in values if v and len(v) >= 4}, key=len, reverse=True)

    def add(self, value: str) -> None:
        if value and len(value) >= 4 and value not in self._values:
            self._values = sorted([*self._values, value], key=len, reverse=True)

    def __call__(self, text: str) -> str:
        for value in self._values:
            if value in text:
                text = text.replace(value, "***")
        return redact_urls_in(text)

    def head(self, text: str, limit: int) -> str:
        """The first ``limit`` characters of a line whose rest is dropped: redacted over
        what is kept, then with a trailing word that may be the start of a secret (or
        of a URL's credentials) cut away."""
        kept = self(text)[:limit]
        word = max(kept.rfind(" "), kept.rfind("\t"))
        tail = kept[word + 1 :]
        if "://" in tail or any(
            value.startswith(tail[-n:]) for value in self._values for n in range(1, len(tail) + 1)
            if n <= len(value)
        ):
            kept = kept[: word + 1]
        return kept


# ------------------------------------------------------------------ records


def _stat(pid: int) -> list[str] | None:
    """``/proc/<pid>/stat`` after the command name (Linux), or None."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    except OSError:
        return None


def _start_time(pid: int) -> str | None:
    """The process's start time (Linux: clock ticks since boot), to tell a recycled pid."""
    fields = _stat(pid)
    return fields[19] if fields else None


def _alive(pid: int, start: str | None = None) -> bool:
    """Running (not a zombie) and, when ``start`` is known, the same process."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    fields = _stat(pid)
    if fields is None:
        return True  # no /proc: trust the signal check
    return fields[0] != "Z" and (start is None or fields[19] == start)


def reap_orphans(registry: Path, *, wait: float = 2.0) -> list[int]:
    """Stop the groups of recorded servers whose controller is gone; returns their pids.

    A record is only a claim (a cloned repository can carry one): a process is stopped
    only when it provably is a server this machine's runs started — it leads its own
    group, started when the record says, and carries the record's instance id in its
    environment (a random 128-bit value only we hand out). Anything else is left alone
    and its record dropped."""
    reaped = []
    for record_path in sorted(registry.glob("*.json")):
        try:
            record = json.loads(record_path.read_text())
            pid, pgid = int(record["pid"]), int(record["pgid"])
            owner, owner_start = int(record["owner_pid"]), record.get("owner_start")
        except (OSError, ValueError, KeyError, TypeError, RecursionError):
            with contextlib.suppress(OSError):
                record_path.unlink()
            continue
        if pid > 1 and _alive(owner, owner_start):
            continue  # a live run owns it
        if pid > 1 and pid == pgid and _ours(pid, record):
            logger.info("stopping an orphaned rollout server (pid %d)", pid)
            _kill_group(pgid, pid, wait=wait)
            reaped.append(pid)
        elif pid > 1 and _alive(pid):
            logger.debug("not stopping pid %d: nothing proves %s started it", pid, record_path)
        with contextlib.suppress(OSError):
            record_path.unlink()
    return reaped


def _ours(pid: int, record: Mapping[str, Any]) -> bool:
    """The recorded process is alive, is the one recorded (start time) and carries the
    recorded instance id in its environment."""
    instance, start = record.get("instance_id"), record.get("start")
    if not isinstance(instance, str) or len(instance) < 16 or not isinstance(start, str):
        return False
    if not _alive(pid, start):
        return False
    try:
        environ = Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:
        return False  # no /proc (or not ours to read): never guess
    return f"{INSTANCE_VAR}={instance}".encode() in environ.split(b"\0")


def _kill_group(pgid: int, leader: int, *, wait: float) -> None:
    """SIGTERM the group, give its leader ``wait`` seconds, then SIGKILL whatever is left."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGTERM)
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline and _alive(leader):
        time.sleep(0.05)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


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
    ) -> None:
        self.python = python
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
        self.proc: asyncio.subprocess.Process | None = None
        self.lines: collections.deque[str] = collections.deque(maxlen=LAST_LINES)
        self._reader: asyncio.Task[None] | None = None
        self._exited: asyncio.Task[int] | None = None
        self._log: Any = None
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
        return list(self.lines)

    # ------------------------------------------------------------ start

    async def start(self, session: aiohttp.ClientSession, *, attempts: int = 3) -> Health:
        """Start and wait until healthy; a port lost to another process is retried."""
        for attempt in range(attempts):
            try:
                return await self._start_once(session)
            except _PortTaken:
                await self.stop()
                if attempt == attempts - 1:
                    raise ServerStartError(
                        "another process kept taking the rollout server's port",
                        output=self.last_output(),
                    ) from None
        raise AssertionError("unreachable")

    async def _start_once(self, session: aiohttp.ClientSession) -> Health:
        self.port = free_port()
        self.instance_id = secrets.token_hex(16)
        self.artifact_root.mkdir(parents=True, exist_ok=True)
        env = dict(self.base_env)
        env.update(
            {
                PORT_VAR: str(self.port),
                ARTIFACT_VAR: str(self.artifact_root.resolve()),
                INSTANCE_VAR: self.instance_id,
                "PYTHONUNBUFFERED": "1",
            }
        )
        self._open_log()
        self._write_log(
            f"--- {time.strftime('%Y-%m-%dT%H:%M:%S%z')} starting {self.entrypoint.name} on "
            f"port {self.port} (instance {self.instance_id[:8]}) ---"
        )
        try:
            self.proc = await asyncio.create_subprocess_exec(
                str(self.python),
                "-c",
                BOOTSTRAP,
                str(os.getpid()),
                str(self.entrypoint.resolve()),
                cwd=str(self.entrypoint.parent),
                env=env,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.STDOUT,
                start_new_session=True,
            )
        except OSError as exc:
            raise ServerStartError(f"cannot start the rollout server: {exc}") from None
        self._record()
        self._reader = asyncio.ensure_future(self._read_output())
        self._exited = asyncio.ensure_future(self.proc.wait())
        return await self._wait_ready(session)

    async def _wait_ready(self, session: aiohttp.ClientSession) -> Health:
        import aiohttp

        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.health_timeout
        assert self._exited is not None
        while True:
            if self._exited.done():
                await self._drain_output()
                code = self._exited.result()
                if any("address already in use" in line.lower() for line in self.lines):
                    raise _PortTaken
                raise ServerStartError(
                    f"the rollout server exited with code {code} before it was ready",
                    output=self.last_output(),
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
                    hint=f"check that main.py serves on the port in {PORT_VAR} (see the run log)",
                )
            await asyncio.wait({self._exited}, timeout=self.health_interval)

    # ------------------------------------------------------------ output

    def _open_log(self) -> None:
        if self._log is None:
            self.run_dir.mkdir(parents=True, exist_ok=True)
            path = self.run_dir / "server.log"
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
            self._log = os.fdopen(fd, "a", encoding="utf-8", buffering=1)

    def _write_log(self, line: str) -> None:
        if self._log is not None:
            with contextlib.suppress(OSError, ValueError):
                self._log.write(line + "\n")

    def _line(self, raw: bytes, dropped: int = 0) -> None:
        text = safe_text(raw.decode("utf-8", "replace").rstrip("\r\n"))
        if dropped:
            text = self.redact.head(text, MAX_LINE_BYTES) + f" … [{dropped:,} bytes not shown]"
        else:
            text = self.redact(text)
        self.lines.append(text[:500])  # already redacted whole: any cut is safe now
        self._write_log(text)
        if self.echo is not None:
            self.echo(text if len(text) <= MAX_ECHO else text[:MAX_ECHO] + " …")

    async def _read_output(self) -> None:
        """Lines, however the pipe cuts them. A line longer than MAX_LINE_BYTES is kept
        up to that length (redacted with the whole kept part in view, a half-seen secret
        cut away) and the rest of it dropped: no piece of a line is ever written on its
        own, so a secret can never be split across two written lines."""
        assert self.proc is not None and self.proc.stdout is not None
        stream = self.proc.stdout
        pending = bytearray()
        dropping = 0  # bytes dropped of the current overlong line
        while True:
            chunk = await stream.read(65536)
            if not chunk:
                break
            start = 0
            while start < len(chunk):
                end = chunk.find(b"\n", start)
                piece = chunk[start:] if end < 0 else chunk[start:end]
                if dropping:
                    dropping += len(piece)
                else:
                    pending += piece
                    if len(pending) > MAX_LINE_BYTES:
                        dropping = len(pending) - MAX_LINE_BYTES
                        del pending[MAX_LINE_BYTES:]
                if end < 0:
                    break
                self._line(bytes(pending), dropped=dropping)
                pending.clear()
                dropping = 0
                start = end + 1
        if pending or dropping:
            self._line(bytes(pending), dropped=dropping)

    async def _drain_output(self) -> None:
        if self._reader is not None:
            with contextlib.suppress(asyncio.TimeoutError, asyncio.CancelledError):
                await asyncio.wait_for(asyncio.shield(self._reader), 1.0)

    # ------------------------------------------------------------ records

    def _record(self) -> None:
        assert self.proc is not None
        record = {
            "pid": self.proc.pid,
            "pgid": self.proc.pid,  # a new session: the server leads its group
            "start": _start_time(self.proc.pid),
            "owner_pid": os.getpid(),
            "owner_start": _start_time(os.getpid()),
            "port": self.port,
            "instance_id": self.instance_id,
            "run_dir": str(self.run_dir.resolve()),
        }
        text = json.dumps(record, indent=2) + "\n"
        paths = [self.run_dir / "server.json"]
        if self.registry is not None:
            paths.append(self.registry / f"{self.instance_id}.json")
        for path in paths:
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text)
                self._records.append(path)
            except OSError as exc:
                logger.debug("cannot record the server at %s: %s", path, exc)

    def _forget(self) -> None:
        for path in self._records:
            with contextlib.suppress(OSError):
                path.unlink()
        self._records.clear()

    # ------------------------------------------------------------ stop

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
                    self._write_log("--- not stopped after the grace period: SIGKILL ---")
                    with contextlib.suppress(ProcessLookupError, PermissionError):
                        os.killpg(proc.pid, signal.SIGKILL)
                    await asyncio.wait({self._exited}, timeout=5.0)
            else:
                # the leader is gone; its children (same group) may not be
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(proc.pid, signal.SIGKILL)
            await self._drain_output()
            self._write_log(f"--- stopped (exit {proc.returncode}) ---")
        self._forget()
        if self._log is not None:
            with contextlib.suppress(OSError):
                self._log.close()
            self._log = None
        return None if proc is None else proc.returncode


class _PortTaken(Exception):
    """Another process answers on the port we chose (or took it first)."""
