"""A lean HTTP/1.1 client for model endpoints: keep-alive connections, one request at a
time on each, answers parsed as they arrive.

The model call is the runner's hot path. aiohttp's ``ClientSession`` spends ~95 µs of CPU
per request here (URL objects, header multidicts, tracing, cookie filtering, a writer
task per request); this client spends ~40 (docs/benchmarks.md). It speaks what model
endpoints speak and nothing more:

- bodies by ``Content-Length``, ``Transfer-Encoding: chunked`` or until the server
  closes; ``gzip`` / ``deflate`` (zlib or raw) decoded as they arrive;
- answers in any pieces (a head split anywhere, chunks across reads, slow peers);
- TLS with the caller's context (SNI, certificates verified), plain TCP otherwise;
- connections kept alive and reused only after a whole answer was read; an answer left
  unread, cut off or malformed closes its connection; a reused connection that closes
  before any byte of the answer (the server dropped it while idle) is retried once on a
  new one;
- a deadline per request (connect, send and the whole answer) and a cap on connections.

Not spoken: proxies, redirects (a 3xx is a status like any other), HTTP/2, upgrades.
Errors are ``OSError``s (``ConnectionError``, ``TimeoutError``, ``ssl.SSLError``), as
the socket layer raises them.

The response offers the small subset of aiohttp's that :mod:`osmosis_client.llm.answers`
and :func:`osmosis_client._wire.read_body` read (``status``, ``headers.get``,
``content_type``, ``content_length``, ``content.iter_any`` / ``iter_chunked``).
"""

from __future__ import annotations

import asyncio
import base64
import collections
import ssl
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

from osmosis_client.llm.httpwire import BadResponse, Connection, Headers, Stale

__all__ = ["BadResponse", "Headers", "Http11Client", "Response", "Target"]


@dataclass(frozen=True)
class Target:
    """Where a request goes, split once: ``Target.parse(url)``."""

    tls: bool
    host: str
    port: int
    path: str  # with its query
    host_header: str
    #: ``Basic …`` for a URL that carries a user and password (as browsers and aiohttp do)
    basic_auth: str | None = None

    @classmethod
    def parse(cls, url: str) -> Target:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"not an http(s) URL: {url}")
        tls = parts.scheme == "https"
        port = parts.port or (443 if tls else 80)
        host = parts.hostname
        shown = f"[{host}]" if ":" in host else host
        default = port == (443 if tls else 80)
        path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        auth = None
        if parts.username is not None:
            pair = f"{unquote(parts.username)}:{unquote(parts.password or '')}"
            auth = "Basic " + base64.b64encode(pair.encode()).decode()
        return cls(tls, host, port, path, shown if default else f"{shown}:{port}", auth)


class Content:
    """The body of a response, read in pieces (aiohttp's ``StreamReader`` subset)."""

    def __init__(self, response: Response) -> None:
        self._response = response

    async def iter_any(self) -> AsyncIterator[bytes]:
        connection = self._response._connection
        while True:
            data = await connection.piece()
            if not data:
                return
            yield data

    def iter_chunked(self, size: int) -> AsyncIterator[bytes]:
        return self.iter_any()  # pieces are at most what one read delivered


class Response:
    def __init__(
        self,
        connection: Connection,
        timer: asyncio.TimerHandle,
        give_back: Callable[[Connection, bool], None],
    ) -> None:
        self._connection = connection
        self._timer = timer
        self._give_back: Callable[[Connection, bool], None] | None = give_back
        self.status = connection.status
        self.headers = connection.headers
        self.content = Content(self)

    @property
    def content_type(self) -> str:
        return (
            str(self.headers.get("content-type", "application/octet-stream"))
            .split(";")[0]
            .strip()
            .lower()
        )

    @property
    def content_length(self) -> int | None:
        value = self.headers.get("content-length")
        return int(value) if value is not None and value.isdigit() else None

    def release(self) -> None:
        """Done with the answer: its connection is reused when it was read whole."""
        give_back, self._give_back = self._give_back, None
        if give_back is None:
            return  # released already
        self._timer.cancel()
        connection = self._connection
        whole = connection.phase == "done" and not connection.buffer and connection.error is None
        give_back(connection, whole and connection.keep_alive)


class Http11Client:
    """Keep-alive connections to any number of hosts, at most ``limit`` open at once."""

    def __init__(
        self,
        *,
        limit: int,
        ssl_context: ssl.SSLContext | None,
        timeout: float,
        connect_timeout: float = 10.0,
    ) -> None:
        self.limit = max(1, limit)
        self.ssl_context = ssl_context
        self.timeout = timeout
        self.connect_timeout = connect_timeout
        self._idle: dict[tuple[bool, str, int], list[Connection]] = {}
        self._open: set[Connection] = set()
        self._waiters: collections.deque[asyncio.Future[None]] = collections.deque()
        self.closed = False

    async def post(self, target: Target, body: bytes, headers: Mapping[str, str]) -> Response:
        """Send ``body`` and read the answer's head; the body is then read from the
        response, which must be released."""
        head = _request_head(target, headers, len(body))
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.timeout
        for attempt in (1, 2):
            connection = await self._connection(target, loop, deadline, fresh=attempt > 1)
            timer = loop.call_at(deadline, connection.timed_out)
            connection.begin()
            try:
                assert connection.transport is not None
                connection.transport.write(head + body)
                await connection.head()
            except Stale:
                timer.cancel()
                self._release(connection, reusable=False)
                if attempt == 1:
                    continue
                raise ConnectionResetError("the server closed the connection") from None
            except BaseException:
                timer.cancel()
                self._release(connection, reusable=False)
                raise
            return Response(connection, timer, self._release)
        raise AssertionError("unreachable")  # pragma: no cover

    async def _connection(
        self, target: Target, loop: asyncio.AbstractEventLoop, deadline: float, *, fresh: bool
    ) -> Connection:
        key = (target.tls, target.host, target.port)
        while True:
            idle = self._idle.get(key)
            while idle and not fresh:
                connection = idle.pop()
                if connection.alive:
                    connection.reused = True
                    return connection
            if len(self._open) < self.limit:
                return await self._connect(target, key, loop, deadline)
            if not self._close_an_idle_one():
                waiter = loop.create_future()
                self._waiters.append(waiter)
                await waiter

    async def _connect(
        self,
        target: Target,
        key: tuple[bool, str, int],
        loop: asyncio.AbstractEventLoop,
        deadline: float,
    ) -> Connection:
        context = None
        if target.tls:
            context = self.ssl_context or _default_context()
        placeholder = Connection(
            key, self._forget
        )  # holds its place under the limit while connecting
        self._open.add(placeholder)
        seconds = max(0.0, min(self.connect_timeout, deadline - loop.time()))
        try:
            _, connection = await asyncio.wait_for(
                loop.create_connection(
                    lambda: Connection(key, self._forget),
                    target.host,
                    target.port,
                    ssl=context,
                    server_hostname=target.host if context else None,
                ),
                seconds,
            )
        finally:
            self._open.discard(placeholder)
            self._notify()
        if self.closed:
            assert connection.transport is not None
            connection.transport.close()
            raise ConnectionError("the client is closed")
        self._open.add(connection)
        return connection

    def _release(self, connection: Connection, reusable: bool) -> None:
        if reusable and connection.alive and not self.closed:
            connection.phase = "idle"
            self._idle.setdefault(connection.key, []).append(connection)
        else:
            connection.alive = False
            if connection.transport is not None:
                connection.transport.abort()  # never half-read bytes left for later
            self._forget(connection)
        self._notify()

    def _forget(self, connection: Connection) -> None:
        if connection in self._open:
            self._open.discard(connection)
            self._notify()

    def _notify(self) -> None:
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)
                return

    def _close_an_idle_one(self) -> bool:
        """At the cap with idle connections to another host: close one to make room."""
        for connections in self._idle.values():
            while connections:
                connection = connections.pop()
                if connection.alive:
                    self._release(connection, reusable=False)
                    return True
        return False

    async def close(self) -> None:
        self.closed = True
        for connection in list(self._open):
            connection.alive = False
            if connection.transport is not None:
                connection.transport.close()
        self._open.clear()
        self._idle.clear()
        await asyncio.sleep(0)  # let the transports finish closing


def _request_head(target: Target, headers: Mapping[str, str], length: int) -> bytes:
    lines = [f"POST {target.path} HTTP/1.1", f"Host: {target.host_header}"]
    if target.basic_auth and not any(k.lower() == "authorization" for k in headers):
        lines.append(f"Authorization: {target.basic_auth}")
    for name, value in headers.items():
        line = f"{name}: {value}"
        if "\r" in line or "\n" in line:
            raise ValueError(f"the header {name!r} holds a line break")
        lines.append(line)
    lines.append(f"Accept-Encoding: gzip, deflate\r\nContent-Length: {length}\r\n\r\n")
    return "\r\n".join(lines).encode()


_context: list[ssl.SSLContext] = []


def _default_context() -> ssl.SSLContext:
    """The verifying default (built once: it reads the system's certificates)."""
    if not _context:
        _context.append(ssl.create_default_context())
    return _context[0]
