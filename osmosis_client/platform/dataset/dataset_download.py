"""A dataset's file, fetched (published-cli-0.3.8.md §3.3): the record must be
``uploaded``; the file lands atomically where ``output`` says, its size checked against
the record (and its SHA-256 when the platform sends one) — the published client checks
neither."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING
from urllib.parse import unquote, urlsplit

import httpx

from osmosis_client.errors import InvalidInputError
from osmosis_client.platform.dataset.dataset_models import IN_PROGRESS, Dataset
from osmosis_client.platform.fetch import fetch_file
from osmosis_client.platform.presigned import Progress

if TYPE_CHECKING:
    from osmosis_client.platform._client import Client

FORMATS = (".jsonl", ".csv", ".parquet")


class NotReady(InvalidInputError):
    """The dataset is not (yet) in a state that can be downloaded."""

    code = "NOT_READY"


def download_dataset(
    client: Client,
    name_or_id: str,
    output: str | Path,
    *,
    overwrite: bool = False,
    http: httpx.Client | None = None,
    on_bytes: Progress | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> tuple[Dataset, Path]:
    """Fetch the dataset to ``output`` (an existing directory: the file goes inside it
    under the platform's file name). The record and the file written."""
    as_dir = isinstance(output, str) and output.endswith(("/", "\\"))
    output = Path(output).expanduser()
    if as_dir and not output.is_dir():
        raise InvalidInputError(f"Output directory not found: {output}", code="NOT_FOUND")
    record = _ready(client.datasets.get(name_or_id), name_or_id)
    link = client.datasets.download_url(name_or_id)
    target = output
    if output.is_dir():
        named = link.file_name or record.file_name or name_or_id
        target = output / file_name(named, link.presigned_url)
    _check_target(target, overwrite)
    sizes = tuple(
        {s for s in (link.file_size, record.file_size, record.original_file_size) if s is not None}
    )
    own = http is None
    getter = http or client.storage_http()
    try:
        fetch_file(
            getter,
            link.presigned_url,
            target,
            size=link.file_size,
            sha256=link.sha256,
            sizes=() if link.file_size is not None else sizes,
            renew=lambda: client.datasets.download_url(name_or_id).presigned_url,
            on_bytes=on_bytes,
            sleep=sleep,
        )
    finally:
        if own:
            getter.close()
    return record, target


def _ready(record: Dataset, name_or_id: str) -> Dataset:
    status = record.status or "unknown"
    if status in IN_PROGRESS:
        raise NotReady(
            f"Dataset is still processing (status: {status}). Try again after it finishes "
            "uploading.",
            hint="try again once its status is uploaded",
            data={"dataset": name_or_id, "status": status},
        )
    if status != "uploaded":
        raise NotReady(f"Dataset is not available for download (status: {status}).")
    return record


def _check_target(target: Path, overwrite: bool) -> None:
    if not target.parent.is_dir():
        raise InvalidInputError(
            f"Output directory not found: {target.parent}", hint="create it first", code="NOT_FOUND"
        )
    if target.exists() and not overwrite:
        raise InvalidInputError(
            f"File already exists: {target}",
            hint="replace it (overwrite), or choose another path",
            code="FILE_EXISTS",
        )


def file_name(name: str, url: str) -> str:
    """A safe local file name: the last path segment; the URL's extension appended when
    the name has none and the URL's is a dataset format."""
    base = PurePosixPath(name.replace("\\", "/")).name or "dataset"
    if base in {".", ".."}:
        base = "dataset"
    if not PurePosixPath(base).suffix:
        suffix = PurePosixPath(unquote(urlsplit(url).path)).suffix.lower()
        if suffix in FORMATS:
            base += suffix
    return base
