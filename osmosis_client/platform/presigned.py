"""Bytes to presigned URLs (published-cli-0.3.8.md §3.2, step 4): one PUT, or one PUT per
part in order, each streamed from the file (never held whole), with ``Content-Length``
and no credentials; HTTPS only (loopback exempt); up to 5 tries per PUT on 429, 5xx or
a lost connection, waiting 1, 2, 4, 8 s. A multipart plan is checked against the file
before the first byte: part sizes, one URL per part, any signed size."""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from urllib.parse import urlsplit

import httpx

from osmosis_client._tls import certificate_problem
from osmosis_client.errors import (
    APIConnectionError,
    InvalidInputError,
    OsmosisError,
    ProtocolError,
)
from osmosis_client.platform.dataset.dataset_models import UploadInstructions
from osmosis_client.platform.settings import is_loopback_host

ATTEMPTS = 5
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
SIMPLE_TIMEOUT = 600.0
PART_TIMEOUT = 300.0
CHUNK = 1 << 20

Progress = Callable[[int], None]  # bytes just sent


class UploadFailed(OsmosisError):
    """A PUT the storage refused, or kept failing."""

    code = "UPLOAD_FAILED"


def put_file(
    http: httpx.Client,
    path: Path,
    upload: UploadInstructions,
    *,
    on_bytes: Progress | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> list[tuple[int, str]] | None:
    """Send ``path`` as ``upload`` says; the (part number, ETag) pairs of a multipart
    upload, None for a simple one."""
    size = path.stat().st_size
    if upload.method == "simple":
        if not upload.presigned_url:
            raise ProtocolError("the platform sent no upload URL")
        headers = dict(upload.upload_headers or {})
        _put(http, upload.presigned_url, path, 0, size, headers, SIMPLE_TIMEOUT, on_bytes, sleep)
        return None
    if upload.method == "multipart":
        parts = []
        for number, url, start, length in plan_parts(upload, size):
            etag = _put(http, url, path, start, length, {}, PART_TIMEOUT, on_bytes, sleep)
            if not etag:
                raise ProtocolError(f"part {number}: the storage sent no ETag")
            parts.append((number, etag))
        return parts
    raise ProtocolError(f"unknown upload method {upload.method!r} from the platform")


def plan_parts(upload: UploadInstructions, size: int) -> list[tuple[int, str, int, int]]:
    """(number, URL, offset, length) per part, checked against the file's size."""
    part_size, total = upload.part_size or 0, upload.total_parts or 0
    if part_size <= 0 or total <= 0 or total != max(1, math.ceil(size / part_size)):
        raise ProtocolError(
            f"the platform's multipart plan ({total} parts of {part_size} bytes) does not fit "
            f"a {size}-byte file"
        )
    urls = {p.part_number: p for p in upload.presigned_urls or []}
    if sorted(urls) != list(range(1, total + 1)) or len(upload.presigned_urls or []) != total:
        raise ProtocolError("the platform's multipart plan does not have one URL per part")
    planned = []
    for number in range(1, total + 1):
        start = (number - 1) * part_size
        length = min(part_size, size - start)
        signed = urls[number].size
        if signed is not None and signed != length:
            raise ProtocolError(f"part {number} is signed for {signed} bytes, not {length}")
        planned.append((number, urls[number].presigned_url, start, length))
    return planned


def _put(
    http: httpx.Client,
    url: str,
    path: Path,
    start: int,
    length: int,
    headers: dict[str, str],
    timeout: float,
    on_bytes: Progress | None,
    sleep: Callable[[float], None],
) -> str | None:
    require_https(url, "upload")
    headers = {**headers, "Content-Length": str(length)}
    for attempt in range(1, ATTEMPTS + 1):
        sent = _Sent(on_bytes)
        try:
            response = http.put(
                url, content=_read(path, start, length, sent), headers=headers, timeout=timeout
            )
        except httpx.TransportError as exc:
            sent.undo()
            untrusted = storage_tls_error(url, exc)
            if untrusted is not None:  # never retried: it will not change
                raise untrusted from exc
            if attempt == ATTEMPTS:
                raise UploadFailed(f"the upload kept failing: {type(exc).__name__}") from exc
        else:
            if response.is_success:
                return (response.headers.get("ETag") or "").strip('"') or None
            sent.undo()
            status = response.status_code
            if status not in RETRY_STATUSES or attempt == ATTEMPTS:
                raise UploadFailed(f"the storage refused the upload (HTTP {status})")
        sleep(min(2.0 ** (attempt - 1), 8.0))
    raise AssertionError("unreachable")


class _Sent:
    """Bytes of one try, reported as they go and taken back when the try fails."""

    def __init__(self, on_bytes: Progress | None) -> None:
        self.on_bytes = on_bytes
        self.count = 0

    def add(self, n: int) -> None:
        self.count += n
        if self.on_bytes is not None:
            self.on_bytes(n)

    def undo(self) -> None:
        if self.on_bytes is not None and self.count:
            self.on_bytes(-self.count)
        self.count = 0


def _read(path: Path, start: int, length: int, sent: _Sent) -> Iterator[bytes]:
    with path.open("rb") as handle:
        handle.seek(start)
        left = length
        while left > 0:
            chunk = handle.read(min(CHUNK, left))
            if not chunk:
                raise OsmosisError(f"{path} changed while it was being uploaded", code="CHANGED")
            left -= len(chunk)
            sent.add(len(chunk))
            yield chunk


def require_https(url: str, what: str) -> None:
    """Storage URLs carry signed credentials: HTTPS only (loopback exempt)."""
    parts = urlsplit(url)
    if parts.scheme == "https" or (
        parts.scheme == "http" and is_loopback_host(parts.hostname or "")
    ):
        return
    verb = "send the file" if what == "upload" else "fetch it"
    raise InvalidInputError(
        f"the platform sent a{'n' if what[0] in 'aeiou' else ''} {what} URL that is not HTTPS; "
        f"refusing to {verb}",
        code="INSECURE_URL",
    )


def storage_tls_error(url: str, exc: BaseException) -> APIConnectionError | None:
    """The error for a storage certificate we do not trust (None: another failure)."""
    problem = certificate_problem(exc)
    if problem is None:
        return None
    return APIConnectionError(
        f"the storage at {urlsplit(url).hostname} presented a certificate that is "
        f"not trusted ({problem})",
        hint="trust its CA: set OSMOSIS_CA_BUNDLE or SSL_CERT_FILE to a PEM bundle holding it",
        code="TLS_CERTIFICATE",
        data={"problem": problem},
    )
