"""Atomic file writes and safe directories: credentials, results and journals never half-written."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterable
from datetime import datetime, timezone
from pathlib import Path


def ensure_private_dir(path: Path) -> None:
    """Create ``path`` (and parents) and make it 0700."""
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    with contextlib.suppress(OSError):
        os.chmod(path, 0o700)


def atomic_write(path: Path, data: bytes, *, mode: int = 0o644) -> None:
    """Write via a temp file in the same directory + fsync + rename: all or nothing."""
    atomic_write_chunks(path, (data,), mode=mode)


def atomic_write_chunks(path: Path, chunks: Iterable[bytes], *, mode: int = 0o644) -> None:
    """:func:`atomic_write` for data produced piece by piece (never all in memory)."""
    path.parent.mkdir(parents=True, exist_ok=True)
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
    _fsync_dir(path.parent)


def _fsync_dir(path: Path) -> None:
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
