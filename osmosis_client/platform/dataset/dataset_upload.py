"""A dataset upload, whole (published-cli-0.3.8.md §3.2): register it, send the bytes to
the presigned URLs, complete it — and abort it on the platform when registering or
sending fails or is interrupted, so nothing is left half-registered.

A process killed mid-upload cannot abort. So each upload is noted in a journal
(``<config dir>/uploads/``) from *before* it registers the dataset until it completes
or is aborted: the note names the dataset (its id once the platform gave one) and the
process that owns it (pid and start time, and the host). A note belongs to its process
while that process lives — a second upload running at the same time never touches it.
Once its process is gone, the next upload aborts what it left: by id, or — when it died
while registering (Ctrl-C, SIGKILL, a lost answer to the create) — the dataset of that
name still being uploaded and registered after the note was written. When an upload
meets its own leftover under the same name (409), it replaces it instead of refusing."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import time
import uuid
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx

from osmosis_client._process import alive, start_time
from osmosis_client.errors import (
    APIStatusError,
    ConflictError,
    NotFoundError,
    OsmosisError,
    ProtocolError,
)
from osmosis_client.platform.dataset.dataset_models import IN_PROGRESS, Dataset
from osmosis_client.platform.presigned import Progress, put_file

if TYPE_CHECKING:
    from osmosis_client.platform._client import Client

Warn = Callable[[str, str], None]


class DatasetExists(ConflictError):
    code = "DATASET_EXISTS"


def upload_dataset(
    client: Client,
    path: Path,
    *,
    overwrite: bool = False,
    http: httpx.Client | None = None,
    on_bytes: Progress | None = None,
    on_warning: Callable[[str, str], None] | None = None,
    sleep: Callable[[float], None] = time.sleep,
    journal: Path | None = None,
) -> Dataset:
    """Upload ``path`` as the dataset named by its stem; the record as registered.
    ``overwrite`` replaces a dataset of that name (else :class:`DatasetExists`).
    ``journal``: the directory noting unfinished uploads (None: none kept)."""
    path = Path(path)
    name, extension, size = path.stem, path.suffix.lower().lstrip("."), path.stat().st_size
    leftovers = _clean_leftovers(client, journal, on_warning)
    note = _Note(journal, name)
    try:
        record = _register(client, name, size, extension, overwrite, leftovers)
    except BaseException as exc:
        if isinstance(exc, APIStatusError) and exc.status_code < 500:
            note.forget()  # the platform said no: nothing was registered
        elif _abort_named(client, note.entry, on_warning):
            note.forget()  # interrupted or lost: found and aborted; else the next upload
        raise
    note.update(dataset_id=record.id)
    if record.upload is None:
        raise ProtocolError("the platform sent no upload instructions")
    own = http is None
    # the platform client's trust (OSMOSIS_CA_BUNDLE, --ca-bundle) reaches the storage too
    sender = http or client.storage_http()
    try:
        parts = put_file(sender, path, record.upload, on_bytes=on_bytes, sleep=sleep)
    except BaseException as exc:
        aborted = _abort(client, record.id, on_warning)
        if aborted:
            note.forget()
        if isinstance(exc, OsmosisError):
            exc.data["aborted"] = aborted  # what a hint may promise
        raise
    finally:
        if own:
            sender.close()
    client.datasets.complete(record.id, extension, parts)
    note.forget()
    return record


def _register(
    client: Client, name: str, size: int, extension: str, overwrite: bool, leftovers: set[str]
) -> Dataset:
    try:
        return client.datasets.create(name, size, extension)
    except ConflictError as exc:
        existing = exc.body.get("existing_dataset_id")
        if existing is None:
            raise
        if not overwrite and str(existing) not in leftovers:
            raise DatasetExists(
                f"a dataset named {name!r} already exists",
                status_code=409,
                hint="overwrite it, or rename the file",
                body=exc.body,
                data={"name": name, "existing_dataset_id": str(existing)},
            ) from exc
        return client.datasets.create(name, size, extension, overwrite_dataset_id=str(existing))


class _Note:
    """This upload's note in the journal (module docstring); never fails the upload."""

    def __init__(self, journal: Path | None, name: str) -> None:
        self.journal = journal
        self.path = None if journal is None else journal / f"upload-{uuid.uuid4().hex}.json"
        pid = os.getpid()
        self.entry: dict[str, Any] = {
            "name": name,
            "dataset_id": None,
            "pid": pid,
            "pid_start": start_time(pid),
            "host": socket.gethostname(),
            "started": time.time(),
        }
        self._write()

    def update(self, **changes: Any) -> None:
        self.entry.update(changes)
        self._write()

    def _write(self) -> None:
        if self.journal is None or self.path is None:
            return
        from osmosis_client._fs import atomic_write, ensure_private_dir

        try:
            ensure_private_dir(self.journal)
            atomic_write(self.path, json.dumps(self.entry).encode(), mode=0o600)
        except OSError:
            pass  # the journal helps after a crash; an upload never fails for it

    def forget(self) -> None:
        if self.path is not None:
            with contextlib.suppress(OSError):
                self.path.unlink()


def _clean_leftovers(client: Client, journal: Path | None, on_warning: Warn | None) -> set[str]:
    """Abort the uploads that processes now gone left registered; their ids. A note whose
    process still runs (another upload at this moment) is left alone."""
    found: set[str] = set()
    if journal is None or not journal.is_dir():
        return found
    for path in sorted(journal.glob("*.json")):
        try:
            entry = json.loads(path.read_text())
            dataset_id = entry.get("dataset_id")
        except (OSError, ValueError, AttributeError):
            with contextlib.suppress(OSError):
                path.unlink()
            continue
        if _owner_lives(entry):
            continue
        if dataset_id is None:  # its process died while registering the dataset
            try:
                named = _named(client, entry)
            except OsmosisError:
                continue  # keep the note: try again next time
            if named is None:
                with contextlib.suppress(OSError):
                    path.unlink()
                continue
            dataset_id = named.id
        found.add(str(dataset_id))
        try:
            state = client.datasets.get(str(dataset_id)).status
        except OsmosisError:
            continue  # keep the note: try again next time
        if state in IN_PROGRESS and not _abort(client, str(dataset_id), on_warning):
            continue
        with contextlib.suppress(OSError):
            path.unlink()
    return found


def _owner_lives(entry: dict[str, Any]) -> bool:
    """The note's process still runs (or runs on another host: it cannot be told)."""
    pid = entry.get("pid")
    if not isinstance(pid, int):
        return False  # a note of an older version: its process is long gone
    if entry.get("host") not in (None, socket.gethostname()):
        return True
    start = entry.get("pid_start")
    return alive(pid, start if isinstance(start, str) else None)


def _named(client: Client, entry: dict[str, Any]) -> Dataset | None:
    """After a create whose outcome is unknown: the dataset of the note's name when it is
    still being uploaded and was registered after the note (else None). Raises
    :class:`OsmosisError` when the platform cannot say."""
    name = entry.get("name")
    if not isinstance(name, str):
        return None
    try:
        dataset = client.datasets.get(name)
    except NotFoundError:
        return None
    if dataset.status not in IN_PROGRESS or not _registered_after(dataset, entry):
        return None
    return dataset


def _abort_named(client: Client, entry: dict[str, Any], on_warning: Warn | None) -> bool:
    """Abort what a create whose outcome is unknown registered; True when nothing of it
    is left (none found, or aborted)."""
    try:
        dataset = _named(client, entry)
    except OsmosisError:
        return False  # the note stays: the next upload tries again
    return dataset is None or _abort(client, dataset.id, on_warning)


def _registered_after(dataset: Dataset, entry: dict[str, Any]) -> bool:
    started = entry.get("started")
    if not dataset.created_at or not isinstance(started, int | float):
        return True  # nothing to tell by: a dataset of this name, still uploading
    try:
        created = datetime.fromisoformat(dataset.created_at.replace("Z", "+00:00"))
    except ValueError:
        return True
    return created.timestamp() >= started - 60  # clocks of two machines: a minute's slack


def _abort(client: Client, dataset_id: str, on_warning: Warn | None) -> bool:
    try:
        client.datasets.abort(dataset_id)
    except OsmosisError as exc:
        if on_warning is not None:
            on_warning(f"could not abort the unfinished upload: {exc.message}", "ABORT_FAILED")
        return False
    return True
