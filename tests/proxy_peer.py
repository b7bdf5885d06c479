"""A loopback forward proxy (standard library only; imports nothing from osmosis-client),
written from RFC 9110 §9.3.6 (CONNECT) and RFC 9112 §3.2.2 (absolute-form requests).

``with ForwardProxy(credentials=("u", "p")) as proxy: proxy.url`` — plain-HTTP requests
arrive in absolute form and are forwarded one by one (origin form upstream); ``CONNECT
host:port`` opens a tunnel (what an HTTPS request through a proxy is). With credentials,
a request without the matching ``Proxy-Authorization: Basic …`` is answered 407.
``seen`` lists (method, target, whether authorized) per request.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import threading
from urllib.parse import urlsplit


class ForwardProxy:
    def __init__(self, credentials: tuple[str, str] | None = None) -> None:
        self.credentials = credentials
        self.seen: list[tuple[str, str, bool]] = []
        self.port = 0
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True, name="forward-proxy")
        self._server: asyncio.AbstractServer | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def url_with_credentials(self) -> str:
        assert self.credentials is not None
        user, password = self.credentials
        return f"http://{user}:{password}@127.0.0.1:{self.port}"

    def __enter__(self) -> ForwardProxy:
        self._thread.start()
        if not self._ready.wait(10):
            raise RuntimeError("the proxy did not start")
        return self

    def __exit__(self, *exc: object) -> None:
        async def close() -> None:
            if self._server is not None:
                self._server.close()
            tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

        asyncio.run_coroutine_threadsafe(close(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)

        async def listen() -> None:
            self._server = await asyncio.start_server(self._client, "127.0.0.1", 0)
            self.port = self._server.sockets[0].getsockname()[1]
            self._ready.set()

        self._loop.run_until_complete(listen())
        self._loop.run_forever()

    def _authorized(self, headers: dict[str, str]) -> bool:
        if self.credentials is None:
            return True
        expected = base64.b64encode(":".join(self.credentials).encode()).decode()
        return headers.get("proxy-authorization", "") == f"Basic {expected}"

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                try:
                    raw = await reader.readuntil(b"\r\n\r\n")
                except (asyncio.IncompleteReadError, ConnectionError):
                    return
                lines = raw.decode("latin-1").split("\r\n")
                method, target, _ = lines[0].split(" ", 2)
                headers = {}
                for line in lines[1:]:
                    if line:
                        name, _, value = line.partition(":")
                        headers[name.strip().lower()] = value.strip()
                body = await reader.readexactly(int(headers.get("content-length", "0")))
                allowed = self._authorized(headers)
                self.seen.append((method, target, allowed))
                if not allowed:
                    writer.write(
                        b"HTTP/1.1 407 Proxy Authentication Required\r\n"
                        b'Proxy-Authenticate: Basic realm="proxy"\r\n'
                        b"Content-Length: 0\r\nConnection: close\r\n\r\n"
                    )
                    await writer.drain()
                    return
                if method == "CONNECT":
                    await self._tunnel(target, reader, writer)
                    return
                await self._forward(method, target, lines[1:], body, writer)
        finally:
            writer.close()

    async def _tunnel(
        self, target: str, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        host, _, port = target.rpartition(":")
        up_reader, up_writer = await asyncio.open_connection(host.strip("[]"), int(port))
        writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
        await writer.drain()

        async def pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
            with contextlib.suppress(ConnectionError, asyncio.CancelledError):
                while data := await src.read(65536):
                    dst.write(data)
                    await dst.drain()
            with contextlib.suppress(OSError):
                dst.write_eof()

        await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))
        up_writer.close()

    async def _forward(
        self,
        method: str,
        target: str,
        header_lines: list[str],
        body: bytes,
        writer: asyncio.StreamWriter,
    ) -> None:
        parts = urlsplit(target)
        path = parts.path + (f"?{parts.query}" if parts.query else "")
        kept = [
            line
            for line in header_lines
            if line
            and line.split(":", 1)[0].strip().lower()
            not in ("proxy-authorization", "proxy-connection", "connection")
        ]
        head = "\r\n".join([f"{method} {path} HTTP/1.1", *kept, "Connection: close", "", ""])
        up_reader, up_writer = await asyncio.open_connection(parts.hostname, parts.port or 80)
        up_writer.write(head.encode("latin-1") + body)
        await up_writer.drain()
        answer = await up_reader.read()  # the upstream closes: the whole answer
        up_writer.close()
        writer.write(answer)
        await writer.drain()


class SocksProxy:
    """A loopback SOCKS5 proxy (standard library only), written from RFC 1928 (CONNECT,
    IPv4 / domain name / IPv6 addresses) and RFC 1929 (username/password). ``seen`` lists
    (host, port, authorized) per connection asked for; a domain name arrives as text
    (``socks5h``: the proxy resolves it)."""

    def __init__(self, credentials: tuple[str, str] | None = None) -> None:
        self.credentials = credentials
        self.seen: list[tuple[str, int, bool]] = []
        self.port = 0
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True, name="socks-proxy")
        self._server: asyncio.AbstractServer | None = None

    def url(self, scheme: str = "socks5") -> str:
        auth = ":".join(self.credentials) + "@" if self.credentials else ""
        return f"{scheme}://{auth}127.0.0.1:{self.port}"

    def __enter__(self) -> SocksProxy:
        self._thread.start()
        if not self._ready.wait(10):
            raise RuntimeError("the proxy did not start")
        return self

    def __exit__(self, *exc: object) -> None:
        async def close() -> None:
            if self._server is not None:
                self._server.close()
            tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

        asyncio.run_coroutine_threadsafe(close(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)

        async def listen() -> None:
            self._server = await asyncio.start_server(self._client, "127.0.0.1", 0)
            self.port = self._server.sockets[0].getsockname()[1]
            self._ready.set()

        self._loop.run_until_complete(listen())
        self._loop.run_forever()

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            with contextlib.suppress(asyncio.IncompleteReadError, ConnectionError):
                allowed = await self._greet(reader, writer)
                if allowed is None:
                    return
                await self._connect(reader, writer, allowed)
        finally:
            writer.close()

    async def _greet(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> bool | None:
        version, count = await reader.readexactly(2)
        methods = await reader.readexactly(count)
        if version != 5:
            return None
        if self.credentials is None:
            writer.write(b"\x05\x00")
            return True
        if 2 not in methods:
            writer.write(b"\x05\xff")  # no acceptable method
            return None
        writer.write(b"\x05\x02")
        _, size = await reader.readexactly(2)
        user = (await reader.readexactly(size)).decode()
        (size,) = await reader.readexactly(1)
        password = (await reader.readexactly(size)).decode()
        allowed = (user, password) == self.credentials
        writer.write(b"\x01\x00" if allowed else b"\x01\x01")
        return allowed or None

    async def _connect(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, allowed: bool
    ) -> None:
        _, command, _, kind = await reader.readexactly(4)
        if kind == 1:
            host = ".".join(str(b) for b in await reader.readexactly(4))
        elif kind == 3:
            (size,) = await reader.readexactly(1)
            host = (await reader.readexactly(size)).decode()
        else:
            raw = await reader.readexactly(16)
            host = ":".join(raw[i : i + 2].hex() for i in range(0, 16, 2))
        port = int.from_bytes(await reader.readexactly(2), "big")
        self.seen.append((host, port, allowed))
        if command != 1:
            writer.write(b"\x05\x07\x00\x01" + bytes(6))  # command not supported
            return
        up_reader, up_writer = await asyncio.open_connection(host, port)
        writer.write(b"\x05\x00\x00\x01" + bytes(4) + b"\x00\x00")
        await writer.drain()

        async def pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
            with contextlib.suppress(ConnectionError, asyncio.CancelledError):
                while data := await src.read(65536):
                    dst.write(data)
                    await dst.drain()
            with contextlib.suppress(OSError):
                dst.write_eof()

        await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))
        up_writer.close()
