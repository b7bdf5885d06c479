"""HTTP/1.1 answers parsed as they arrive, for :mod:`osmosis_client.llm.http11`.

One :class:`Connection` per kept-alive socket: it parses the head (interim 1xx answers
skipped), then the body by ``Content-Length``, ``Transfer-Encoding: chunked`` or until
the server closes, decoding ``gzip`` / ``deflate`` (zlib or raw) as pieces arrive, in
whatever pieces the network delivers them. A reader waits for the head, then takes the
body piece by piece; reading pauses while a megabyte of decoded body waits unread.
"""

from __future__ import annotations

import asyncio
import collections
import zlib
from collections.abc import Callable
from typing import Any

MAX_HEAD = 64 << 10  # a response head larger than this is not an HTTP answer
PAUSE_AT = 1 << 20  # stop reading the socket while this much decoded body waits unread


class BadResponse(ConnectionError):
    """The peer's bytes are not an HTTP/1.1 answer."""


class Stale(ConnectionError):
    """A reused connection closed before any byte of the answer arrived."""


class Headers(dict[str, str]):
    """Response headers by lower-case name (repeated ones joined with ``", "``)."""

    def get(self, name: str, default: Any = None) -> Any:
        return super().get(name.lower(), default)


def _decoder(encoding: str) -> Any:
    if encoding in ("", "identity"):
        return None
    if encoding in ("gzip", "x-gzip"):
        return zlib.decompressobj(16 + zlib.MAX_WBITS)
    if encoding == "deflate":
        return _Deflate()
    raise BadResponse(f"unsupported Content-Encoding {encoding!r}")


class _Deflate:
    """``deflate`` as servers send it: zlib-wrapped, or raw."""

    def __init__(self) -> None:
        self._inner: Any = None
        self._first = b""

    def decompress(self, data: bytes) -> bytes:
        if self._inner is None:
            self._first += data
            if len(self._first) < 2:
                return b""
            wrapped = (self._first[0] & 0x0F) == 8 and int.from_bytes(
                self._first[:2], "big"
            ) % 31 == 0
            self._inner = zlib.decompressobj(zlib.MAX_WBITS if wrapped else -zlib.MAX_WBITS)
            data, self._first = self._first, b""
        return bytes(self._inner.decompress(data))

    def flush(self) -> bytes:
        if self._inner is None:
            return b""
        return bytes(self._inner.flush())


class Connection(asyncio.Protocol):
    """One keep-alive connection: parses the answer to the request in flight."""

    def __init__(self, key: tuple[bool, str, int], on_lost: Callable[[Connection], None]) -> None:
        self.key = key
        self._on_lost = on_lost
        self.transport: asyncio.Transport | None = None
        self.reused = False
        self.alive = True
        self._reset()

    def begin(self) -> None:
        """A request was sent: parse its answer."""
        self._reset()
        self.phase = "head"

    def _reset(self) -> None:
        self.buffer = bytearray()
        self.phase = "idle"  # idle → head → body → done
        self.status = 0
        self.headers = Headers()
        self.keep_alive = True
        self.mode = ""  # "length" | "chunked" | "close" | ""(no body)
        self.remaining = 0
        self.chunk_state = "size"  # size → data → crlf → … → trailers
        self.decoder: Any = None
        self.pieces: collections.deque[bytes] = collections.deque()
        self.queued = 0
        self.paused = False
        self.error: BaseException | None = None
        self.waiter: asyncio.Future[None] | None = None
        self.got_bytes = False

    # ------------------------------------------------------------ protocol

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        if self.phase in ("idle", "done"):
            self._fail(BadResponse("the server sent bytes nobody asked for"))
            return
        self.got_bytes = True
        self.buffer += data
        try:
            self._parse()
        except BadResponse as exc:
            self._fail(exc)

    def eof_received(self) -> bool:
        return False  # close our side too

    def connection_lost(self, exc: Exception | None) -> None:
        self.alive = False
        self._on_lost(self)
        if self.phase == "body" and self.mode == "close" and exc is None:
            self._finish()
            return
        if self.phase in ("head", "body"):
            if not self.got_bytes and self.reused:
                self._fail(Stale("the server closed a kept-alive connection"))
            else:
                reason = f" ({exc})" if exc else ""
                self._fail(exc or ConnectionResetError(f"the server closed the connection{reason}"))

    # ------------------------------------------------------------ parsing

    def _parse(self) -> None:
        while self.buffer:
            if self.phase == "head":
                if not self._parse_head():
                    return
            elif self.phase == "body":
                if not self._parse_body():
                    return
            else:
                raise BadResponse("the server sent more than one answer")

    def _parse_head(self) -> bool:
        end = self.buffer.find(b"\r\n\r\n")
        if end < 0:
            if len(self.buffer) > MAX_HEAD:
                raise BadResponse("the answer's head is too large")
            return False
        lines = bytes(self.buffer[:end]).decode("latin-1").split("\r\n")
        del self.buffer[: end + 4]
        version, _, rest = lines[0].partition(" ")
        code = rest[:3]
        if not version.startswith("HTTP/1.") or not code.isdigit():
            raise BadResponse(f"not an HTTP/1.1 answer: {lines[0][:60]!r}")
        status = int(code)
        if 100 <= status < 200:
            return True  # an interim answer (100 Continue): the real one follows
        headers = self.headers
        for line in lines[1:]:
            name, colon, value = line.partition(":")
            if not colon:
                raise BadResponse("a malformed header line")
            name, value = name.strip().lower(), value.strip()
            headers[name] = f"{headers[name]}, {value}" if name in headers else value
        self.status = status
        connection = headers.get("connection", "").lower()
        self.keep_alive = "close" not in connection and (
            version == "HTTP/1.1" or "keep-alive" in connection
        )
        self._body_mode(headers)
        self.phase = "body"
        if not self.mode:
            self._finish()
        self._wake()
        return True

    def _body_mode(self, headers: Headers) -> None:
        self.decoder = _decoder(headers.get("content-encoding", "").strip().lower())
        if self.status in (204, 304):
            self.mode = ""
        elif "chunked" in headers.get("transfer-encoding", "").lower():
            self.mode = "chunked"
        elif "content-length" in headers:
            try:
                self.remaining = int(headers["content-length"])
            except ValueError:
                raise BadResponse("a malformed Content-Length") from None
            self.mode = "length" if self.remaining > 0 else ""
        else:
            self.mode, self.keep_alive = "close", False

    def _parse_body(self) -> bool:
        if self.mode == "length":
            take = bytes(self.buffer[: self.remaining])
            del self.buffer[: len(take)]
            self.remaining -= len(take)
            self._deliver(take)
            if self.remaining == 0:
                self._finish()
            return False if not self.buffer else self.phase == "body"
        if self.mode == "close":
            data = bytes(self.buffer)
            self.buffer.clear()
            self._deliver(data)
            return False
        return self._parse_chunk()

    def _parse_chunk(self) -> bool:
        if self.chunk_state in ("size", "crlf", "trailers"):
            end = self.buffer.find(b"\r\n")
            if end < 0:
                if len(self.buffer) > MAX_HEAD:
                    raise BadResponse("a malformed chunk")
                return False
            line = bytes(self.buffer[:end])
            del self.buffer[: end + 2]
            if self.chunk_state == "crlf":
                if line:
                    raise BadResponse("a chunk longer than its size")
                self.chunk_state = "size"
            elif self.chunk_state == "trailers":
                if not line:
                    self._finish()
            else:
                try:
                    self.remaining = int(line.split(b";", 1)[0].strip(), 16)
                except ValueError:
                    raise BadResponse("a malformed chunk size") from None
                self.chunk_state = "data" if self.remaining else "trailers"
            return True
        take = bytes(self.buffer[: self.remaining])
        del self.buffer[: len(take)]
        self.remaining -= len(take)
        self._deliver(take)
        if self.remaining == 0:
            self.chunk_state = "crlf"
        return bool(self.buffer)

    def _deliver(self, data: bytes) -> None:
        if self.decoder is not None and data:
            try:
                data = self.decoder.decompress(data)
            except zlib.error as exc:
                raise BadResponse(f"a body that does not decompress ({exc})") from None
        if data:
            self.pieces.append(data)
            self.queued += len(data)
            if self.queued > PAUSE_AT and not self.paused and self.transport is not None:
                self.paused = True
                self.transport.pause_reading()
            self._wake()

    def _finish(self) -> None:
        if self.decoder is not None:
            try:
                tail = self.decoder.flush()
            except zlib.error as exc:
                self._fail(BadResponse(f"a body that does not decompress ({exc})"))
                return
            if tail:
                self.pieces.append(tail)
        self.phase = "done"
        self._wake()

    def _fail(self, exc: BaseException) -> None:
        if self.error is None:
            self.error = exc
        self.keep_alive = False
        if self.transport is not None:
            self.transport.abort()
        self._wake()

    def _wake(self) -> None:
        waiter = self.waiter
        if waiter is not None and not waiter.done():
            self.waiter = None
            waiter.set_result(None)

    async def _wait(self) -> None:
        self.waiter = asyncio.get_running_loop().create_future()
        await self.waiter

    # ------------------------------------------------------------ the request

    async def head(self) -> None:
        while self.phase == "head" and self.error is None:
            await self._wait()
        if self.error is not None:
            raise self.error

    async def piece(self) -> bytes:
        """The next decoded piece of the body; ``b""`` at its end."""
        while True:
            if self.pieces:
                data = self.pieces.popleft()
                self.queued -= len(data)
                if self.paused and self.queued <= PAUSE_AT // 2 and self.transport is not None:
                    self.paused = False
                    self.transport.resume_reading()
                return data
            if self.error is not None:
                raise self.error
            if self.phase == "done":
                return b""
            await self._wait()

    def timed_out(self) -> None:
        self._fail(TimeoutError("the model endpoint did not answer in time"))
