"""Whether a process we noted is still the one running: its pid, and (Linux) its start
time, so a recycled pid is never mistaken for it. Used by notes that belong to a live
process until it is gone (upload journals, rollout server records, warm interpreters)."""

from __future__ import annotations

import os
from pathlib import Path


def _stat(pid: int) -> list[str] | None:
    """``/proc/<pid>/stat`` after the command name (Linux), or None."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    except OSError:
        return None


def start_time(pid: int) -> str | None:
    """The process's start time (Linux: clock ticks since boot), to tell a recycled pid."""
    fields = _stat(pid)
    return fields[19] if fields else None


def alive(pid: int, start: str | None = None) -> bool:
    """Running (not a zombie) and, when ``start`` is known, the same process."""
    if pid <= 0:
        return False
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
