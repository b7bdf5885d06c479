"""A warm interpreter for a rollout's servers: run on the rollout's own Python (the
standard library only — osmosis-client is not installed there), it imports the rollout's
third-party packages once and then forks a fresh server process per request, so a run
pays for ``import agents, litellm, fastapi`` once, not every time.

    python warm_zygote.py serve SOCKET MODULES_JSON IDLE_SECONDS
    python warm_zygote.py run CONTROLLER_PID ENTRYPOINT [RECORD_JSON EXCLUDE_DIR]

``run`` is the cold path, one server as its own process: it dies with its controller
(``PR_SET_PDEATHSIG``, else a pidfd), records which installed modules the server
imported (RECORD_JSON, for the next ``serve``), and runs the entrypoint.

Never stale: it imports only modules whose files lie inside the interpreter's own
installation (its prefix: the standard library and site-packages), never a file of the
rollout — the rollout's code is imported afresh by each forked server. Its caller keys it
by the interpreter, the environment and the installed distributions, and starts another
one when any of them changes.

Protocol (a Unix socket in a private directory; the peer must be our own uid): one JSON
line per connection, ``{"entrypoint", "cwd", "env", "controller"}`` with the server's
output pipe as an ``SCM_RIGHTS`` file descriptor; the answer is ``{"pid": N}`` (or
``{"error": "…"}``), then ``{"exit": CODE}`` when that server exits. The server leads its
own session (its pid is its group), dies when its controller does (pidfd), and runs its
entrypoint as ``__main__`` exactly as ``python main.py`` would.

Single-threaded (one selector loop; SIGCHLD through a wakeup pipe), so forking is safe;
if importing the modules started a thread, it refuses to serve (forking a threaded
process is not) and says so in ``SOCKET.refused``. It exits after IDLE_SECONDS without a
server or a request, removing its socket.
"""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import signal
import socket
import struct
import sys
import threading
import time
from typing import Any, NoReturn

try:  # run as a script on the rollout's Python: the file beside this one
    import warm_imports as imports  # type: ignore[import-not-found,unused-ignore]
except ImportError:  # imported as a module of the package (type checks)
    from osmosis_local_runner.server import warm_imports as imports


def _run_entrypoint(script: str) -> None:
    """``python SCRIPT`` from here on: its folder first on the path, run as __main__."""
    import runpy

    sys.argv = [script]
    runpy.run_path(script, run_name="__main__")


def run_cold(controller: int, script: str, record: str = "", exclude: str = "") -> None:
    """The cold path: this process becomes the server."""
    try:
        import ctypes

        if ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM, 0, 0, 0) != 0:
            raise OSError
        if os.getppid() != controller:
            os.kill(os.getpid(), signal.SIGTERM)
    except Exception:
        _watch_controller(controller)
    sys.path[0] = os.path.dirname(os.path.abspath(script))
    if record:
        imports.record_modules(record, exclude or os.path.dirname(os.path.abspath(script)))
    _run_entrypoint(script)


def _watch_controller(pid: int) -> None:
    """SIGTERM ourselves (a forked server) when the controller exits."""

    def watch() -> None:
        try:
            fd: int | None = os.pidfd_open(pid)
        except (AttributeError, OSError):
            fd = None
        if fd is not None:
            import select

            select.select([fd], [], [])
        else:
            while True:
                try:
                    os.kill(pid, 0)
                except ProcessLookupError:
                    break
                except PermissionError:
                    pass
                time.sleep(1.0)
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(20)
        os._exit(1)

    threading.Thread(target=watch, name="osmosis-client-watchdog", daemon=True).start()


def _fresh_randomness() -> None:
    """A forked server must not share its generators' state with its siblings (``random``
    reseeds itself at fork; numpy's global generator does not)."""
    numpy_random = sys.modules.get("numpy.random")
    if numpy_random is not None:
        with contextlib.suppress(Exception):
            numpy_random.seed()


def _serve_child(request: dict[str, Any], output_fd: int) -> NoReturn:
    """In the forked child: become the server process and run its entrypoint."""
    code = 1
    try:
        os.setsid()
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)
        os.dup2(output_fd, 1)
        os.dup2(output_fd, 2)
        for fd in (devnull, output_fd):
            if fd > 2:
                os.close(fd)
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGCHLD, signal.SIGHUP):
            signal.signal(sig, signal.SIG_DFL)
        signal.set_wakeup_fd(-1)
        os.chdir(request["cwd"])
        env = dict(request["env"])
        for name, value in request.get("imported_env", {}).items():
            if value is None:
                env.pop(name, None)
            else:
                env[name] = value  # as the imports set it in a cold server
        os.environ.clear()
        os.environ.update(env)
        script = request["entrypoint"]
        extra = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
        sys.path[:] = [os.path.dirname(os.path.abspath(script)), *extra] + [
            p for p in sys.path[1:] if p not in extra
        ]
        sys.stdout = os.fdopen(1, "w", buffering=1, closefd=False)
        sys.stderr = os.fdopen(2, "w", buffering=1, closefd=False)
        _watch_controller(int(request["controller"]))
        _fresh_randomness()
        if request.get("record"):
            imports.record_modules(request["record"], request.get("exclude") or request["cwd"])
        _run_entrypoint(script)
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except BaseException:
        import traceback

        traceback.print_exc()
        code = 1
    finally:
        try:
            import atexit

            atexit._run_exitfuncs()  # as `python main.py` would at its end
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


MAX_REQUEST = 64 << 20  # one request: the server's environment and paths


class Zygote:
    def __init__(self, path: str, idle: float) -> None:
        self.path = path
        self.idle = idle
        self.snapshot: dict[str, tuple[int, int]] = {}
        self.imported_env: dict[str, str | None] = {}
        self.selector = selectors.DefaultSelector()
        self.children: dict[int, socket.socket] = {}
        self.last = time.monotonic()
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(path)
        os.chmod(path, 0o600)
        self.listener.listen(64)
        self.wakeup_r, self.wakeup_w = os.pipe()
        os.set_blocking(self.wakeup_r, False)
        os.set_blocking(self.wakeup_w, False)
        signal.set_wakeup_fd(self.wakeup_w)
        signal.signal(signal.SIGCHLD, lambda *_: None)
        signal.signal(signal.SIGTERM, lambda *_: self.stop(0))

    def stop(self, code: int) -> NoReturn:
        for path in (self.path, self.path + ".ready"):
            with contextlib.suppress(OSError):
                os.unlink(path)
        os._exit(code)

    def serve(self) -> None:
        self.selector.register(self.listener, selectors.EVENT_READ, "accept")
        self.selector.register(self.wakeup_r, selectors.EVENT_READ, "signal")
        while True:
            events = self.selector.select(timeout=1.0)
            for key, _ in events:
                if key.data == "accept":
                    self.accept()
                elif key.data == "signal":
                    with contextlib.suppress(BlockingIOError):
                        os.read(self.wakeup_r, 4096)
                self.reap()
            self.reap()
            if not self.children and time.monotonic() - self.last > self.idle:
                self.stop(0)
            if not os.path.exists(self.path):
                self.stop(0)  # replaced or cleaned up: nobody can reach us any more

    def accept(self) -> None:
        conn, _ = self.listener.accept()
        self.last = time.monotonic()
        conn.settimeout(10.0)
        fds: list[int] = []
        try:
            creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
            _, uid, _ = struct.unpack("3i", creds)
            if uid != os.getuid():
                conn.close()
                return
            message, fds, _, _ = socket.recv_fds(conn, 1 << 16, 1)
            while not message.endswith(b"\n"):  # a request larger than one read
                more = conn.recv(1 << 16)
                if not more or len(message) > MAX_REQUEST:
                    raise ValueError("the request ended early")
                message += more
            request = json.loads(message.decode("utf-8"))
            if len(fds) != 1 or not isinstance(request, dict):
                raise ValueError("a malformed request")
        except (OSError, ValueError):
            for fd in fds:  # never leak the output pipe a request passed
                os.close(fd)
            conn.close()
            return
        changed = imports.changed(self.snapshot)
        if changed is not None:  # never serve stale code: the next run starts a fresh one
            os.close(fds[0])
            self._send(conn, {"error": f"stale: {changed} changed since it was imported"})
            conn.close()
            self.stop(0)
        request["imported_env"] = self.imported_env
        pid = os.fork()
        if pid == 0:
            self.listener.close()
            conn.close()
            self.selector.close()
            os.close(self.wakeup_r)
            os.close(self.wakeup_w)
            _serve_child(request, fds[0])
        os.close(fds[0])
        self.children[pid] = conn
        self._send(conn, {"pid": pid})

    def reap(self) -> None:
        while self.children:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            conn = self.children.pop(pid, None)
            if conn is not None:
                self._send(conn, {"exit": os.waitstatus_to_exitcode(status)})
                conn.close()
            self.last = time.monotonic()

    @staticmethod
    def _send(conn: socket.socket, message: dict[str, Any]) -> None:
        with contextlib.suppress(OSError):
            conn.sendall((json.dumps(message) + "\n").encode())


def main() -> None:
    if sys.argv[1] == "run":
        del sys.argv[0]  # the entrypoint sees itself as argv[0], as with `python main.py`
        controller, script, *rest = sys.argv[1:]
        run_cold(int(controller), script, *rest)
        return
    path, modules_file, idle = sys.argv[2], sys.argv[3], float(sys.argv[4])
    zygote = Zygote(path, idle)  # listening first: a run may connect while we import
    try:
        with open(modules_file, encoding="utf-8") as handle:
            names = [str(n) for n in json.load(handle)]
    except (OSError, ValueError):
        names = []
    before = dict(os.environ)
    imports.import_all(names)
    zygote.imported_env = imports.environment_changes(before)
    zygote.snapshot = imports.snapshot()
    if threading.active_count() > 1:
        others = [t.name for t in threading.enumerate() if t is not threading.main_thread()]
        started = ", ".join(others)
        with open(path + ".refused", "w", encoding="utf-8") as handle:
            handle.write(f"importing the rollout's packages started threads ({started})\n")
        zygote.stop(3)
    with open(path + ".ready", "w", encoding="utf-8") as handle:
        handle.write(f"{len(names)} modules\n")
    zygote.serve()


if __name__ == "__main__":
    main()
