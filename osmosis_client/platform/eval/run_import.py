"""A local run, imported into the platform (published-cli-0.3.8.md §5.3): declare the
run and its files (``POST /api/cli/eval-runs/imports``), send the files the platform
still lacks to presigned URLs (100 per request; single or multipart like a dataset),
complete each, then finalize. Interrupted, it resumes: the platform answers the same
session and asks only for what is missing. The platform's echo of the file set is
checked: a server that would store something else is refused before a byte is sent."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import httpx
from pydantic import Field

from osmosis_client.errors import OsmosisError, ProtocolError
from osmosis_client.platform._transport import RequestOptions, encode_segment
from osmosis_client.platform.dataset.dataset_models import UploadInstructions
from osmosis_client.platform.models import WireModel, parse
from osmosis_client.platform.presigned import Progress, put_file
from osmosis_client.platform.resources._base import Call

if TYPE_CHECKING:
    from osmosis_client.platform._client import Client

BATCH = 100
FINALIZE_TIMEOUT = 300.0
IMPORTS = "/api/cli/eval-runs/imports"


class LocalFile(Protocol):
    """A file of the run: its path in the run, where it is here, its size and hash."""

    @property
    def path(self) -> str: ...
    @property
    def local(self) -> Path: ...
    @property
    def size(self) -> int: ...
    @property
    def sha256(self) -> str: ...
    def unchanged(self) -> bool: ...


class ImportedFile(WireModel):
    path: str
    size: int
    sha256: str
    state: str | None = None


class ImportSession(WireModel):
    session_id: str
    status: str
    expected_files: int | None = None
    uploaded_files: int | None = None
    files: list[ImportedFile] = Field(default_factory=list)
    expires_at: str | None = None
    eval_run_id: str | None = None
    eval_run_name: str | None = None
    platform_url: str | None = None


class PendingUpload(WireModel):
    path: str
    size: int | None = None
    sha256: str | None = None
    upload: UploadInstructions


class PendingUploads(WireModel):
    files: list[PendingUpload] = Field(default_factory=list)


class FileChanged(OsmosisError):
    code = "FILE_CHANGED"


def _session(data: Any) -> ImportSession:
    return parse(ImportSession, data, what="eval import")


def create_call(body: Mapping[str, Any]) -> Call[ImportSession]:
    return Call(RequestOptions("POST", IMPORTS, json=dict(body), scope="required"), _session)


def uploads_call(session_id: str, paths: Sequence[str]) -> Call[PendingUploads]:
    return Call(
        RequestOptions(
            "POST",
            f"{IMPORTS}/{encode_segment(session_id)}/uploads",
            json={"paths": list(paths)},
            scope="required",
        ),
        lambda data: parse(PendingUploads, data, what="import uploads"),
    )


def complete_call(session_id: str, path: str, parts: Sequence[tuple[int, str]] | None) -> Call[Any]:
    body: dict[str, Any] = {"path": path}
    if parts is not None:
        body["parts"] = [{"part_number": n, "etag": e} for n, e in sorted(parts)]
    return Call(
        RequestOptions(
            "POST",
            f"{IMPORTS}/{encode_segment(session_id)}/uploads/complete",
            json=body,
            scope="required",
        ),
        lambda data: data,
    )


def finalize_call(session_id: str) -> Call[ImportSession]:
    return Call(
        RequestOptions(
            "POST",
            f"{IMPORTS}/{encode_segment(session_id)}/finalize",
            json={},
            scope="required",
            timeout=FINALIZE_TIMEOUT,
        ),
        _session,
    )


def import_run(
    client: Client,
    body: Mapping[str, Any],
    files: Sequence[LocalFile],
    *,
    http: httpx.Client | None = None,
    on_bytes: Progress | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> ImportSession:
    """Import a run described by ``body`` whose ``files`` are on this machine; the
    finalized session (``eval_run_name``, ``platform_url``)."""
    session = client._execute(create_call(body))
    _check_echo(session, files)
    if session.status != "finalized":
        by_path = {f.path: f for f in files}
        own = http is None
        sender = http or client.storage_http()
        try:
            for start in range(0, len(files), BATCH):
                paths = [f.path for f in files[start : start + BATCH]]
                pending = client._execute(uploads_call(session.session_id, paths))
                for item in pending.files:
                    local = by_path.get(item.path)
                    if local is None:
                        raise ProtocolError(
                            f"the platform asked for {item.path!r}, not in this run"
                        )
                    if not local.unchanged():
                        raise FileChanged(
                            f"{local.local} changed since it was checked; nothing more is sent",
                            hint="run the upload again",
                        )
                    parts = put_file(
                        sender, local.local, item.upload, on_bytes=on_bytes, sleep=sleep
                    )
                    client._execute(complete_call(session.session_id, item.path, parts))
        finally:
            if own:
                sender.close()
        session = client._execute(finalize_call(session.session_id))
    if session.status != "finalized" or not session.eval_run_name:
        raise ProtocolError(f"the platform did not finalize the import (status {session.status})")
    return session


def _check_echo(session: ImportSession, files: Sequence[LocalFile]) -> None:
    ours = {(f.path, f.size, f.sha256) for f in files}
    theirs = {(f.path, f.size, f.sha256) for f in session.files}
    counts_ok = session.expected_files in (None, len(files))
    if (session.files and theirs != ours) or not counts_ok:
        raise ProtocolError("Server returned a different eval import file set")
