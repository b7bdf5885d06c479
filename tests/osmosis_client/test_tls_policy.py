"""One TLS policy for every client of a process (osmosis_client._tls): the roots are
SSL_CERT_FILE / SSL_CERT_DIR when set, else certifi's; a named bundle is trusted besides
them; built once and handed to the platform client, model endpoints, storage downloads
and uploads, and the 0.2 agent-loop server's trainer calls — each proven by a handshake
with a server of a private CA."""

from __future__ import annotations

import asyncio
import json
import ssl
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import certifi
import httpx
import pytest

from osmosis_client import Client, _tls
from osmosis_client._tls import ssl_context
from osmosis_client.errors import EndpointUnreachableError
from osmosis_client.llm.client import ModelClient
from osmosis_client.llm.providers import ModelSpec
from tests.loopback_http import LoopbackHTTPServer
from tests.realwire import private_ca


@pytest.fixture(autouse=True)
def no_ambient_trust(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("SSL_CERT_FILE", "SSL_CERT_DIR", "OSMOSIS_CA_BUNDLE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(_tls, "_contexts", {})


class _Answer(BaseHTTPRequestHandler):
    def log_message(self, *args: Any) -> None:
        pass

    def _reply(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        body = json.dumps(
            {"choices": [{"message": {"role": "assistant", "content": "56"}}], "ok": True}
        ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = do_PUT = _reply


@pytest.fixture
def tls_server(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """(https://127.0.0.1:PORT, the private CA's PEM)."""
    context, pem = private_ca(tmp_path)
    server = LoopbackHTTPServer(("127.0.0.1", 0), _Answer)
    # the handshake happens in the connection's thread, not the accept loop
    server.socket = context.wrap_socket(
        server.socket, server_side=True, do_handshake_on_connect=False
    )
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"https://127.0.0.1:{server.server_address[1]}", pem
    finally:
        server.shutdown()
        server.server_close()


def test_the_roots_are_certifi_unless_ssl_cert_file_replaces_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, pem = private_ca(tmp_path)
    default = ssl_context()
    with open(certifi.where()) as bundle:
        certifi_count = bundle.read().count("BEGIN CERTIFICATE")
    assert len(default.get_ca_certs()) == certifi_count
    assert default.verify_mode == ssl.CERT_REQUIRED and default.check_hostname
    assert ssl_context() is default  # built once

    extra = ssl_context(pem)
    assert len(extra.get_ca_certs()) == certifi_count + 1  # besides the roots

    monkeypatch.setenv("SSL_CERT_FILE", str(pem))
    replaced = ssl_context()
    assert len(replaced.get_ca_certs()) == 1  # instead of the roots, as OpenSSL and httpx


def test_every_client_holds_the_one_context(monkeypatch: pytest.MonkeyPatch) -> None:
    context = ssl_context()
    platform = Client(base_url="https://platform.example", token="t")
    try:
        assert platform._verify is context
        with platform.storage_http() as storage:
            assert storage._transport._pool._ssl_context is context  # type: ignore[attr-defined]
    finally:
        platform.close()
    model = ModelClient(ModelSpec("m", base_url="https://models.example/v1").resolve())
    assert model._ssl is context


def test_each_client_completes_a_handshake_under_the_policy(
    tls_server: tuple[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    url, pem = tls_server

    def platform_get() -> Any:
        with Client(base_url=url, token="t") as client:
            return client._http.get(f"{url}/api/ping").json()["ok"]

    def storage_put_and_get() -> Any:
        with Client(base_url=url, token="t") as client, client.storage_http() as storage:
            storage.put(f"{url}/bucket/object", content=b"x").raise_for_status()
            return storage.get(f"{url}/bucket/object").json()["ok"]

    def model_call() -> Any:
        async def main() -> Any:
            target = ModelSpec("m", base_url=f"{url}/v1").resolve()
            async with ModelClient(target) as client:
                return (await client.complete([{"role": "user", "content": "hi"}]))["ok"]

        return asyncio.run(main())

    def trainer_session() -> Any:
        """The 0.2 agent-loop server calls its trainer through a session of the policy."""
        import aiohttp

        async def main() -> Any:
            connector = aiohttp.TCPConnector(ssl=ssl_context())
            async with (
                aiohttp.ClientSession(connector=connector) as session,
                session.post(f"{url}/v1/chat/completions", json={}) as response,
            ):
                return (await response.json())["ok"]

        return asyncio.run(main())

    clients = [platform_get, storage_put_and_get, model_call, trainer_session]
    for client in clients:  # untrusted: each refuses the private CA
        with pytest.raises((httpx.ConnectError, EndpointUnreachableError, Exception)) as caught:
            client()
        assert "certificate" in str(caught.value).lower() or "CERTIFICATE" in repr(caught.value)
    monkeypatch.setattr(_tls, "_contexts", {})
    monkeypatch.setenv("SSL_CERT_FILE", str(pem))
    assert [client() for client in clients] == [True] * 4
    monkeypatch.setattr(_tls, "_contexts", {})
    monkeypatch.delenv("SSL_CERT_FILE")
    monkeypatch.setenv("OSMOSIS_CA_BUNDLE", str(pem))
    assert [client() for client in clients] == [True] * 4


def test_an_unreadable_ssl_cert_file_is_one_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    junk = tmp_path / "junk.pem"
    junk.write_text("not a certificate")
    monkeypatch.setenv("SSL_CERT_FILE", str(junk))
    with pytest.raises(Exception) as caught:
        ssl_context()
    assert getattr(caught.value, "code", None) == "BAD_CA_BUNDLE"
    assert "SSL_CERT_FILE" in str(caught.value)
