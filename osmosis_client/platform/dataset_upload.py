"""A dataset upload, whole (published-cli-0.3.8.md §3.2): register it, send the bytes to
the presigned URLs, complete it — and abort it on the platform when sending fails or is
interrupted, so nothing is left half-registered.

A process killed mid-upload cannot abort. So each registered, unfinished upload is noted
in a journal (``<config dir>/uploads/<dataset id>.json``) until it completes or is
aborted; the next upload aborts what a killed one left behind — and when it meets its
own leftover under the same name (409), it replaces it instead of refusing."""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import httpx

from osmosis_client.errors import ConflictError, OsmosisError, ProtocolError
from osmosis_client.platform.dataset_models import IN_PROGRESS, Dataset
from osmosis_client.platform.presigned import Progress, put_file

if TYPE_CHECKING:
    from osmosis_client.platform._client import Client


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
    try:
        record = client.datasets.create(name, size, extension)
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
            ) from None
        record = client.datasets.create(name, size, extension, overwrite_dataset_id=str(existing))
    if record.upload is None:
        raise ProtocolError("the platform sent no upload instructions")
    _note(journal, record.id, name)
    own = http is None
    # the platform client's trust (OSMOSIS_CA_BUNDLE, --ca-bundle) reaches the storage too
    sender = http or client.storage_http()
    try:
        parts = put_file(sender, path, record.upload, on_bytes=on_bytes, sleep=sleep)
    except BaseException:
        if _abort(client, record.id, on_warning):
            _forget(journal, record.id)
        raise
    finally:
        if own:
            sender.close()
    client.datasets.complete(record.id, extension, parts)
    _forget(journal, record.id)
    return record


def _note(journal: Path | None, dataset_id: str, name: str) -> None:
    if journal is None:
        return
    from osmosis_client._fs import atomic_write, ensure_private_dir

    try:
        ensure_private_dir(journal)
        entry = json.dumps({"dataset_id": dataset_id, "name": name, "started": time.time()})
        atomic_write(journal / f"{_safe(dataset_id)}.json", entry.encode(), mode=0o600)
    except OSError:
        pass  # the journal helps after a crash; an upload never fails for it


def _forget(journal: Path | None, dataset_id: str) -> None:
    if journal is not None:
        with contextlib.suppress(OSError):
            (journal / f"{_safe(dataset_id)}.json").unlink()


def _safe(dataset_id: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in dataset_id)


def _clean_leftovers(
    client: Client, journal: Path | None, on_warning: Callable[[str, str], None] | None
) -> set[str]:
    """Abort the uploads a killed process left registered; their ids."""
    found: set[str] = set()
    if journal is None or not journal.is_dir():
        return found
    for entry in sorted(journal.glob("*.json")):
        try:
            dataset_id = str(json.loads(entry.read_text())["dataset_id"])
        except (OSError, ValueError, KeyError, TypeError):
            with contextlib.suppress(OSError):
                entry.unlink()
            continue
        found.add(dataset_id)
        try:
            state = client.datasets.get(dataset_id).status
        except OsmosisError:
            continue  # keep the note: try again next time
        if state in IN_PROGRESS and not _abort(client, dataset_id, on_warning):
            continue
        with contextlib.suppress(OSError):
            entry.unlink()
    return found


def _abort(client: Client, dataset_id: str, on_warning: Callable[[str, str], None] | None) -> bool:
    try:
        client.datasets.abort(dataset_id)
    except OsmosisError as exc:
        if on_warning is not None:
            on_warning(f"could not abort the unfinished upload: {exc.message}", "ABORT_FAILED")
        return False
    return True
