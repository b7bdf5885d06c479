"""Files from presigned storage URLs (dataset and run downloads, published-cli-0.3.8.md
§3.3 and §5.1), done the way a download should be: streamed to ``.NAME.partial`` beside
the target and renamed into place only once it is whole — its size and, wherever the
platform gives one, its SHA-256 checked — so a target is never half written.

- **Resumable.** An interrupted download leaves its ``.partial``; the next one asks for
  the rest (``Range``) and appends, or starts over when the storage sends it all.
- **Retried.** 3 tries per file on 429, 5xx, a lost connection or a cut-short body,
  waiting 0.5, 1 s; a 403 (the signed URL expired) asks ``renew`` for a fresh URL.
- **Safe.** HTTPS only (loopback exempt), redirects followed by hand (each one checked),
  never written through a symlink (one planted as the ``.partial`` is removed, the open
  refuses to follow one),
  no credentials sent; URLs never appear in errors (they carry signatures).
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urljoin

import httpx

from osmosis_client._fs import drop_unless_regular, file_sha256, fsync_dir, open_nofollow
from osmosis_client.errors import OsmosisError
from osmosis_client.platform.presigned import (
    RETRY_STATUSES,
    Progress,
    require_https,
    storage_tls_error,
)

ATTEMPTS = 3
MAX_REDIRECTS = 20
TIMEOUT = httpx.Timeout(60.0, connect=15.0)


class DownloadFailed(OsmosisError):
    """A file the storage refused, kept failing, or sent different from what was promised."""

    code = "DOWNLOAD_FAILED"


@dataclass(frozen=True)
class Fetched:
    path: Path
    size: int
    sha256: str
    received: int  # bytes that came over the wire this time (less when resumed)


def partial_path(dest: Path) -> Path:
    return dest.with_name(f".{dest.name}.partial")


def fetch_file(
    http: httpx.Client,
    url: str,
    dest: Path,
    *,
    size: int | None = None,
    sha256: str | None = None,
    sizes: tuple[int, ...] = (),
    renew: Callable[[], str] | None = None,
    on_bytes: Progress | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> Fetched:
    """Download ``url`` to ``dest``. ``size``/``sha256``: what the file must be;
    ``sizes``: sizes any of which is acceptable (when the platform is not sure which)."""
    part = partial_path(dest)
    received = 0
    problem = "no attempt made"
    for attempt in range(1, ATTEMPTS + 1):
        try:
            received += _attempt(http, url, part, size, on_bytes)
            return _settle(part, dest, size, sha256, sizes, received)
        except _Retry as exc:
            problem = exc.problem
            if exc.discard:
                _discard(part, on_bytes)
            if exc.expired and renew is not None:
                url = renew()
        except httpx.TransportError as exc:
            untrusted = storage_tls_error(url, exc)
            if untrusted is not None:
                raise untrusted from exc
            problem = f"the connection failed ({type(exc).__name__})"
        if attempt < ATTEMPTS:
            sleep(0.5 * 2 ** (attempt - 1))
    raise DownloadFailed(f"{dest.name}: {problem}", data={"path": str(dest)})


class _Retry(Exception):
    def __init__(self, problem: str, *, discard: bool = False, expired: bool = False) -> None:
        super().__init__(problem)
        self.problem, self.discard, self.expired = problem, discard, expired


def _attempt(
    http: httpx.Client, url: str, part: Path, size: int | None, on_bytes: Progress | None
) -> int:
    drop_unless_regular(part)  # a symlink planted as the partial is never appended through
    have = part.stat().st_size if part.exists() else 0
    if size is not None and have > size:
        _discard(part, on_bytes)
        have = 0
    if size is not None and have == size and have:
        return 0  # the earlier attempt got it all; only the checks were left
    headers = {"Range": f"bytes={have}-"} if have else {}
    with _open(http, url, headers) as response:
        status = response.status_code
        if status == 416 and have:
            raise _Retry("the storage refused the resume range", discard=True)
        if status == 403:
            raise _Retry("the storage refused the signed URL (HTTP 403)", expired=True)
        if status in RETRY_STATUSES:
            raise _Retry(f"the storage answered HTTP {status}")
        if not response.is_success:
            raise DownloadFailed(f"the storage refused the download (HTTP {status})")
        append = status == 206 and have > 0
        if status == 206 and not append:
            raise DownloadFailed("the storage sent part of a file that was asked for whole")
        if not append and have:
            _discard(part, on_bytes)
        expected = _expected_length(response)
        part.parent.mkdir(parents=True, exist_ok=True)
        got = 0
        flags = os.O_WRONLY | os.O_CREAT | (os.O_APPEND if append else os.O_TRUNC)
        with os.fdopen(open_nofollow(part, flags, 0o644), "ab" if append else "wb") as handle:
            # as the bytes arrive (no re-chunking): what came before a cut is kept
            for chunk in response.iter_bytes():
                handle.write(chunk)
                got += len(chunk)
                if on_bytes is not None:
                    on_bytes(len(chunk))
            handle.flush()
            os.fsync(handle.fileno())
        if expected is not None and got != expected:
            raise _Retry(f"the storage sent {got} of {expected} bytes")
        return got


@contextlib.contextmanager
def _open(http: httpx.Client, url: str, headers: dict[str, str]) -> Iterator[httpx.Response]:
    for _ in range(MAX_REDIRECTS + 1):
        require_https(url, "download")
        request = http.build_request("GET", url, headers=headers, timeout=TIMEOUT)
        response = http.send(request, stream=True, follow_redirects=False)
        if not response.is_redirect:
            try:
                yield response
            finally:
                response.close()
            return
        location = response.headers.get("location", "")
        response.close()
        if not location:
            raise DownloadFailed("the storage sent a redirect without a location")
        url = urljoin(url, location)
    raise DownloadFailed(f"more than {MAX_REDIRECTS} redirects from the storage")


def _expected_length(response: httpx.Response) -> int | None:
    """The body's length when the wire states it for the bytes we see (not gzipped)."""
    if response.headers.get("content-encoding", "identity") != "identity":
        return None
    value = response.headers.get("content-length")
    return int(value) if value and value.isdigit() else None


def _settle(
    part: Path,
    dest: Path,
    size: int | None,
    sha256: str | None,
    sizes: tuple[int, ...],
    received: int,
) -> Fetched:
    actual = part.stat().st_size
    if size is not None and actual != size:
        raise _Retry(f"size {actual} bytes, the platform said {size}", discard=actual > size)
    if sizes and actual not in sizes:
        raise _Retry(
            f"size {actual} bytes, the platform said {' or '.join(map(str, sizes))}",
            discard=True,
        )
    digest = file_sha256(part)
    if sha256 is not None and digest != sha256.lower():
        raise _Retry("its SHA-256 is not the one the platform recorded", discard=True)
    os.replace(part, dest)
    fsync_dir(dest.parent)
    return Fetched(dest, actual, digest, received)


def _discard(part: Path, on_bytes: Progress | None) -> None:
    with contextlib.suppress(OSError):
        n = part.stat().st_size
        part.unlink()
        if on_bytes is not None and n:
            on_bytes(-n)
