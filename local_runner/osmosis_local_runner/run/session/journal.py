"""The journal: one JSON line per finished attempt, so a killed run loses nothing finished.

``PATH.journal.jsonl`` starts with a header holding the run's fingerprint (model,
dataset, n, thresholds, timeouts, sources…); ``--resume`` refuses when it differs.
Attempts are keyed by (row index, run index); each line also carries the row's
content digest, so a changed row is noticed. A top-up (``run/session/topup.py``) appends a
line saying what changed; the header's version becomes 3 then, so an older reader refuses
the journal rather than cut it at a line it does not know. Attempts that finish in the same
event-loop turn are appended with one unbuffered ``write`` at the end of that
turn — from then on they survive SIGKILL — and fsynced in batches, at most
``FSYNC_INTERVAL`` seconds apart. The file is locked while a run appends to it,
so two runs never write one journal.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from osmosis_client._fs import keep_out_of_git, open_nofollow, open_regular
from osmosis_client.errors import InvalidInputError
from osmosis_local_runner.results.documents.records import AttemptRecord

JOURNAL_VERSION = 2
#: a journal holding top-up lines: this version and later read it, older ones refuse it
GROWN_VERSION = 3
FSYNC_INTERVAL = 0.2
MAX_PENDING = 256  # lines: written at once beyond this, whatever the loop does


def journal_path(results_path: Path) -> Path:
    return results_path.with_name(results_path.name + ".journal.jsonl")


def run_dir(results_path: Path) -> Path:
    """The run's directory beside its results (``results.json`` → ``results.run/``): a
    rollout server's log and the artifacts it writes."""
    candidate = results_path.with_suffix(".run")
    return (
        candidate if candidate != results_path else results_path.with_name(results_path.name + ".d")
    )


def fingerprint_differences(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    def shown(value: Any) -> str:
        text = repr(value)
        return text if len(text) <= 60 else text[:57] + "…"

    return [
        f"{key}: {shown(old.get(key))} → {shown(new.get(key))}"
        for key in sorted(set(old) | set(new))
        if old.get(key) != new.get(key)
    ]


@dataclass
class JournalContents:
    fingerprint: dict[str, Any]
    records: list[AttemptRecord]
    #: where the last complete line ends: a torn tail after it is cut off on resume
    valid_bytes: int
    #: the settings the run was started with, as its top-ups changed them
    settings: dict[str, Any] = field(default_factory=dict)
    #: what each top-up changed, and when (``{"changed": {key: [was, now]}, "at": …}``)
    top_ups: list[dict[str, Any]] = field(default_factory=list)
    #: what this invocation's top-up changes (set by :func:`resumable`)
    growing: dict[str, list[Any]] = field(default_factory=dict)


#: the fingerprint keys a top-up may change: which rows, and how many attempts per row
GROWABLE = frozenset({"n", "limit", "rows", "offset", "sample"})
#: what a journal line that changes the run's settings starts with (never an attempt's)
UPDATE_KEY = "journal_update"


def refused_changes(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    """The fingerprint keys that differ and that no top-up may change."""
    keys = set(old) | set(new)
    return sorted(k for k in keys if old.get(k) != new.get(k) and k not in GROWABLE)


def changed(old: Mapping[str, Any], new: Mapping[str, Any]) -> dict[str, list[Any]]:
    """What a top-up changes: ``{key: [was, now]}``."""
    return {k: [old.get(k), new.get(k)] for k in sorted(GROWABLE) if old.get(k) != new.get(k)}


def _update(raw: bytes) -> dict[str, Any] | None:
    """A top-up's line (its body), or None for an attempt's."""
    if not raw.startswith(b'{"' + UPDATE_KEY.encode() + b'"'):
        return None
    body = json.loads(raw)[UPDATE_KEY]
    if not isinstance(body.get("fingerprint"), dict) or not isinstance(body.get("settings"), dict):
        raise ValueError("a damaged top-up line")
    return dict(body)


def read_journal(path: Path) -> JournalContents:
    """The header's fingerprint and the finished attempts (a torn last line is dropped)."""
    with open_regular(path) as handle:
        first = handle.readline()
        try:
            header = json.loads(first)
            fingerprint = header["fingerprint"]
            known = header.get("journal") in (JOURNAL_VERSION, GROWN_VERSION)
            if not known or not isinstance(fingerprint, dict):
                raise ValueError
        except (ValueError, KeyError, TypeError) as exc:
            raise InvalidInputError(
                f"{path} is not a journal of this version of osmosis-client",
                hint="start a new run with another results path",
                code="BAD_JOURNAL",
            ) from exc
        settings = header.get("settings")
        contents = JournalContents(
            fingerprint,
            [],
            len(first) if first.endswith(b"\n") else 0,
            settings=dict(settings) if isinstance(settings, dict) else {},
        )
        for raw in handle:
            if not raw.endswith(b"\n"):
                break  # torn by a kill mid-write: not finished, so not kept
            try:
                update = _update(raw)
                if update is None:
                    contents.records.append(AttemptRecord.from_json(json.loads(raw)))
                else:
                    contents.fingerprint = update["fingerprint"]
                    contents.settings = update["settings"]
                    grown = {"changed": update.get("changed"), "at": update.get("at")}
                    contents.top_ups.append(grown)
            except (ValueError, TypeError, KeyError, AttributeError, RecursionError):
                break  # a damaged line: keep what came before it
            contents.valid_bytes += len(raw)
    return contents


def saved_settings(results_path: Path) -> dict[str, Any]:
    """The flags a run was started with (its journal's header, as its top-ups changed
    them), or ``{}`` when there is no journal, or it is damaged or older than the
    settings it keeps. Only top-up lines are parsed, not attempts."""
    try:
        with open_regular(journal_path(results_path)) as handle:
            header = json.loads(handle.readline(1 << 20))
            settings = header.get("settings") if isinstance(header, dict) else None
            for raw in handle:
                update = _update(raw) if raw.endswith(b"\n") else None
                if update is not None:
                    settings = update["settings"]
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return {}
    return dict(settings) if isinstance(settings, dict) else {}


def forget_finished(output: Path, resume: bool, on_note: Callable[[str], None] | None) -> None:
    """Re-running (not resuming) to the same results path replaces a *finished* run, as
    0.2 did: its journal goes (the document is replaced when the new run writes). An
    unfinished run's journal stays, for ``--resume``."""
    from osmosis_local_runner.results.documents.document import finished

    path = journal_path(output)
    if resume or not (path.exists() and finished(output)):
        return
    path.unlink()
    if on_note is not None:
        on_note(f"replacing the earlier finished run in {output}")


def resumable(path: Path, resume: bool, current: Mapping[str, Any]) -> JournalContents | None:
    """The journal a ``--resume`` continues (its fingerprint must match ``current``), or
    None for a new run — which refuses a journal left at its path."""
    if not resume:
        if path.exists():
            raise InvalidInputError(
                f"{path} exists from an earlier run",
                hint="resume it, or choose another results path",
                code="RESULTS_EXIST",
            )
        return None
    if not path.exists():
        raise InvalidInputError(
            f"nothing to resume: {path} does not exist",
            hint="resume with the results path of the run it continues",
            code="NOTHING_TO_RESUME",
        )
    contents = read_journal(path)
    refused = refused_changes(contents.fingerprint, current)
    if refused:
        diffs = fingerprint_differences(contents.fingerprint, current)
        raise InvalidInputError(
            "cannot resume: the run changed (" + "; ".join(diffs) + ")",
            hint="rerun with the original settings (a run may grow: more attempts per row, "
            "more rows — nothing else), or start a new run with another results path",
            code="RESUME_MISMATCH",
            data={"changed": refused},
        )
    contents.growing = changed(contents.fingerprint, current)
    return contents


def _mark_grown(fd: int) -> None:
    """The header's version becomes :data:`GROWN_VERSION`, in place: the two prefixes
    have the same length, so one byte changes and nothing else moves."""
    old = f'{{"journal": {JOURNAL_VERSION},'.encode()
    if os.pread(fd, len(old), 0) == old:
        os.pwrite(fd, f'{{"journal": {GROWN_VERSION},'.encode(), 0)


class JournalError(InvalidInputError):
    code = "JOURNAL_LOCKED"


class Journal:
    """Appends attempt records; ``close`` fsyncs what is left.

    A write that fails (disk full, read-only directory) is remembered in ``failure``
    and reported through ``on_failure``: the run stops, and everything written
    before it stays resumable.
    """

    def __init__(
        self,
        path: Path,
        fingerprint: Mapping[str, Any],
        settings: Mapping[str, Any] | None = None,
        *,
        resume_from: int | None = None,
        update: Mapping[str, Any] | None = None,
        on_failure: Callable[[OSError], None] | None = None,
    ) -> None:
        self.path = path
        self.failure: OSError | None = None
        self._on_failure = on_failure
        flags = os.O_RDWR | os.O_CREAT  # read too: a top-up checks the header it marks
        if resume_from is None:
            flags |= os.O_EXCL
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            keep_out_of_git(path)
            self._fd = open_nofollow(path, flags, 0o600)
        except FileExistsError as exc:
            raise InvalidInputError(
                f"{path} exists from an earlier run",
                hint="resume it, or choose another results path",
                code="RESULTS_EXIST",
            ) from exc
        except OSError as exc:
            raise InvalidInputError(
                f"cannot create the journal {path}: {exc.strerror or exc}",
                hint="choose a results path in a writable directory",
                code="RESULTS_PATH",
                data={"path": str(path)},
            ) from exc
        self._lock_or_refuse()
        if resume_from is not None:
            os.ftruncate(self._fd, resume_from)  # drop a torn tail
        os.lseek(self._fd, 0, os.SEEK_END)
        if os.fstat(self._fd).st_size == 0:
            header: dict[str, Any] = {"journal": JOURNAL_VERSION, "fingerprint": dict(fingerprint)}
            if settings:
                header["settings"] = dict(settings)
            os.write(self._fd, (json.dumps(header) + "\n").encode())
            os.fsync(self._fd)
        #: where this invocation's records start (see ``discard_this_run``)
        self.start = os.lseek(self._fd, 0, os.SEEK_END)
        if update is not None:  # a top-up: after ``start``, so a discarded run forgets it
            _mark_grown(self._fd)
            os.write(self._fd, (json.dumps(update) + "\n").encode())
        self.created = resume_from is None
        self._dirty = False
        self._pending: list[str] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._syncer = threading.Thread(target=self._sync_loop, name="journal-fsync", daemon=True)
        self._syncer.start()

    def _lock_or_refuse(self) -> None:
        try:
            import fcntl
        except ImportError:  # pragma: no cover - not POSIX
            return
        try:
            fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            os.close(self._fd)
            raise JournalError(
                f"{self.path} is in use by another run",
                hint="wait for that run to finish (or stop it) before resuming",
            ) from exc

    def append(self, record: AttemptRecord) -> None:
        """Queue a record; it is written at the end of this event-loop turn (or now,
        outside a loop)."""
        self._pending.append(record.journal_line())
        if len(self._pending) >= MAX_PENDING:
            self.flush()
        elif len(self._pending) == 1:
            try:
                asyncio.get_running_loop().call_soon(self.flush)
            except RuntimeError:
                self.flush()

    def flush(self) -> None:
        if not self._pending or self._fd < 0 or self.failure is not None:
            return
        data = ("\n".join(self._pending) + "\n").encode()
        self._pending.clear()
        try:
            while data:
                written = os.write(self._fd, data)
                data = data[written:]
        except OSError as exc:
            self._fail(exc)
            return
        self._dirty = True

    def _fail(self, exc: OSError) -> None:
        if self.failure is None:
            self.failure = exc
            if self._on_failure is not None:
                self._on_failure(exc)

    def _sync_loop(self) -> None:
        while not self._stop.wait(FSYNC_INTERVAL):
            self._sync()

    def _sync(self) -> None:
        with self._lock:
            if self._dirty and self._fd >= 0:
                self._dirty = False
                try:
                    os.fsync(self._fd)
                except OSError as exc:
                    self.failure = self.failure or exc

    def discard_this_run(self) -> None:
        """Forget what this invocation wrote (e.g. the endpoint turned out unusable):
        a fresh journal is removed, a resumed one cut back to where it was."""
        self._pending.clear()
        with self._lock:
            if self._fd >= 0:
                with contextlib.suppress(OSError):
                    os.ftruncate(self._fd, self.start)
        if self.created:
            self.close()
            with contextlib.suppress(OSError):
                self.path.unlink()

    def close(self) -> None:
        self.flush()
        self._stop.set()
        if self._syncer.is_alive():
            self._syncer.join()
        self._sync()
        with self._lock:
            if self._fd >= 0:
                os.close(self._fd)
                self._fd = -1
