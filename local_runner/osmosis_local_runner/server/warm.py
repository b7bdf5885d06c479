"""Warm starts of rollout servers: the edit–eval loop in seconds.

A published-SDK rollout server spends most of its start importing its packages
(openai-agents, LiteLLM, FastAPI: ~10 s) — every run. The first run records which
*installed* modules its server imported (never a file of the rollout); from then on a
warm interpreter (``warm_zygote.py serve``) holds them imported and forks a fresh server
per run, which imports the rollout's own code afresh and runs ``main.py`` as
``python main.py`` would. So:

- a changed file of the rollout is always picked up (its modules are never pre-imported);
- a changed dependency set starts another warm interpreter: it is keyed by the
  interpreter, the distributions installed in it (their ``*.dist-info`` names: a version
  change is a new key) and the server's environment (``[env]``, ``[secrets]``);
- nothing is kept that the run does not own: the interpreter exits after
  :data:`IDLE_SECONDS` without a request, its socket lives in a private directory (0700,
  checked), and it serves only its own user (``SO_PEERCRED``).

``OSMOSIS_WARM=0`` turns it off (every run starts its server cold, as before);
``OSMOSIS_WARM_DIR`` moves the directory. docs/server-mode.md measures both paths.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
import os
import socket
import stat
import struct
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from osmosis_client._process import alive

logger = logging.getLogger("osmosis_client.server")

ZYGOTE = Path(__file__).with_name("warm_zygote.py")
IDLE_SECONDS = 600.0
#: how long a run waits for a warm interpreter still importing (a cold start takes as long)
CONNECT_TIMEOUT = 120.0
#: per-run variables: not part of a warm interpreter's key
PER_RUN = frozenset(
    {"_OSMOSIS_ROLLOUT_PORT", "_OSMOSIS_ROLLOUT_ARTIFACT_ROOT", "_OSMOSIS_ROLLOUT_INSTANCE_ID"}
)


def idle_seconds(environ: Mapping[str, str] | None = None) -> float:
    """How long a warm interpreter waits for a run before it exits (``OSMOSIS_WARM_IDLE``)."""
    environ = os.environ if environ is None else environ
    try:
        value = float(environ.get("OSMOSIS_WARM_IDLE", IDLE_SECONDS))
    except ValueError:
        return IDLE_SECONDS
    return value if value > 0 else IDLE_SECONDS


def enabled(environ: Mapping[str, str] | None = None) -> bool:
    environ = os.environ if environ is None else environ
    return environ.get("OSMOSIS_WARM", "1").strip().lower() not in ("0", "false", "no", "off")


def warm_dir(environ: Mapping[str, str] | None = None) -> Path | None:
    """The private directory of warm interpreters (created 0700), or None when it cannot
    be trusted (another owner, open permissions) — warm starts are then skipped."""
    environ = os.environ if environ is None else environ
    given = environ.get("OSMOSIS_WARM_DIR")
    if given:
        path = Path(given).expanduser()
    elif environ.get("XDG_RUNTIME_DIR"):
        path = Path(environ["XDG_RUNTIME_DIR"]) / "osmosis-warm"
    else:
        path = Path(tempfile.gettempdir()) / f"osmosis-warm-{os.getuid()}"
    try:
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
        st = path.lstat()  # never through a symlink: another user's directory may hide there
    except OSError:
        return None
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o077:
        logger.debug("warm starts off: %s is not a private directory", path)
        return None
    return path


def distributions(site_packages: Sequence[str]) -> list[str]:
    """What is installed: each ``*.dist-info`` / ``*.egg-info`` / ``*.pth`` with when it
    was written (a version change renames it; a reinstall of the same version rewrites
    it)."""
    found: list[str] = []
    for folder in site_packages:
        with contextlib.suppress(OSError):
            found += sorted(
                f"{entry.name}@{entry.stat().st_mtime_ns}"
                for entry in os.scandir(folder)
                if entry.name.endswith((".dist-info", ".egg-info", ".pth"))
            )
    return found


def key_of(python: Path, site_packages: Sequence[str], env: Mapping[str, str]) -> str:
    """A warm interpreter's key: the interpreter, what it has installed, the environment."""
    digest = hashlib.sha256()
    digest.update(str(Path(python).resolve()).encode())
    for name in distributions(site_packages):
        digest.update(b"\0" + name.encode())
    for name in sorted(set(env) - PER_RUN):
        digest.update(b"\1" + name.encode() + b"=" + env[name].encode())
    return digest.hexdigest()[:24]


class Warm:
    """The warm interpreter of one rollout environment (by key)."""

    def __init__(
        self, python: Path, site_packages: Sequence[str], env: Mapping[str, str], directory: Path
    ) -> None:
        self.python = python
        self.env = {k: v for k, v in env.items() if k not in PER_RUN}
        self.key = key_of(python, site_packages, self.env)
        self.socket = directory / f"{self.key}.sock"
        self.modules = directory / f"{self.key}.modules.json"
        self.refused = directory / f"{self.key}.sock.refused"
        #: written once its modules are imported (it serves from then on)
        self.ready = directory / f"{self.key}.sock.ready"
        self.log = directory / f"{self.key}.log"
        self.launched = False

    @classmethod
    def of(cls, python: Path, site_packages: Sequence[str], env: Mapping[str, str]) -> Warm | None:
        """None when warm starts are off or their directory cannot be trusted."""
        if not enabled() or sys.platform == "win32":
            return None
        directory = warm_dir()
        return None if directory is None else cls(python, site_packages, env, directory)

    def kept(self, shown: str, startup: float | None = None) -> str:
        """What a run says when it leaves a warm interpreter behind for the next ones
        (or, when the interpreter already refused, why the next runs start cold). It
        imports the packages in the background — about as long as this run's server took
        to start (``startup`` seconds) — so only the runs after that start in a second."""
        refusal = self.refusal(shown)
        if refusal is not None:
            return refusal
        ready = f"in about {startup:.0f}s, " if startup and startup >= 1 else ""
        return (
            f"keeping the installed packages of {shown} imported in a warm interpreter: once "
            f"it is ready ({ready}as long as this server took to start) each next run's "
            "server starts in about a second, edits always picked up (it exits after "
            f"{idle_seconds() / 60:g} idle minutes; OSMOSIS_WARM=0 turns this off)"
        )

    def refusal(self, shown: str) -> str | None:
        """Why the runs of this environment start cold, when a warm interpreter refused it."""
        try:
            reason = self.refused.read_text(encoding="utf-8").strip()
        except OSError:
            return None
        return (
            f"warm starts are off for {shown}: {reason or 'its warm interpreter refused'} "
            "— forking a process with threads is unsafe, so every run starts its server cold"
        )

    @property
    def usable(self) -> bool:
        """Something to pre-import is known, and no interpreter refused this key."""
        return self.modules.exists() and not self.refused.exists()

    def running(self) -> bool:
        """A warm interpreter answers on the socket (or is importing, before it does)."""
        if not self.socket.exists():
            return False
        probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            probe.connect(str(self.socket))
        except OSError:
            for stale in (self.socket, self.ready):  # its interpreter is gone
                with contextlib.suppress(OSError):
                    stale.unlink()
            return False
        finally:
            probe.close()
        return True

    def start(self) -> bool:
        """Start the warm interpreter in the background (it outlives this run, until idle).
        Returns whether one is running now (``launched``: whether this call started it)."""
        self.launched = False
        if self.running():
            return True
        if not self.usable:
            return False
        with contextlib.suppress(OSError):
            with open(self.log, "ab") as log:
                subprocess.Popen(
                    [
                        str(self.python),
                        str(ZYGOTE),
                        "serve",
                        str(self.socket),
                        str(self.modules),
                        str(idle_seconds()),
                    ],
                    env=self.env,  # what its servers get (imports may read it)
                    cwd=str(self.socket.parent),
                    stdin=subprocess.DEVNULL,
                    stdout=log,
                    stderr=log,
                    start_new_session=True,
                    close_fds=True,
                )
            self.launched = True
            for _ in range(100):  # it binds its socket first thing
                if self.socket.exists():
                    return True
                time.sleep(0.02)
        return False

    async def spawn(
        self, entrypoint: Path, env: Mapping[str, str], exclude: Path
    ) -> WarmProcess | None:
        """A server forked by the warm interpreter, or None (then start it cold)."""
        if not self.socket.exists():
            return None
        read_end, write_end = os.pipe()
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.setblocking(False)
            loop = asyncio.get_running_loop()
            await asyncio.wait_for(loop.sock_connect(sock, str(self.socket)), 5.0)
            if not peer_is_us(sock):  # the request carries the server's secrets
                raise OSError("the socket is not served by this user")
            request = {
                "entrypoint": str(entrypoint.resolve()),
                "cwd": str(entrypoint.parent.resolve()),
                "env": dict(env),
                "controller": os.getpid(),
                "record": str(self.modules),
                "exclude": str(exclude.resolve()),
            }
            payload = (json.dumps(request) + "\n").encode()
            sock.setblocking(True)
            sock.settimeout(5.0)
            sent = socket.send_fds(sock, [payload], [write_end])
            if sent < len(payload):  # a large environment: the rest as a plain stream
                sock.sendall(payload[sent:])
            sock.setblocking(False)
            os.close(write_end)
            write_end = -1
            reader, writer = await asyncio.open_unix_connection(sock=sock)
            line = await asyncio.wait_for(reader.readline(), CONNECT_TIMEOUT)
            answer = json.loads(line) if line else {}
            pid = answer.get("pid")
            if not isinstance(pid, int):
                raise OSError(answer.get("error") or "the warm interpreter did not start it")
        except (OSError, ValueError, asyncio.TimeoutError) as exc:
            logger.debug("warm start of %s failed (%s): starting it cold", entrypoint, exc)
            sock.close()
            os.close(read_end)
            if write_end >= 0:
                os.close(write_end)
            return None
        return await WarmProcess.attach(pid, read_end, reader, writer)


def peer_is_us(sock: socket.socket) -> bool:
    """The process at the other end of a connected Unix socket runs as this user (the
    kernel's word, ``SO_PEERCRED``; where that is missing, the socket file's owner)."""
    uid = os.getuid()
    option = getattr(socket, "SO_PEERCRED", None)
    if option is not None:
        try:
            raw = sock.getsockopt(socket.SOL_SOCKET, option, struct.calcsize("3i"))
        except OSError:
            return False
        return bool(struct.unpack("3i", raw)[1] == uid)
    try:
        info = os.lstat(sock.getpeername())
    except (OSError, TypeError):
        return False
    return stat.S_ISSOCK(info.st_mode) and info.st_uid == uid


class WarmProcess:
    """A server forked by a warm interpreter, with the surface ServerProcess uses of an
    ``asyncio.subprocess.Process``: ``pid``, ``returncode``, ``stdout``, ``wait()``."""

    def __init__(self, pid: int, stdout: asyncio.StreamReader) -> None:
        self.pid = pid
        self.stdout = stdout
        self.returncode: int | None = None
        self._done: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        self._watcher: asyncio.Future[None] | None = None

    @classmethod
    async def attach(
        cls,
        pid: int,
        read_end: int,
        control: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
    ) -> WarmProcess:
        loop = asyncio.get_running_loop()
        stdout = asyncio.StreamReader(limit=1 << 22)
        pipe = os.fdopen(read_end, "rb", buffering=0)
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(stdout), pipe)
        process = cls(pid, stdout)
        process._watcher = asyncio.ensure_future(process._watch(control, writer))
        return process

    async def _watch(self, control: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        code: int | None = None
        try:
            line = await control.readline()
            if line:
                value = json.loads(line).get("exit")
                code = value if isinstance(value, int) else None
        except (OSError, ValueError):
            pass
        finally:
            writer.close()
        while code is None and alive(self.pid):  # the warm interpreter went away first
            await asyncio.sleep(0.2)
        self.returncode = -1 if code is None else code
        if not self._done.done():
            self._done.set_result(self.returncode)

    async def wait(self) -> int:
        return int(await asyncio.shield(self._done))
