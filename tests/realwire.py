"""Peers that behave like real servers: a re-framing proxy to put in front of any double.

Standard library only; it imports nothing from osmosis-client (the rollout server
double runs it inside its own process). Loopback delivers an answer in one read;
a real network does not. Behind a :class:`Proxy`, a double's answers arrive the way
a vLLM box across the network or a gateway behind TLS sends them:

- the head, then the body, in small writes (``piece`` bytes, ``delay`` seconds apart);
- ``Transfer-Encoding: chunked`` with chunk boundaries anywhere (``chunked``);
- ``Content-Encoding: gzip`` or ``deflate`` when the client accepts it (``encoding``);
- streamed answers (server-sent events) re-cut into ``piece``-byte chunks, so events,
  lines and UTF-8 characters split mid-way;
- connections kept alive between requests (``reused`` counts the reuse);
- TLS with a certificate of a private CA (:func:`private_ca`);
- connections that die mid-answer (:meth:`Proxy.kill_next`);
- requests forwarded upstream in pieces too (``request_piece``), for servers under test.
"""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import random
import ssl
import threading
import zlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

HOP = {"connection", "keep-alive", "transfer-encoding", "content-length", "te", "upgrade"}


@dataclass(frozen=True)
class Wire:
    piece: int = 1448  # bytes per write (a TCP segment's payload)
    delay: float = 0.002  # seconds between writes
    chunked: bool = False  # answer with Transfer-Encoding: chunked
    encoding: str | None = None  # "gzip" | "deflate", when the client accepts it
    request_piece: int | None = None  # forward requests upstream in writes this small
    seed: int = 0


@dataclass
class Head:
    first: str  # the request or status line
    headers: list[tuple[str, str]]

    def get(self, name: str) -> str | None:
        for key, value in self.headers:
            if key.lower() == name.lower():
                return value
        return None


def _parse_head(raw: bytes) -> Head:
    lines = raw.decode("latin-1").split("\r\n")
    headers = []
    for line in lines[1:]:
        if line:
            key, _, value = line.partition(":")
            headers.append((key.strip(), value.strip()))
    return Head(lines[0], headers)


async def _body(reader: asyncio.StreamReader, head: Head, *, response: bool) -> bytes:
    """A whole message body (Content-Length, chunked, or - answers only - until EOF)."""
    if (head.get("Transfer-Encoding") or "").lower() == "chunked":
        return b"".join([piece async for piece in _chunks(reader)])
    length = head.get("Content-Length")
    if length is not None:
        return await reader.readexactly(int(length))
    return await reader.read() if response else b""


async def _chunks(reader: asyncio.StreamReader) -> AsyncIterator[bytes]:
    while True:
        size = int((await reader.readuntil(b"\r\n")).split(b";")[0].strip(), 16)
        if size == 0:
            while (await reader.readuntil(b"\r\n")) != b"\r\n":
                pass  # trailers
            return
        data = await reader.readexactly(size)
        await reader.readexactly(2)
        yield data


class Proxy:
    """``with Proxy("http://127.0.0.1:PORT", Wire(...)) as proxy: proxy.url``."""

    def __init__(
        self,
        upstream: str,
        wire: Wire | None = None,
        *,
        tls: ssl.SSLContext | None = None,
        port: int = 0,
    ) -> None:
        parts = urlsplit(upstream)
        self.upstream = (parts.hostname or "127.0.0.1", parts.port or 80)
        self.path_prefix = parts.path.rstrip("/")
        self.wire = wire or Wire()
        self.tls = tls
        self.port = port
        self.connections = 0
        self.requests = 0
        self.reused = 0
        self.killed = 0
        self._kill = 0
        self._kill_path: str | None = None
        self._rng = random.Random(self.wire.seed)
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._run, daemon=True, name="realwire")
        self._ready = threading.Event()
        self._server: asyncio.AbstractServer | None = None

    @property
    def url(self) -> str:
        return f"{'https' if self.tls else 'http'}://127.0.0.1:{self.port}{self.path_prefix}"

    def kill_next(self, count: int = 1, *, path: str | None = None) -> None:
        """The next ``count`` answers (to requests whose target contains ``path``) die
        halfway through their body."""
        self._kill += count
        self._kill_path = path

    # ------------------------------------------------------------ life

    def start(self) -> Proxy:
        self._thread.start()
        if not self._ready.wait(10):
            raise RuntimeError("the proxy did not start")
        return self

    def stop(self) -> None:
        async def close() -> None:
            if self._server is not None:
                self._server.close()
            for task in asyncio.all_tasks():
                if task is not asyncio.current_task():
                    task.cancel()

        with contextlib.suppress(RuntimeError):
            asyncio.run_coroutine_threadsafe(close(), self._loop).result(10)
            self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)

    def __enter__(self) -> Proxy:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def serve_forever(self) -> None:
        """Run in the calling thread (a double's main thread)."""
        self._run()

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)

        async def listen() -> None:
            self._server = await asyncio.start_server(
                self._client, "127.0.0.1", self.port, ssl=self.tls, backlog=512
            )
            self.port = self._server.sockets[0].getsockname()[1]

        self._loop.run_until_complete(listen())
        self._ready.set()
        self._loop.run_forever()

    # ------------------------------------------------------------ one connection

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        served = 0
        try:
            while True:
                try:
                    raw = await reader.readuntil(b"\r\n\r\n")
                    head = _parse_head(raw)
                    body = await _body(reader, head, response=False)
                except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
                    return
                served += 1
                self.requests += 1
                self.reused += served > 1
                version = head.first.rsplit(" ", 1)[-1]
                keep = version == "HTTP/1.1" and (head.get("Connection") or "").lower() != "close"
                if not await self._forward(head, body, writer, keep):
                    return
                if not keep:
                    return
        except (ConnectionError, asyncio.IncompleteReadError, ssl.SSLError, OSError):
            return
        except asyncio.CancelledError:
            return  # the proxy is stopping
        finally:
            with contextlib.suppress(Exception):
                writer.close()

    async def _forward(
        self, head: Head, body: bytes, writer: asyncio.StreamWriter, keep: bool
    ) -> bool:
        """One exchange; False when the connection was killed."""
        method = head.first.split(" ", 1)[0]
        up_reader, up_writer = await asyncio.open_connection(*self.upstream)
        try:
            headers = [(k, v) for k, v in head.headers if k.lower() not in HOP]
            headers = [(k, v) for k, v in headers if k.lower() != "accept-encoding"]
            headers += [("Content-Length", str(len(body))), ("Connection", "close")]
            request = _head_bytes(head.first, headers) + body
            await self._write(up_writer, request, self.wire.request_piece)
            answer = _parse_head(await up_reader.readuntil(b"\r\n\r\n"))
            streamed = (answer.get("Content-Type") or "").startswith("text/event-stream") or (
                answer.get("Content-Length") is None
            )
            status = int(answer.first.split(" ")[1])
            bodiless = method == "HEAD" or status in (204, 304) or status < 200
            accepted = (head.get("Accept-Encoding") or "").lower()
            encoding = self.wire.encoding
            if (
                encoding is None
                or encoding not in accepted
                or answer.get("Content-Encoding")
                or bodiless
            ):
                encoding = None
            target = head.first.split(" ")[1] if " " in head.first else ""
            kill = self._kill > 0 and (self._kill_path is None or self._kill_path in target)
            if kill:
                self._kill -= 1
            out = [(k, v) for k, v in answer.headers if k.lower() not in HOP]
            if encoding:
                out.append(("Content-Encoding", encoding))
            if not keep:
                out.append(("Connection", "close"))
            if bodiless:
                await self._write(
                    writer, _head_bytes(answer.first, [*out, ("Content-Length", "0")])
                )
                return True
            if streamed:
                return await self._stream(up_reader, answer, writer, out, encoding, kill)
            data = await _body(up_reader, answer, response=True)
            if encoding == "gzip":
                data = gzip.compress(data)
            elif encoding == "deflate":
                data = zlib.compress(data)
            if self.wire.chunked:
                framed = self._chunked(data)
                out.append(("Transfer-Encoding", "chunked"))
            else:
                framed = data
                out.append(("Content-Length", str(len(data))))
            await self._write(writer, _head_bytes(answer.first, out))
            if kill:
                await self._write(writer, framed[: max(1, len(framed) // 2)])
                self.killed += 1
                writer.transport.abort()
                return False
            await self._write(writer, framed)
            return True
        finally:
            up_writer.close()

    async def _stream(
        self,
        up_reader: asyncio.StreamReader,
        answer: Head,
        writer: asyncio.StreamWriter,
        out: list[tuple[str, str]],
        encoding: str | None,
        kill: bool,
    ) -> bool:
        """A streamed answer passed on as it comes, re-cut into ``piece``-byte chunks."""
        out.append(("Transfer-Encoding", "chunked"))
        await self._write(writer, _head_bytes(answer.first, out))
        compressor = zlib.compressobj(wbits=31 if encoding == "gzip" else 15) if encoding else None
        sent = 0
        if (answer.get("Transfer-Encoding") or "").lower() == "chunked":
            source = _chunks(up_reader)
        else:
            source = _until_eof(up_reader)
        async for data in source:
            if compressor is not None:
                data = compressor.compress(data) + compressor.flush(zlib.Z_SYNC_FLUSH)
            for start in range(0, len(data), self.wire.piece):
                piece = data[start : start + self.wire.piece]
                await self._write(writer, b"%x\r\n%s\r\n" % (len(piece), piece), None)
                sent += 1
                if kill and sent >= 3:
                    self.killed += 1
                    writer.transport.abort()
                    return False
                await asyncio.sleep(self.wire.delay)
        tail = compressor.flush() if compressor is not None else b""
        if tail:
            await self._write(writer, b"%x\r\n%s\r\n" % (len(tail), tail), None)
        await self._write(writer, b"0\r\n\r\n", None)
        return True

    def _chunked(self, data: bytes) -> bytes:
        """Chunks of random sizes (1 byte up to two pieces), then the last chunk."""
        parts, start = [], 0
        while start < len(data):
            size = self._rng.randint(1, max(1, 2 * self.wire.piece))
            piece = data[start : start + size]
            parts.append(b"%x;ext=1\r\n%s\r\n" % (len(piece), piece))
            start += size
        return b"".join(parts) + b"0\r\n\r\n"

    async def _write(
        self, writer: asyncio.StreamWriter, data: bytes, piece: int | str | None = "wire"
    ) -> None:
        size = self.wire.piece if piece == "wire" else piece
        if not isinstance(size, int) or size <= 0:
            writer.write(data)
            await writer.drain()
            return
        for start in range(0, len(data), size):
            writer.write(data[start : start + size])
            await writer.drain()
            if start + size < len(data):
                await asyncio.sleep(self.wire.delay)


async def _until_eof(reader: asyncio.StreamReader) -> AsyncIterator[bytes]:
    while True:
        data = await reader.read(65536)
        if not data:
            return
        yield data


def _head_bytes(first: str, headers: list[tuple[str, str]]) -> bytes:
    lines = [first, *(f"{k}: {v}" for k, v in headers)]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def private_ca(directory: Path) -> tuple[ssl.SSLContext, Path]:
    """A server context with a certificate for 127.0.0.1/localhost signed by a new private
    CA, and the CA's PEM file (what a client must be told to trust)."""
    import trustme

    ca = trustme.CA()
    cert = ca.issue_cert("127.0.0.1", "localhost")
    server = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    cert.configure_cert(server)
    pem = directory / "private-ca.pem"
    ca.cert_pem.write_to_path(str(pem))
    return server, pem


def from_env(value: str) -> Wire:
    """``piece=7,delay=0.001,chunked=1,encoding=gzip`` (how a double is told its wire)."""
    fields: dict[str, Any] = {}
    for item in value.split(","):
        key, _, raw = item.partition("=")
        key = key.strip()
        if key in ("piece", "request_piece", "seed"):
            fields[key] = int(raw)
        elif key == "delay":
            fields[key] = float(raw)
        elif key == "chunked":
            fields[key] = raw.strip() not in ("", "0", "false")
        elif key == "encoding":
            fields[key] = raw.strip() or None
    return Wire(**fields)
