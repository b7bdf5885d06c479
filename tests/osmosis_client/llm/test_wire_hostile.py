"""The model client on aiohttp against hostile and ordinary peers it meets off loopback:
HTTP and CONNECT proxies (with credentials, NO_PROXY), a certificate for another name,
a gzip bomb, chunk sizes that are negative or huge, a kept-alive connection dropped after
the request was sent (never replayed), dual-stack names."""

from __future__ import annotations

import asyncio
import gc
import json
import ssl
import tracemalloc
import zlib
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from osmosis_client._retry import RetryPolicy
from osmosis_client.errors import EndpointUnreachableError, ProviderRequestError
from osmosis_client.llm import answers as answers_module
from osmosis_client.llm.client import ModelClient
from osmosis_client.llm.providers import ModelSpec
from osmosis_client.llm.session import proxy_for
from tests.e2e.model_double import ModelDouble
from tests.proxy_peer import ForwardProxy, SocksProxy
from tests.realwire import Proxy, Wire, private_ca

QUESTION = [{"role": "user", "content": "What is 17 + 39?"}]
NO_RETRY = RetryPolicy(max_retries=0, base_delay=0.0, jitter=False)
PROXY_VARS = ("HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY")


@pytest.fixture(autouse=True)
def clean_proxy_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in PROXY_VARS:
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)
    monkeypatch.delenv("OSMOSIS_CA_BUNDLE", raising=False)


def call(url: str, **kwargs: Any) -> dict[str, Any]:
    async def main() -> dict[str, Any]:
        target = ModelSpec("Qwen/Qwen3-8B", base_url=url).resolve()
        async with ModelClient(target, **kwargs) as client:
            return await asyncio.wait_for(client.complete(QUESTION), 30)

    return asyncio.run(main())


def content(response: dict[str, Any]) -> str:
    return str(response["choices"][0]["message"]["content"])


@pytest.fixture
def model() -> Any:
    with ModelDouble() as double:
        yield double


# ------------------------------------------------------------------ proxies


def test_an_http_endpoint_goes_through_http_proxy(
    model: ModelDouble, monkeypatch: pytest.MonkeyPatch
) -> None:
    with ForwardProxy() as proxy:
        monkeypatch.setenv("HTTP_PROXY", proxy.url)
        assert content(call(model.url)) == "56"
    assert [(m, t.startswith("http://127.0.0.1:")) for m, t, _ in proxy.seen] == [("POST", True)]


def test_proxy_credentials_are_sent_and_never_printed(
    model: ModelDouble, monkeypatch: pytest.MonkeyPatch
) -> None:
    with ForwardProxy(credentials=("alice", "s3cret-pw")) as proxy:
        monkeypatch.setenv("http_proxy", proxy.url_with_credentials())
        assert content(call(model.url)) == "56"
        assert proxy.seen[-1][2] is True
        monkeypatch.setenv("http_proxy", f"http://alice:wrong-pw@127.0.0.1:{proxy.port}")
        with pytest.raises(ProviderRequestError) as caught:
            call(model.url, retry_policy=NO_RETRY)
    # a forward proxy's 407 is an answer like any other; its text never holds the password
    assert caught.value.status_code == 407
    assert "wrong-pw" not in str(caught.value) and "s3cret" not in str(caught.value)


def test_https_goes_through_a_connect_tunnel_with_and_without_credentials(
    model: ModelDouble, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    server_tls, pem = private_ca(tmp_path)
    monkeypatch.setenv("OSMOSIS_CA_BUNDLE", str(pem))
    with Proxy(model.url, Wire(piece=512, chunked=True), tls=server_tls) as gateway:
        https = gateway.url
        assert https.startswith("https://")
        with ForwardProxy() as plain:
            monkeypatch.setenv("HTTPS_PROXY", plain.url)
            assert content(call(https)) == "56"
            assert plain.seen[0][0] == "CONNECT" and plain.seen[0][1].startswith("127.0.0.1:")
        with ForwardProxy(credentials=("bob", "tunnel-pw")) as guarded:
            monkeypatch.setenv("HTTPS_PROXY", guarded.url_with_credentials())
            assert content(call(https)) == "56"
            assert guarded.seen[-1] == ("CONNECT", guarded.seen[-1][1], True)
            monkeypatch.setenv("HTTPS_PROXY", f"http://bob:nope-pw@127.0.0.1:{guarded.port}")
            with pytest.raises(EndpointUnreachableError) as caught:
                call(https, retry_policy=NO_RETRY)
    message = caught.value.message
    assert "through the proxy http://***@127.0.0.1" in message and "407" in message
    assert "nope-pw" not in message and "nope-pw" not in json.dumps(caught.value.data)


def test_all_proxy_carries_what_no_scheme_proxy_names(
    model: ModelDouble, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ALL_PROXY, as httpx, curl, requests and the OpenAI SDK read it (issue 43: model
    calls ignored it)."""
    with ForwardProxy() as proxy:
        monkeypatch.setenv("ALL_PROXY", proxy.url)
        assert content(call(model.url)) == "56"
        assert [m for m, _, _ in proxy.seen] == ["POST"]
        with ForwardProxy() as scheme:  # HTTP_PROXY wins for http:// endpoints
            monkeypatch.setenv("HTTP_PROXY", scheme.url)
            assert content(call(model.url)) == "56"
        assert len(proxy.seen) == 1 and len(scheme.seen) == 1


@pytest.mark.parametrize("scheme", ["socks5", "socks5h"])
def test_a_socks_all_proxy_carries_model_calls_with_credentials(
    model: ModelDouble, monkeypatch: pytest.MonkeyPatch, scheme: str
) -> None:
    with SocksProxy(credentials=("carol", "socks-pw")) as proxy:
        monkeypatch.setenv("ALL_PROXY", proxy.url(scheme))
        assert content(call(model.url)) == "56"
        assert content(call(model.url.replace("127.0.0.1", "localhost"))) == "56"
    hosts = [(host, allowed) for host, _, allowed in proxy.seen]
    named = "localhost" if scheme == "socks5h" else "127.0.0.1"  # socks5h: the proxy resolves
    assert hosts == [("127.0.0.1", True), (named, True)]


def test_a_socks_proxy_without_its_connector_is_one_clear_error(
    model: ModelDouble, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sys

    from osmosis_client.errors import InvalidInputError

    monkeypatch.setitem(sys.modules, "aiohttp_socks", None)  # the socks extra not installed
    monkeypatch.setenv("ALL_PROXY", "socks5://user:hidden-pw@127.0.0.1:9")
    with pytest.raises(InvalidInputError) as caught:
        call(model.url)
    assert caught.value.code == "PROXY_UNSUPPORTED" and "osmosis-client[socks]" in (
        caught.value.hint or ""
    )
    assert "hidden-pw" not in caught.value.message


@pytest.mark.parametrize(
    "no_proxy", ["127.0.0.1", "localhost,127.0.0.1", "*", "{host}:{port}", ".0.0.1,127.0.0.1"]
)
def test_no_proxy_forms_bypass_the_proxy(
    model: ModelDouble, monkeypatch: pytest.MonkeyPatch, no_proxy: str
) -> None:
    port = model.url.split(":")[2].split("/")[0]
    with ForwardProxy() as proxy:
        monkeypatch.setenv("HTTP_PROXY", proxy.url)
        monkeypatch.setenv("NO_PROXY", no_proxy.format(host="127.0.0.1", port=port))
        assert content(call(model.url)) == "56"
    assert proxy.seen == []


def test_no_proxy_matching_rules() -> None:
    env = {"https_proxy": "http://p:3128", "http_proxy": "proxy.internal:8080"}
    cases = {
        "https://api.example.com/v1": ("example.com", None),
        "https://example.com/v1": (".example.com", None),
        "https://other.com/v1": ("example.com", "http://p:3128"),
        "https://api.example.com:8443/v1": ("api.example.com:8443", None),
        "https://api.example.com/v1#443": ("api.example.com:8443", "http://p:3128"),
        "http://10.0.0.5:8000/v1": ("", "http://proxy.internal:8080"),  # scheme added
    }
    with pytest.MonkeyPatch.context() as patch:
        for name in PROXY_VARS:
            patch.delenv(name, raising=False)
            patch.delenv(name.lower(), raising=False)
        for key, value in env.items():
            patch.setenv(key, value)
        for url, (no_proxy, expected) in cases.items():
            patch.setenv("no_proxy", no_proxy)
            assert proxy_for(url) == expected, (url, no_proxy)


# ------------------------------------------------------------------ TLS


def test_a_certificate_for_another_name_is_refused_without_retries(
    model: ModelDouble, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import trustme

    ca = trustme.CA()
    server = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert("models.example.com").configure_cert(server)
    pem = tmp_path / "ca.pem"
    ca.cert_pem.write_to_path(str(pem))
    monkeypatch.setenv("OSMOSIS_CA_BUNDLE", str(pem))
    with Proxy(model.url, Wire(), tls=server) as gateway:
        with pytest.raises(EndpointUnreachableError) as caught:
            call(gateway.url)
        assert gateway.requests == 0
    assert caught.value.code == "TLS_CERTIFICATE"
    assert "mismatch" in caught.value.message.lower() or "match" in caught.value.message


# ------------------------------------------------------------------ hostile answers

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


async def read_request(reader: asyncio.StreamReader) -> bytes:
    head = await reader.readuntil(b"\r\n\r\n")
    length = 0
    for line in head.decode("latin-1").split("\r\n"):
        if line.lower().startswith("content-length:"):
            length = int(line.split(":", 1)[1])
    return head + await reader.readexactly(length)


def scripted(handler: Handler, **kwargs: Any) -> tuple[Any, int]:
    """Call a server running ``handler`` per connection: (result or exception, requests)."""
    requests = [0]

    async def on_connect(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                await read_request(reader)
                requests[0] += 1
                await handler(reader, writer)
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    async def main() -> Any:
        server = await asyncio.start_server(on_connect, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        target = ModelSpec("m", base_url=f"http://127.0.0.1:{port}/v1").resolve()
        async with server, ModelClient(target, **kwargs) as client:
            try:
                return await asyncio.wait_for(client.complete(QUESTION), 20)
            except Exception as exc:  # the outcome under test
                return exc

    return asyncio.run(main()), requests[0]


def reply_bytes() -> bytes:
    body = {"choices": [{"message": {"role": "assistant", "content": "56"}}]}
    return json.dumps(body).encode()


@pytest.mark.parametrize(
    "size_line", [b"-5", b"-0x5", b"ffffffffffffffffffffffff", b"7fffffffffffffff", b"zz"]
)
def test_negative_huge_and_garbage_chunk_sizes_fail_the_call_promptly(size_line: bytes) -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(
            b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
            b"Transfer-Encoding: chunked\r\n\r\n" + size_line + b"\r\nhello\r\n0\r\n\r\n"
        )
        await writer.drain()
        writer.close()

    outcome, requests = scripted(handler, retry_policy=NO_RETRY)
    assert isinstance(outcome, EndpointUnreachableError), outcome
    assert requests == 1


def test_a_post_is_never_replayed_on_a_connection_dropped_after_it_was_sent() -> None:
    """The server reads the request and drops the connection: the model may have run the
    call. With no retries allowed, it reached the server exactly once (the transport
    never replays it); with retries, the policy's visible retry sends it again."""

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.close()

    outcome, requests = scripted(handler, retry_policy=NO_RETRY)
    assert isinstance(outcome, EndpointUnreachableError) and requests == 1


def test_a_kept_alive_connection_is_reused_for_the_next_call() -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        body = reply_bytes()
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
        await writer.drain()

    connections = [0]

    async def main() -> list[str]:
        async def on_connect(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            connections[0] += 1
            try:
                while True:
                    await read_request(reader)
                    await handler(reader, writer)
            except (asyncio.IncompleteReadError, ConnectionError):
                pass
            finally:
                writer.close()

        server = await asyncio.start_server(on_connect, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        target = ModelSpec("m", base_url=f"http://127.0.0.1:{port}/v1").resolve()
        async with server, ModelClient(target, concurrency=1) as client:
            return [content(await client.complete(QUESTION)) for _ in range(5)]

    assert asyncio.run(main()) == ["56"] * 5
    assert connections[0] == 1


def gzip_bomb(megabytes: int) -> bytes:
    """``megabytes`` MiB of zeros, gzipped (~1 KiB per MiB)."""
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)
    zeros = bytes(1 << 20)
    return b"".join(packer.compress(zeros) for _ in range(megabytes)) + packer.flush()


def test_a_gzip_bomb_is_refused_at_the_cap_in_bounded_memory(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(answers_module, "MAX_RESPONSE_BYTES", 4 << 20)
    bomb = gzip_bomb(512)  # 512 MiB once inflated, ~500 KiB on the wire

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(
            b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Encoding: gzip\r\n"
            b"Content-Length: %d\r\n\r\n" % len(bomb) + bomb
        )
        await writer.drain()

    gc.collect()
    tracemalloc.start()
    try:
        outcome, _ = scripted(handler, retry_policy=NO_RETRY)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert isinstance(outcome, ProviderRequestError), outcome
    assert "MiB for one answer" in outcome.message
    assert peak < 48 << 20, f"peak {peak >> 20} MiB"  # the cap and a few windows, not 512 MiB


def test_a_dual_stack_name_reaches_a_server_on_either_family(model: ModelDouble) -> None:
    """``localhost`` may resolve to ::1 first; the server listens on IPv4 only: the
    connector tries every address (happy eyeballs) instead of failing on the first."""
    url = model.url.replace("127.0.0.1", "localhost")
    assert content(call(url)) == "56"


# ------------------------------------------------------------------ failures, named


def _failed(url: str, **kwargs: Any) -> EndpointUnreachableError:
    with pytest.raises(EndpointUnreachableError) as caught:
        call(url, retry_policy=NO_RETRY, **kwargs)
    return caught.value


def _closed_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_a_refused_port_is_named_and_keeps_the_socket_error_beneath() -> None:
    error = _failed(f"http://127.0.0.1:{_closed_port()}/v1")
    assert error.code == "ENDPOINT_REFUSED" and "nothing listens on that port" in error.message
    assert isinstance(error.__cause__, OSError)  # aiohttp's ClientConnectorError beneath


def test_a_name_that_does_not_resolve_is_named() -> None:
    error = _failed("http://no-such-host.invalid:8000/v1")
    assert (
        error.code == "ENDPOINT_DNS" and "'no-such-host.invalid' does not resolve" in error.message
    )
    assert error.__cause__ is not None


def test_a_server_that_never_answers_is_a_read_timeout() -> None:
    import socket
    import threading

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    held: list[socket.socket] = []
    threading.Thread(target=lambda: held.append(listener.accept()[0]), daemon=True).start()
    try:
        url = f"http://127.0.0.1:{listener.getsockname()[1]}/v1"
        error = _failed(url, request_timeout=0.5)
    finally:
        listener.close()
        for connection in held:
            connection.close()
    assert error.code == "ENDPOINT_READ_TIMEOUT" and "did not answer in time" in error.message


def test_a_server_that_hangs_up_is_named() -> None:
    import socket
    import threading

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()

    def hang_up() -> None:
        connection, _ = listener.accept()
        connection.recv(65536)
        connection.close()

    threading.Thread(target=hang_up, daemon=True).start()
    try:
        error = _failed(f"http://127.0.0.1:{listener.getsockname()[1]}/v1")
    finally:
        listener.close()
    assert error.code == "ENDPOINT_DISCONNECTED" and "closed the connection" in error.message


def test_a_proxy_that_is_not_there_and_one_that_wants_credentials_are_named(
    model: ModelDouble, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("HTTP_PROXY", f"http://u:hidden-pw@127.0.0.1:{_closed_port()}")
    refused = _failed(model.url)
    assert refused.code == "PROXY_REFUSED" and "the proxy http://***@127.0.0.1" in refused.message
    server_tls, pem = private_ca(tmp_path)
    monkeypatch.setenv("OSMOSIS_CA_BUNDLE", str(pem))
    with (
        Proxy(model.url, Wire(piece=512), tls=server_tls) as gateway,
        ForwardProxy(credentials=("bob", "right-pw")) as guarded,
    ):
        monkeypatch.setenv("HTTPS_PROXY", f"http://bob:wrong-pw@127.0.0.1:{guarded.port}")
        auth = _failed(gateway.url)
    assert auth.code == "PROXY_AUTH" and "refused the credentials (407)" in auth.message
    for error in (refused, auth):
        assert "hidden-pw" not in error.message + json.dumps(error.data)
        assert "wrong-pw" not in error.message + json.dumps(error.data)


@pytest.mark.parametrize(
    ("path", "suggested"),
    [("", "/v1"), ("/v1/chat/completions", "/v1")],
)
def test_a_fastapi_404_for_the_path_suggests_the_base_url(path: str, suggested: str) -> None:
    """vLLM's server is FastAPI: a path it does not serve answers ``{"detail": "Not
    Found"}`` — not a model that is missing. A pasted request URL loses its route."""
    from aiohttp import web

    from tests.stub_openai import serve_app

    async def not_found(request: web.Request) -> web.Response:
        return web.json_response({"detail": "Not Found"}, status=404)

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", not_found)
    with serve_app(app) as base, pytest.raises(ProviderRequestError) as caught:
        call(base + path, retry_policy=NO_RETRY)
    assert caught.value.code == "ENDPOINT_PATH"
    assert caught.value.data["suggested_base_url"] == base + suggested
