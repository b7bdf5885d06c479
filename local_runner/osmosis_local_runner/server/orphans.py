"""Records of running rollout servers, and stopping the ones a killed run left behind.

A server's pid/pgid, start time and instance id are recorded in its run directory and in
``.osmosis/servers/`` under the project. A later run stops a recorded server whose
controller is gone — but a record is only a claim (a cloned repository can carry one):
a process is signalled only when it leads its own group, started when the record says,
and carries the record's random instance id in its environment.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import signal
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from osmosis_client._fs import keep_out_of_git
from osmosis_client._process import alive, start_time

logger = logging.getLogger("osmosis_client.server")

INSTANCE_VAR = "_OSMOSIS_ROLLOUT_INSTANCE_ID"


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
        if pid > 1 and alive(owner, owner_start):
            continue  # a live run owns it
        if pid > 1 and pid == pgid and _ours(pid, record):
            logger.info("stopping an orphaned rollout server (pid %d)", pid)
            _kill_group(pgid, pid, wait=wait)
            reaped.append(pid)
        elif pid > 1 and alive(pid):
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
    if not alive(pid, start):
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
    while time.monotonic() < deadline and alive(leader):
        time.sleep(0.05)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


def record_server(
    pid: int, *, port: int, instance_id: str, run_dir: Path, registry: Path | None
) -> list[Path]:
    """Write the server's record (run dir, and the project's registry); the paths written."""
    record = {
        "pid": pid,
        "pgid": pid,  # a new session: the server leads its group
        "start": start_time(pid),
        "owner_pid": os.getpid(),
        "owner_start": start_time(os.getpid()),
        "port": port,
        "instance_id": instance_id,
        "run_dir": str(run_dir.resolve()),
    }
    text = json.dumps(record, indent=2) + "\n"
    paths = [run_dir / "server.json"]
    if registry is not None:
        paths.append(registry / f"{instance_id}.json")
    written = []
    for path in paths:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            keep_out_of_git(path)
            path.write_text(text)
            written.append(path)
        except OSError as exc:
            logger.debug("cannot record the server at %s: %s", path, exc)
    return written


def forget(paths: list[Path]) -> None:
    for path in paths:
        with contextlib.suppress(OSError):
            path.unlink()
    paths.clear()
