"""The journal: one JSON line per finished attempt, so a killed run loses nothing finished.

``PATH.journal.jsonl`` starts with a header holding the run's fingerprint (model,
dataset, n, thresholds, timeouts…); ``--resume`` refuses when it differs.
Attempts that finish in the same event-loop turn are appended with one
unbuffered ``write`` at the end of that turn — from then on they survive
SIGKILL (an attempt counts as finished once it is written) — and fsynced in
batches, at most ``FSYNC_INTERVAL`` seconds apart.
"""

from __future__ import annotations

import asyncio
import json
import os
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from osmosis_client.errors import InvalidInputError

JOURNAL_VERSION = 1
FSYNC_INTERVAL = 0.2


@dataclass(slots=True)
class AttemptRecord:
    """The outcome of one attempt (also the journal line)."""

    row_key: str
    row_index: int
    run_index: int
    success: bool
    scores: dict[str, float]
    duration_ms: int
    tokens: int
    error: str | None

    def to_json(self) -> dict[str, Any]:
        return {
            "row_key": self.row_key,
            "row_index": self.row_index,
            "run_index": self.run_index,
            "success": self.success,
            "scores": self.scores,
            "duration_ms": self.duration_ms,
            "tokens": self.tokens,
            "error": self.error,
        }


def journal_path(results_path: Path) -> Path:
    return results_path.with_name(results_path.name + ".journal.jsonl")


def fingerprint_differences(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    return [
        f"{key}: {old.get(key)!r} → {new.get(key)!r}"
        for key in sorted(set(old) | set(new))
        if old.get(key) != new.get(key)
    ]


def read_journal(path: Path) -> tuple[dict[str, Any], Iterator[AttemptRecord]]:
    """The header's fingerprint and the finished attempts (a torn last line is skipped)."""
    handle = path.open("rb")
    first = handle.readline()
    try:
        header = json.loads(first)
        fingerprint = header["fingerprint"]
        if header.get("journal") != JOURNAL_VERSION or not isinstance(fingerprint, dict):
            raise ValueError
    except (ValueError, KeyError, TypeError):
        handle.close()
        raise InvalidInputError(
            f"{path} is not a journal of this version", hint="start a new run with another -o"
        ) from None

    def records() -> Iterator[AttemptRecord]:
        with handle:
            for raw in handle:
                try:
                    data = json.loads(raw)
                    yield AttemptRecord(**data)
                except (ValueError, TypeError):
                    continue  # a line torn by a kill mid-write

    return fingerprint, records()


class Journal:
    """Appends attempt records; ``close`` fsyncs what is left."""

    def __init__(self, path: Path, fingerprint: Mapping[str, Any], *, resume: bool) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT
        if not resume:
            flags |= os.O_EXCL
        try:
            self._fd = os.open(path, flags, 0o644)
        except FileExistsError:
            raise InvalidInputError(
                f"{path} exists from an earlier run",
                hint="pass --resume to continue it, or choose another -o",
            ) from None
        if not resume or os.fstat(self._fd).st_size == 0:
            header = {"journal": JOURNAL_VERSION, "fingerprint": dict(fingerprint)}
            os.write(self._fd, (json.dumps(header) + "\n").encode())
            os.fsync(self._fd)
        self._dirty = False
        self._pending: list[str] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._syncer = threading.Thread(target=self._sync_loop, name="journal-fsync", daemon=True)
        self._syncer.start()

    def append(self, record: AttemptRecord) -> None:
        """Queue a record; it is written at the end of this event-loop turn (or now,
        outside a loop)."""
        self._pending.append(json.dumps(record.to_json(), separators=(",", ":")))
        if len(self._pending) == 1:
            try:
                asyncio.get_running_loop().call_soon(self.flush)
            except RuntimeError:
                self.flush()

    def flush(self) -> None:
        if self._pending and self._fd >= 0:
            data = ("\n".join(self._pending) + "\n").encode()
            self._pending.clear()
            while data:
                written = os.write(self._fd, data)
                data = data[written:]
            self._dirty = True

    def _sync_loop(self) -> None:
        while not self._stop.wait(FSYNC_INTERVAL):
            self._sync()

    def _sync(self) -> None:
        with self._lock:
            if self._dirty and self._fd >= 0:
                self._dirty = False
                os.fsync(self._fd)

    def close(self) -> None:
        self.flush()
        self._stop.set()
        self._syncer.join()
        self._sync()
        with self._lock:
            if self._fd >= 0:
                os.close(self._fd)
                self._fd = -1
