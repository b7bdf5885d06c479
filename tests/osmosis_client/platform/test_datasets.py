"""client.datasets and a whole upload: requests field by field (published-cli-0.3.8.md
§3.2–3.3), presigned PUTs streamed and retried, an abort when sending fails."""

from __future__ import annotations

import hashlib
import json
import os
import socket
import subprocess
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any, ClassVar

import httpx
import pytest
import respx

from osmosis_client import Client
from osmosis_client.errors import APIConnectionError, InvalidInputError, OsmosisError, ProtocolError
from osmosis_client.platform.dataset.dataset_upload import DatasetExists, upload_dataset
from osmosis_client.platform.presigned import UploadFailed
from tests.conftest import PLATFORM
from tests.loopback_http import LoopbackHTTPServer
from tests.osmosis_client.platform.conftest import Api
from tests.realwire import Proxy, Wire, private_ca

MakeApi = Callable[..., Api]
STORAGE = "https://storage.test"


def record(**extra: Any) -> dict[str, Any]:
    return {"id": "ds1", "file_name": "qa", "file_size": 10, "status": "pending", **extra}


def test_list_get_download_url_and_logs(make_api: MakeApi, router: respx.MockRouter) -> None:
    api = make_api(token="t", workspace="acme")
    listed = router.get("/api/cli/datasets").respond(
        200, json={"datasets": [record(status="uploaded")], "total_count": 1, "has_more": False}
    )
    page = api.call(lambda c: c.datasets.list(limit=500))
    assert page.datasets[0].status == "uploaded" and page.total_count == 1
    assert dict(listed.calls.last.request.url.params) == {"limit": "50", "offset": "0"}
    assert listed.calls.last.request.headers["X-Osmosis-Workspace"] == "acme"
    got = router.get("/api/cli/datasets/a%2Fb").respond(200, json=record(data_preview=[{"x": 1}]))
    item = api.call(lambda c: c.datasets.get("a/b"))
    assert got.called and item.data_preview == [{"x": 1}]
    assert "data_preview" not in item.to_json() and item.to_json()["id"] == "ds1"
    router.get("/api/cli/datasets/qa/download").respond(
        200, json={"presignedUrl": f"{STORAGE}/f", "expiresIn": 60, "downloadFileName": "qa.jsonl"}
    )
    url = api.call(lambda c: c.datasets.download_url("qa"))
    assert (url.presigned_url, url.expires_in, url.file_name) == (f"{STORAGE}/f", 60, "qa.jsonl")
    logs = router.get("/api/cli/datasets/qa/logs").respond(
        200, json={"logs": [{"timestamp": "t", "message": "m"}], "next_cursor": "c2"}
    )
    assert api.call(lambda c: c.datasets.logs("qa", cursor="c1")).next_cursor == "c2"
    params = dict(logs.calls.last.request.url.params)
    assert params == {"limit": "50", "direction": "older", "cursor": "c1"}


@pytest.fixture
def client() -> Client:
    return Client(base_url=PLATFORM, token="t", workspace="acme", sleep=lambda s: None)


@pytest.fixture
def wire() -> Iterator[respx.MockRouter]:
    """Platform and storage alike, by full URL."""
    with respx.mock(assert_all_called=False) as mock:
        yield mock


@pytest.fixture
def data(tmp_path: Path) -> Path:
    path = tmp_path / "qa.jsonl"
    path.write_bytes(b"0123456789")
    return path


def test_a_simple_upload_puts_the_bytes_then_completes(
    client: Client, data: Path, wire: respx.MockRouter
) -> None:
    simple = {"method": "simple", "presigned_url": f"{STORAGE}/put", "upload_headers": {"X-A": "1"}}
    create = wire.post(f"{PLATFORM}/api/cli/datasets").respond(201, json=record(upload=simple))
    put = wire.put(f"{STORAGE}/put").respond(200)
    complete = wire.post(f"{PLATFORM}/api/cli/datasets/ds1/complete").respond(200, json={})
    sent: list[int] = []
    done = upload_dataset(client, data, http=httpx.Client(), on_bytes=sent.append)
    assert done.id == "ds1"
    body = json.loads(create.calls.last.request.content)
    assert body == {"file_name": "qa", "file_size": 10, "extension": "jsonl"}
    request = put.calls.last.request
    assert request.content == b"0123456789" and request.headers["Content-Length"] == "10"
    assert request.headers["X-A"] == "1" and "Authorization" not in request.headers
    assert json.loads(complete.calls.last.request.content) == {"file_extension": "jsonl"}
    assert sum(sent) == 10


def multipart(part_size: int = 4, total: int = 3) -> dict[str, Any]:
    urls = [{"part_number": n, "presigned_url": f"{STORAGE}/p{n}"} for n in range(1, total + 1)]
    return {
        "method": "multipart",
        "part_size": part_size,
        "total_parts": total,
        "presigned_urls": urls,
    }


def test_multipart_retries_a_failing_part_and_completes_with_etags(
    client: Client, data: Path, wire: respx.MockRouter
) -> None:
    wire.post(f"{PLATFORM}/api/cli/datasets").respond(201, json=record(upload=multipart()))
    wire.put(f"{STORAGE}/p1").respond(200, headers={"ETag": '"e1"'})
    flaky = wire.put(f"{STORAGE}/p2")
    flaky.side_effect = [
        httpx.Response(503),
        httpx.ConnectError("x"),
        httpx.Response(200, headers={"ETag": "e2"}),
    ]
    last = wire.put(f"{STORAGE}/p3").respond(200, headers={"ETag": '"e3"'})
    complete = wire.post(f"{PLATFORM}/api/cli/datasets/ds1/complete").respond(200, json={})
    waits: list[float] = []
    sent: list[int] = []
    upload_dataset(client, data, http=httpx.Client(), on_bytes=sent.append, sleep=waits.append)
    assert waits == [1.0, 2.0] and flaky.call_count == 3
    assert last.calls.last.request.content == b"89" and sum(sent) == 10  # failed tries undone
    parts = json.loads(complete.calls.last.request.content)["parts"]
    assert parts == [
        {"PartNumber": 1, "ETag": "e1"},
        {"PartNumber": 2, "ETag": "e2"},
        {"PartNumber": 3, "ETag": "e3"},
    ]


def test_a_part_that_keeps_failing_aborts_the_upload(
    client: Client, data: Path, wire: respx.MockRouter
) -> None:
    wire.post(f"{PLATFORM}/api/cli/datasets").respond(201, json=record(upload=multipart()))
    wire.put(f"{STORAGE}/p1").respond(500)
    abort = wire.post(f"{PLATFORM}/api/cli/datasets/ds1/abort").respond(200, json={})
    complete = wire.post(f"{PLATFORM}/api/cli/datasets/ds1/complete").respond(200, json={})
    waits: list[float] = []
    with pytest.raises(UploadFailed, match="HTTP 500"):
        upload_dataset(client, data, http=httpx.Client(), sleep=waits.append)
    assert waits == [1.0, 2.0, 4.0, 8.0]  # 5 tries
    assert abort.called and json.loads(abort.calls.last.request.content) == {}
    assert not complete.called


def test_an_interrupted_upload_is_aborted(
    client: Client, data: Path, wire: respx.MockRouter
) -> None:
    wire.post(f"{PLATFORM}/api/cli/datasets").respond(201, json=record(upload=multipart()))

    def interrupt(request: httpx.Request) -> httpx.Response:
        raise KeyboardInterrupt

    wire.put(f"{STORAGE}/p1").mock(side_effect=interrupt)
    abort = wire.post(f"{PLATFORM}/api/cli/datasets/ds1/abort").respond(500)
    warnings: list[tuple[str, str]] = []
    with pytest.raises(KeyboardInterrupt):
        upload_dataset(
            client, data, http=httpx.Client(), on_warning=lambda m, c: warnings.append((c, m))
        )
    assert abort.called and warnings[0][0] == "ABORT_FAILED"


def test_a_taken_name_needs_overwrite(client: Client, data: Path, wire: respx.MockRouter) -> None:
    simple = {"method": "simple", "presigned_url": f"{STORAGE}/put"}
    create = wire.post(f"{PLATFORM}/api/cli/datasets")
    create.side_effect = [
        httpx.Response(409, json={"code": "CONFLICT", "existing_dataset_id": "old"}),
        httpx.Response(409, json={"code": "CONFLICT", "existing_dataset_id": "old"}),
        httpx.Response(201, json=record(upload=simple)),
    ]
    wire.put(f"{STORAGE}/put").respond(200)
    wire.post(f"{PLATFORM}/api/cli/datasets/ds1/complete").respond(200, json={})
    with pytest.raises(DatasetExists) as caught:
        upload_dataset(client, data, http=httpx.Client())
    assert caught.value.data["existing_dataset_id"] == "old"
    upload_dataset(client, data, http=httpx.Client(), overwrite=True)
    assert json.loads(create.calls.last.request.content)["overwrite_dataset_id"] == "old"


@pytest.mark.parametrize(
    ("upload", "error", "match"),
    [
        (
            {"method": "simple", "presigned_url": "http://storage.test/put"},
            InvalidInputError,
            "not HTTPS",
        ),
        (multipart(part_size=4, total=2), ProtocolError, "does not fit"),
        (
            {**multipart(), "presigned_urls": multipart()["presigned_urls"][:2]},
            ProtocolError,
            "one URL per part",
        ),
        ({"method": "ftp"}, ProtocolError, "unknown upload method"),
    ],
)
def test_a_bad_plan_sends_nothing_and_aborts(
    client: Client,
    data: Path,
    wire: respx.MockRouter,
    upload: dict[str, Any],
    error: type[Exception],
    match: str,
) -> None:
    wire.post(f"{PLATFORM}/api/cli/datasets").respond(201, json=record(upload=upload))
    abort = wire.post(f"{PLATFORM}/api/cli/datasets/ds1/abort").respond(200, json={})
    with pytest.raises(error, match=match):
        upload_dataset(client, data, http=httpx.Client())
    assert abort.called


class _Storage(BaseHTTPRequestHandler):
    """An object store: keeps each PUT's body, answers its MD5 as the ETag."""

    stored: ClassVar[dict[str, bytes]] = {}

    def do_PUT(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        type(self).stored[self.path] = body
        self.send_response(200)
        self.send_header("ETag", f'"{hashlib.md5(body).hexdigest()}"')
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


def test_multipart_upload_over_tls_in_pieces_trusting_the_clients_ca(
    tmp_path: Path, data: Path
) -> None:
    """The storage behind TLS with a private CA and answers cut in pieces: the upload
    trusts what the platform client trusts (its ``ca_bundle``) and sends every byte."""
    server = LoopbackHTTPServer(("127.0.0.1", 0), _Storage)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    server_tls, pem = private_ca(tmp_path)
    wire = Wire(piece=3, delay=0.001, chunked=True)
    try:
        with Proxy(f"http://127.0.0.1:{server.server_port}", wire, tls=server_tls) as proxy:
            plan = multipart()
            for part in plan["presigned_urls"]:
                part["presigned_url"] = part["presigned_url"].replace(STORAGE, proxy.url)
            client = Client(base_url=PLATFORM, token="t", workspace="acme", ca_bundle=pem)
            with respx.mock(assert_all_called=False) as mock:
                mock.route(host="127.0.0.1").pass_through()
                mock.post(f"{PLATFORM}/api/cli/datasets").respond(201, json=record(upload=plan))
                done = mock.post(f"{PLATFORM}/api/cli/datasets/ds1/complete").respond(200, json={})
                upload_dataset(client, data)
                abort = mock.post(f"{PLATFORM}/api/cli/datasets/ds1/abort").respond(200, json={})
                untrusting = Client(base_url=PLATFORM, token="t", workspace="acme")
                with pytest.raises(APIConnectionError) as refused:
                    upload_dataset(untrusting, data, sleep=pytest.fail)  # never retried
                assert refused.value.code == "TLS_CERTIFICATE" and abort.called
            parts = json.loads(done.calls.last.request.content)["parts"]
    finally:
        server.shutdown()
    assert b"".join(_Storage.stored[f"/p{n}"] for n in (1, 2, 3)) == data.read_bytes()
    assert [p["ETag"] for p in parts] == [
        hashlib.md5(_Storage.stored[f"/p{n}"]).hexdigest() for n in (1, 2, 3)
    ]


def test_an_upload_is_journaled_until_it_completes(
    client: Client, data: Path, wire: respx.MockRouter, tmp_path: Path
) -> None:
    journal = tmp_path / "uploads"
    simple = {"method": "simple", "presigned_url": f"{STORAGE}/put"}
    wire.post(f"{PLATFORM}/api/cli/datasets").respond(201, json=record(upload=simple))
    seen: list[list[str]] = []

    def put(request: httpx.Request) -> httpx.Response:
        seen.append(sorted(p.name for p in journal.iterdir()))  # noted while in flight
        return httpx.Response(200)

    wire.put(f"{STORAGE}/put").mock(side_effect=put)
    wire.post(f"{PLATFORM}/api/cli/datasets/ds1/complete").respond(200, json={})
    upload_dataset(client, data, http=httpx.Client(), journal=journal)
    assert len(seen) == 1 and len(seen[0]) == 1 and list(journal.iterdir()) == []
    # the note, read while in flight, named the dataset and this process
    assert seen[0][0].startswith("upload-")


def note_of(journal: Path) -> dict[str, Any]:
    (only,) = list(journal.iterdir())
    return dict(json.loads(only.read_text()))


def test_the_note_is_written_before_the_create_and_names_its_process(
    client: Client, data: Path, wire: respx.MockRouter, tmp_path: Path
) -> None:
    journal = tmp_path / "uploads"
    notes: list[dict[str, Any]] = []
    simple = {"method": "simple", "presigned_url": f"{STORAGE}/put"}

    def create(request: httpx.Request) -> httpx.Response:
        notes.append(note_of(journal))
        return httpx.Response(201, json=record(upload=simple))

    wire.post(f"{PLATFORM}/api/cli/datasets").mock(side_effect=create)
    wire.put(f"{STORAGE}/put").mock(
        side_effect=lambda r: notes.append(note_of(journal)) or httpx.Response(200)
    )
    wire.post(f"{PLATFORM}/api/cli/datasets/ds1/complete").respond(200, json={})
    upload_dataset(client, data, http=httpx.Client(), journal=journal)
    assert [n["dataset_id"] for n in notes] == [None, "ds1"]
    assert notes[0]["name"] == "qa" and notes[0]["pid"] == os.getpid()


def dead_pid() -> int:
    probe = subprocess.Popen(["true"])
    probe.wait()
    return probe.pid


def test_a_live_uploads_note_is_never_taken_for_a_leftover(
    client: Client, data: Path, wire: respx.MockRouter, tmp_path: Path
) -> None:
    """Issue 33: two uploads at once — the second took the first's note for a leftover
    and aborted the live upload."""
    from osmosis_client._process import start_time

    journal = tmp_path / "uploads"
    journal.mkdir()
    live = {
        "dataset_id": "ds-live",
        "name": "other",
        "pid": os.getpid(),
        "pid_start": start_time(os.getpid()),
        "host": socket.gethostname(),
        "started": 0,
    }
    (journal / "upload-live.json").write_text(json.dumps(live))
    looked = wire.get(f"{PLATFORM}/api/cli/datasets/ds-live").respond(
        200, json=record(id="ds-live", status="uploading")
    )
    abort = wire.post(f"{PLATFORM}/api/cli/datasets/ds-live/abort").respond(200, json={})
    simple = {"method": "simple", "presigned_url": f"{STORAGE}/put"}
    wire.post(f"{PLATFORM}/api/cli/datasets").respond(201, json=record(upload=simple))
    wire.put(f"{STORAGE}/put").respond(200)
    wire.post(f"{PLATFORM}/api/cli/datasets/ds1/complete").respond(200, json={})
    upload_dataset(client, data, http=httpx.Client(), journal=journal)
    assert not looked.called and not abort.called
    assert [p.name for p in journal.iterdir()] == ["upload-live.json"]
    # once its process is gone, the note is a leftover: aborted
    (journal / "upload-live.json").write_text(json.dumps(live | {"pid": dead_pid()}))
    upload_dataset(client, data, http=httpx.Client(), journal=journal)
    assert abort.called and list(journal.iterdir()) == []


@pytest.mark.parametrize("failure", ["interrupt", "lost answer", "5xx"])
def test_an_upload_interrupted_while_registering_is_aborted(
    client: Client, data: Path, wire: respx.MockRouter, tmp_path: Path, failure: str
) -> None:
    """Issue 33: Ctrl-C or a lost answer during the create left the dataset uploading
    and no note; the next upload then refused the name."""
    journal = tmp_path / "uploads"

    def create(request: httpx.Request) -> httpx.Response:
        if failure == "interrupt":
            raise KeyboardInterrupt
        if failure == "lost answer":
            raise httpx.ReadTimeout("lost", request=request)
        return httpx.Response(503, json={"message": "busy"})

    wire.post(f"{PLATFORM}/api/cli/datasets").mock(side_effect=create)
    wire.get(f"{PLATFORM}/api/cli/datasets/qa").respond(
        200, json=record(id="ds9", status="uploading", created_at="2099-01-01T00:00:00Z")
    )
    abort = wire.post(f"{PLATFORM}/api/cli/datasets/ds9/abort").respond(200, json={})
    with pytest.raises((KeyboardInterrupt, OsmosisError)):  # type: ignore[arg-type]
        upload_dataset(client, data, http=httpx.Client(), journal=journal)
    assert abort.called and list(journal.iterdir()) == []


def replacing_ds_old(wire: respx.MockRouter) -> tuple[respx.Route, respx.Route]:
    """The platform's side of replacing the stuck upload ``ds-old``: abort it, a 409 naming
    it, then a create that uploads as ``ds1``. Returns the abort and create routes."""
    abort = wire.post(f"{PLATFORM}/api/cli/datasets/ds-old/abort").respond(200, json={})
    simple = {"method": "simple", "presigned_url": f"{STORAGE}/put"}
    create = wire.post(f"{PLATFORM}/api/cli/datasets").mock(
        side_effect=[
            httpx.Response(409, json={"existing_dataset_id": "ds-old"}),
            httpx.Response(201, json=record(upload=simple)),
        ]
    )
    wire.put(f"{STORAGE}/put").respond(200)
    wire.post(f"{PLATFORM}/api/cli/datasets/ds1/complete").respond(200, json={})
    return abort, create


def test_a_create_killed_mid_way_is_cleaned_by_the_next_upload(
    client: Client, data: Path, wire: respx.MockRouter, tmp_path: Path
) -> None:
    """SIGKILL while registering: the note has no dataset id and a dead process; the next
    upload finds the dataset of that name still uploading, aborts it and replaces it."""
    journal = tmp_path / "uploads"
    journal.mkdir()
    killed = {
        "dataset_id": None,
        "name": "qa",
        "pid": dead_pid(),
        "pid_start": None,
        "host": socket.gethostname(),
        "started": 0,
    }
    (journal / "upload-killed.json").write_text(json.dumps(killed))
    for route in ("qa", "ds-old"):
        wire.get(f"{PLATFORM}/api/cli/datasets/{route}").respond(
            200, json=record(id="ds-old", status="uploading")
        )
    abort, create = replacing_ds_old(wire)
    upload_dataset(client, data, http=httpx.Client(), journal=journal)  # no --overwrite needed
    assert abort.called and list(journal.iterdir()) == []
    assert json.loads(create.calls.last.request.content)["overwrite_dataset_id"] == "ds-old"


def test_what_a_killed_upload_left_is_aborted_then_replaced(
    client: Client, data: Path, wire: respx.MockRouter, tmp_path: Path
) -> None:
    journal = tmp_path / "uploads"
    journal.mkdir()
    (journal / "ds-old.json").write_text(json.dumps({"dataset_id": "ds-old", "name": "qa"}))
    wire.get(f"{PLATFORM}/api/cli/datasets/ds-old").respond(
        200, json=record(id="ds-old", status="uploading")
    )
    abort, create = replacing_ds_old(wire)
    upload_dataset(client, data, http=httpx.Client(), journal=journal)  # no --overwrite needed
    assert abort.called
    assert json.loads(create.calls.last.request.content)["overwrite_dataset_id"] == "ds-old"
    assert list(journal.iterdir()) == []
