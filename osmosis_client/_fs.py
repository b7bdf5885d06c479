"""Atomic file writes and safe directories: credentials, results and journals never half-written."""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import stat
import tempfile
import time
from collections.abc import Iterable
from datetime import datetime, timezone
from pathlib import Path
from typing import BinaryIO

STALE_TMP_SECONDS = 60.0
#: every file we open to write in a user's directory refuses a symlink at its name
NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


def open_nofollow(path: Path, flags: int, mode: int = 0o600) -> int:
    """``os.open`` that never follows a symlink planted at ``path`` (whatever it points
    at): the open fails with ``ELOOP``, said in words, and nothing is written."""
    try:
        return os.open(path, flags | NOFOLLOW, mode)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise OSError(
                errno.ELOOP, "it is a symbolic link (never written through)", str(path)
            ) from exc
        raise


def first_link_below(top: Path, path: Path) -> Path | None:
    """The first symbolic link on the way from ``top`` down to ``path`` (``top`` itself
    is the user's choice and not checked): a folder of ours planted as a link — a
    committed ``.osmosis`` pointing elsewhere, say — is where nothing may be written."""
    current = top
    for part in path.relative_to(top).parts:
        current = current / part
        if current.is_symlink():
            return current
    return None


def open_regular(path: Path, *, follow: bool = False) -> BinaryIO:
    """Open a file to read only if it is a regular file — a ``/dev/zero`` would be read
    forever, a FIFO would block the open (which is why it is opened non-blocking, then
    checked) — and, unless ``follow`` (a path a user named), never through a symlink
    planted at its name (a run's own files)."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)
    fd = os.open(path, flags) if follow else open_nofollow(path, flags)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, "not a regular file", str(path))
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_capped(path: Path, limit: int) -> bytes | None:
    """A regular file's bytes when it holds at most ``limit`` (None: larger, or not a
    regular file we may read)."""
    try:
        with open_regular(path) as handle:
            data = handle.read(limit + 1)
    except OSError:
        return None
    return data if len(data) <= limit else None


def drop_unless_regular(path: Path) -> None:
    """A file of ours (a partial download, a temp file) that is now a symlink or another
    non-file was planted: remove the link itself — never what it points at."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return
    if stat.S_ISDIR(info.st_mode):
        raise IsADirectoryError(errno.EISDIR, "a directory is in the way", str(path))
    if not stat.S_ISREG(info.st_mode):
        os.unlink(path)


def ensure_private_dir(path: Path) -> None:
    """Create ``path`` (and parents) as 0700. An existing directory (or a symlink's
    target) is the user's: its mode is left alone."""
    missing = []
    current = path
    while not current.is_dir():
        missing.append(current)
        if current.parent == current:
            break
        current = current.parent
    for folder in reversed(missing):  # the ones we create, outermost first
        folder.mkdir(mode=0o700, exist_ok=True)
        with contextlib.suppress(OSError):
            os.chmod(folder, 0o700)  # mkdir's mode is masked by the umask


OURS = ".osmosis"


def keep_out_of_git(path: Path) -> None:
    """A ``.osmosis`` directory above ``path`` gets a ``.gitignore`` of ``*`` (as uv does
    for ``.venv``): runs, journals and records never show up in ``git status`` — nor
    make ``eval submit`` see a dirty tree."""
    for parent in path.parents:
        if parent.name == OURS and parent.is_dir():
            ignore = parent / ".gitignore"
            if not ignore.exists():
                with contextlib.suppress(OSError):
                    ignore.write_text("# made by osmosis-client: runs and records stay local\n*\n")
            return


def atomic_write(path: Path, data: bytes, *, mode: int = 0o644) -> None:
    """Write via a temp file in the same directory + fsync + rename: all or nothing."""
    atomic_write_chunks(path, (data,), mode=mode)


def atomic_write_chunks(path: Path, chunks: Iterable[bytes], *, mode: int = 0o644) -> None:
    """:func:`atomic_write` for data produced piece by piece (never all in memory)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    keep_out_of_git(path)
    remove_stale_temps(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, mode)
        with os.fdopen(fd, "wb", buffering=1 << 20) as handle:
            for chunk in chunks:
                handle.write(chunk)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    fsync_dir(path.parent)


def remove_stale_temps(path: Path, *, older_than: float = STALE_TMP_SECONDS) -> None:
    """Temp files an earlier write of ``path`` left behind (it was killed mid-write); a
    recent one may belong to a write in progress and is kept."""
    cutoff = time.time() - older_than
    for stale in path.parent.glob(f".{glob_escape(path.name)}.*.tmp"):
        with contextlib.suppress(OSError):
            if stale.stat().st_mtime < cutoff:
                stale.unlink()


def glob_escape(name: str) -> str:
    return "".join(f"[{c}]" if c in "*?[" else c for c in name)


def fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def move_aside(path: Path) -> Path:
    """Rename a file we cannot read to ``NAME.corrupt-<UTC stamp>`` and return the new path."""
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    target = path.with_name(f"{path.name}.corrupt-{stamp}")
    n = 1
    while target.exists():
        target = path.with_name(f"{path.name}.corrupt-{stamp}-{n}")
        n += 1
    os.replace(path, target)
    return target


def file_sha256(path: Path) -> str:
    """The SHA-256 of a file's bytes, read in 1 MiB blocks."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def relative_to(path: Path, root: Path | None = None) -> Path | None:
    """``path`` relative to ``root`` (the current directory) when it lies below it, else
    None: how a path is shown or published without the machine's own folders."""
    try:
        return path.resolve().relative_to((root or Path.cwd()).resolve())
    except (ValueError, OSError):
        return None
