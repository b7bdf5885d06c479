"""What the warm interpreter (``warm_zygote.py``) knows of imports, on the rollout's own
Python (the standard library only): which installed modules a server imported (recorded
for the next warm interpreter), importing them, what importing changed in the
environment, and whether an imported file changed since (never serve stale code)."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
import threading
import time
from typing import Any


def snapshot() -> dict[str, tuple[int, int]]:
    """(mtime, size) of every imported module's file: an edit in place (a package under
    development, a patch in site-packages) shows as a change."""
    found: dict[str, tuple[int, int]] = {}
    for module in list(sys.modules.values()):
        file = getattr(module, "__file__", None)
        if isinstance(file, str) and file not in found:
            with contextlib.suppress(OSError):
                info = os.stat(file)
                found[file] = (info.st_mtime_ns, info.st_size)
    return found


def changed(snapshot: dict[str, tuple[int, int]]) -> str | None:
    """The first pre-imported file that changed since it was imported, or None."""
    for file, (mtime, size) in snapshot.items():
        try:
            info = os.stat(file)
        except OSError:
            return file
        if (info.st_mtime_ns, info.st_size) != (mtime, size):
            return file
    return None


def environment_changes(before: dict[str, str]) -> dict[str, str | None]:
    """What importing did to ``os.environ`` (None: a variable it removed) — a cold server
    would have it too (litellm sets TIKTOKEN_CACHE_DIR as it is imported)."""
    after = dict(os.environ)
    changes: dict[str, str | None] = {k: v for k, v in after.items() if before.get(k) != v}
    changes.update({k: None for k in before if k not in after})
    return changes


def import_all(names: list[str]) -> int:
    """Each module, parents first; one that fails to import is skipped (its server will
    import it, or fail, on its own)."""
    imported = 0
    for name in names:
        if name in sys.modules:
            continue
        try:
            __import__(name)
            imported += 1
        except BaseException:
            sys.modules.pop(name, None)
    return imported


def record_modules(record: str, exclude: str) -> None:
    """Whenever the server's imports settle (at start, and after lazy imports at its first
    requests), and as it exits: the modules it imported from the interpreter's own
    installation — never a file under ``exclude`` (the rollout) — written to ``record``
    (a superset of what was there before)."""

    def dump() -> None:
        dump_modules(record, exclude)

    def watch() -> None:
        """Whenever the imports settle (no new module for half a second), record them."""
        seen, steady = len(sys.modules), 0
        recorded = -1
        while True:
            time.sleep(0.25)
            count = len(sys.modules)
            steady = steady + 1 if count == seen else 0
            seen = count
            if steady >= 2 and count != recorded:
                try:
                    dump()
                except Exception:
                    return
                recorded = count

    threading.Thread(target=watch, name="osmosis-client-record", daemon=True).start()
    import atexit

    atexit.register(safely, dump)  # and once more as the server exits

    def on_term(signum: int, frame: Any) -> None:
        """Stopped before its imports settled (a short run): record, then stop as the
        default SIGTERM would (a server installing its own handler replaces this one,
        and its orderly exit runs the atexit record)."""
        safely(dump)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGTERM)

    if signal.getsignal(signal.SIGTERM) in (signal.SIG_DFL, None):
        signal.signal(signal.SIGTERM, on_term)


def library_roots() -> list[str]:
    """Where the interpreter's installed code lives: the standard library and every
    site-packages of it (a venv's — even one inside the rollout's folder — included)."""
    import site
    import sysconfig

    paths = [sysconfig.get_paths().get(k) for k in ("stdlib", "platstdlib", "purelib", "platlib")]
    with contextlib.suppress(Exception):
        paths += list(site.getsitepackages())
    return sorted({os.path.realpath(p) + os.sep for p in paths if p})


def dump_modules(record: str, exclude: str) -> None:
    roots = library_roots()
    excluded = os.path.realpath(exclude) + os.sep

    def installed(file: str) -> bool:
        """Installed code — never a file of the rollout (``exclude``) unless it lies in a
        site-packages of the interpreter (a ``.venv`` the rollout keeps in its folder)."""
        real = os.path.realpath(file)
        library = [r for r in roots if real.startswith(r)]
        if not library:
            return False
        return not real.startswith(excluded) or any(r.startswith(excluded) for r in library)

    try:
        with open(record, encoding="utf-8") as handle:
            known = [str(n) for n in json.load(handle)]
    except (OSError, ValueError):
        known = []
    found = [
        name
        for name, module in list(sys.modules.items())
        if name != "__main__"
        and isinstance(file := getattr(module, "__file__", None), str)
        and installed(file)
    ]
    seen = set(known)
    names = known + [n for n in found if n not in seen]
    if names == known:
        return
    temporary = f"{record}.{os.getpid()}.tmp"
    with open(temporary, "w", encoding="utf-8") as handle:
        json.dump(names, handle)
    os.replace(temporary, record)


def safely(action: Any) -> None:
    with contextlib.suppress(Exception):
        action()
