"""fetch_file: presigned downloads are resumable, retried, verified and atomic."""

from __future__ import annotations

import hashlib
import random
import ssl
import threading
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import ClassVar

import httpx
import pytest
import respx

from osmosis_client.errors import InvalidInputError
from osmosis_client.platform.fetch import DownloadFailed, fetch_file, partial_path
from tests.loopback_http import LoopbackHTTPServer
from tests.realwire import Proxy, Wire, private_ca

URL = "https://storage.example/bucket/file.json"
BODY = bytes(range(256)) * 40
SHA = hashlib.sha256(BODY).hexdigest()


@pytest.fixture
def storage():  # type: ignore[no-untyped-def]
    with respx.mock(assert_all_called=False) as router:
        yield router


def get(dest: Path, **kwargs: object):  # type: ignore[no-untyped-def]
    waits: list[float] = []
    with httpx.Client() as http:
        result = fetch_file(http, URL, dest, sleep=waits.append, **kwargs)  # type: ignore[arg-type]
    return result, waits


def test_a_whole_file_lands_atomically_with_its_hash(storage, tmp_path: Path) -> None:
    storage.get(URL).respond(200, content=BODY)
    seen: list[int] = []
    result, _ = get(tmp_path / "f.json", size=len(BODY), sha256=SHA, on_bytes=seen.append)
    assert (tmp_path / "f.json").read_bytes() == BODY and result.sha256 == SHA
    assert sum(seen) == len(BODY) and not partial_path(tmp_path / "f.json").exists()


def test_an_interrupted_download_resumes_with_a_range(storage, tmp_path: Path) -> None:
    dest = tmp_path / "f.json"
    partial_path(dest).write_bytes(BODY[:1000])  # what a killed earlier run left

    def serve(request: httpx.Request) -> httpx.Response:
        start = int(request.headers["range"].removeprefix("bytes=").rstrip("-"))
        return httpx.Response(206, content=BODY[start:])

    route = storage.get(URL).mock(side_effect=serve)
    result, _ = get(dest, size=len(BODY), sha256=SHA)
    assert route.calls.last.request.headers["range"] == "bytes=1000-"
    assert dest.read_bytes() == BODY and result.received == len(BODY) - 1000


def test_a_storage_that_ignores_range_starts_over(storage, tmp_path: Path) -> None:
    dest = tmp_path / "f.json"
    partial_path(dest).write_bytes(b"garbage")
    storage.get(URL).respond(200, content=BODY)
    get(dest, size=len(BODY), sha256=SHA)
    assert dest.read_bytes() == BODY


def test_a_cut_short_body_is_resumed_on_the_next_try(storage, tmp_path: Path) -> None:
    dest = tmp_path / "f.json"
    answers = iter(
        [
            httpx.Response(200, content=BODY[:500], headers={"content-length": str(len(BODY))}),
            httpx.Response(206, content=BODY[500:]),
        ]
    )

    def serve(request: httpx.Request) -> httpx.Response:
        answer = next(answers)
        if answer.status_code == 206:
            assert request.headers["range"] == "bytes=500-"
        return answer

    storage.get(URL).mock(side_effect=serve)
    _, waits = get(dest, size=len(BODY))
    assert dest.read_bytes() == BODY and waits == [0.5]


def test_an_expired_url_is_renewed(storage, tmp_path: Path) -> None:
    storage.get(URL).respond(403)
    fresh = "https://storage.example/bucket/renewed.json"
    storage.get(fresh).respond(200, content=BODY)
    renewed: list[int] = []

    def renew() -> str:
        renewed.append(1)
        return fresh

    get(tmp_path / "f.json", renew=renew)
    assert renewed == [1] and (tmp_path / "f.json").read_bytes() == BODY


def test_a_wrong_hash_or_size_fails_and_leaves_no_file(storage, tmp_path: Path) -> None:
    storage.get(URL).respond(200, content=BODY)
    with pytest.raises(DownloadFailed, match="SHA-256"):
        get(tmp_path / "f.json", sha256="0" * 64)
    with pytest.raises(DownloadFailed, match="size"):
        get(tmp_path / "g.json", size=len(BODY) - 1)
    assert list(tmp_path.iterdir()) == []


def test_failures_are_retried_three_times_then_named(storage, tmp_path: Path) -> None:
    route = storage.get(URL).respond(503)
    with pytest.raises(DownloadFailed, match="HTTP 503"):
        get(tmp_path / "f.json")
    assert route.call_count == 3
    storage.get(URL).respond(404)
    with pytest.raises(DownloadFailed, match="HTTP 404"):
        get(tmp_path / "f.json")


def test_redirects_are_followed_but_never_to_plain_http(storage, tmp_path: Path) -> None:
    storage.get(URL).respond(302, headers={"location": "/bucket/other"})
    storage.get("https://storage.example/bucket/other").respond(200, content=BODY)
    get(tmp_path / "f.json")
    assert (tmp_path / "f.json").read_bytes() == BODY
    storage.get(URL).respond(302, headers={"location": "http://evil.example/x"})
    with pytest.raises(InvalidInputError, match="not HTTPS"):
        get(tmp_path / "g.json")


class _Objects(BaseHTTPRequestHandler):
    """An object store's GET: the whole object, or the rest of it from a Range."""

    ranges: ClassVar[list[str | None]] = []
    body = random.Random(7).randbytes(4_000)  # does not compress: half an answer is data

    def do_GET(self) -> None:
        type(self).ranges.append(self.headers.get("Range"))
        start = int((self.headers.get("Range") or "bytes=0-")[6:].split("-")[0])
        data = self.body[start:]
        self.send_response(206 if start else 200)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        pass


def test_over_tls_gzipped_chunked_in_pieces_a_dying_answer_is_resumed(tmp_path: Path) -> None:
    server = LoopbackHTTPServer(("127.0.0.1", 0), _Objects)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    server_tls, pem = private_ca(tmp_path)
    wire = Wire(piece=5, delay=0.001, chunked=True, encoding="gzip")
    waits: list[float] = []
    try:
        with Proxy(f"http://127.0.0.1:{server.server_port}", wire, tls=server_tls) as proxy:
            proxy.kill_next(1)  # the first answer dies halfway through its body
            with httpx.Client(verify=ssl.create_default_context(cafile=str(pem))) as http:
                got = fetch_file(
                    http,
                    f"{proxy.url}/obj",
                    tmp_path / "f.json",
                    size=len(_Objects.body),
                    sha256=hashlib.sha256(_Objects.body).hexdigest(),
                    sleep=waits.append,
                )
    finally:
        server.shutdown()
    assert (tmp_path / "f.json").read_bytes() == _Objects.body
    assert got.received < len(_Objects.body), _Objects.ranges
    first, second = _Objects.ranges[-2:]
    assert first is None and second is not None, _Objects.ranges  # the rest was asked for
    assert waits == [0.5]
