"""A dataset upload, whole (published-cli-0.3.8.md §3.2): register it, send the bytes to
the presigned URLs, complete it — and abort it on the platform when sending fails or is
interrupted, so nothing is left half-registered."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import httpx

from osmosis_client.errors import ConflictError, OsmosisError, ProtocolError
from osmosis_client.platform.dataset_models import Dataset
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
) -> Dataset:
    """Upload ``path`` as the dataset named by its stem; the record as registered.
    ``overwrite`` replaces a dataset of that name (else :class:`DatasetExists`)."""
    path = Path(path)
    name, extension, size = path.stem, path.suffix.lower().lstrip("."), path.stat().st_size
    try:
        record = client.datasets.create(name, size, extension)
    except ConflictError as exc:
        existing = exc.body.get("existing_dataset_id")
        if existing is None:
            raise
        if not overwrite:
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
    own = http is None
    # the platform client's trust (OSMOSIS_CA_BUNDLE, --ca-bundle) reaches the storage too
    sender = http or httpx.Client(follow_redirects=False, verify=client._verify)
    try:
        parts = put_file(sender, path, record.upload, on_bytes=on_bytes, sleep=sleep)
    except BaseException:
        _abort(client, record.id, on_warning)
        raise
    finally:
        if own:
            sender.close()
    client.datasets.complete(record.id, extension, parts)
    return record


def _abort(client: Client, dataset_id: str, on_warning: Callable[[str, str], None] | None) -> None:
    try:
        client.datasets.abort(dataset_id)
    except OsmosisError as exc:
        if on_warning is not None:
            on_warning(f"could not abort the unfinished upload: {exc.message}", "ABORT_FAILED")
