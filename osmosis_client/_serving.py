"""Serving aiohttp apps to a network that may be hostile: slow clients are cut off.

aiohttp waits for a request's headers for as long as a client keeps trickling
them (a byte a second keeps a connection, and its memory, forever), and so does
a body read. :class:`SlowClientGuard` bounds both:

- a connection must deliver a request's headers within ``header_timeout`` of its
  first byte (or of the connection opening), else it is closed;
- handlers read bodies through :meth:`SlowClientGuard.read_body`, which gives up
  after ``body_timeout`` (the caller answers 408).

It wraps the server's protocol factory (every byte still goes to aiohttp's own
parser) and needs its middleware to know when a request is being handled.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import weakref
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from aiohttp import web

logger = logging.getLogger("osmosis_client.serve")

HEADER_TIMEOUT = 10.0
BODY_TIMEOUT = 60.0
IDLE_TIMEOUT = 75.0  # a kept-alive connection with nothing to say is closed


class _Guarded(asyncio.Protocol):
    """Delegates everything to aiohttp's protocol; notes when bytes are waiting."""

    def __init__(self, inner: Any, guard: SlowClientGuard) -> None:
        self.inner = inner
        self.guard = guard
        self.transport: asyncio.BaseTransport | None = None
        self.handling = 0
        self.waiting_since: float | None = None  # bytes of a request not yet handled
        self.idle_since: float | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport
        self.waiting_since = self.guard.now()
        self.guard.connections[transport] = self
        self.inner.connection_made(transport)

    def data_received(self, data: bytes) -> None:
        if not self.handling and self.waiting_since is None:
            self.waiting_since = self.guard.now()
        self.idle_since = None
        self.inner.data_received(data)

    def eof_received(self) -> bool | None:
        return self.inner.eof_received()  # type: ignore[no-any-return]

    def connection_lost(self, exc: Exception | None) -> None:
        if self.transport is not None:
            self.guard.connections.pop(self.transport, None)
        self.inner.connection_lost(exc)

    def pause_writing(self) -> None:
        self.inner.pause_writing()

    def resume_writing(self) -> None:
        self.inner.resume_writing()


class SlowClientGuard:
    def __init__(
        self,
        *,
        header_timeout: float = HEADER_TIMEOUT,
        body_timeout: float = BODY_TIMEOUT,
        idle_timeout: float = IDLE_TIMEOUT,
        sweep_every: float = 0.5,
    ) -> None:
        self.header_timeout = header_timeout
        self.body_timeout = body_timeout
        self.idle_timeout = idle_timeout
        self.sweep_every = sweep_every
        self.connections: weakref.WeakKeyDictionary[asyncio.BaseTransport, _Guarded] = (
            weakref.WeakKeyDictionary()
        )
        self.closed_slow = 0
        self._sweeper: asyncio.Task[None] | None = None

    def now(self) -> float:
        return asyncio.get_running_loop().time()

    def wrap(self, factory: Callable[[], Any]) -> Callable[[], asyncio.Protocol]:
        """A protocol factory for ``loop.create_server`` around aiohttp's ``web.Server``."""
        return lambda: _Guarded(factory(), self)

    def middleware(self) -> Any:
        from aiohttp import web

        @web.middleware
        async def mark_handling(
            request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
        ) -> web.StreamResponse:
            guarded = self.connections.get(request.transport) if request.transport else None
            if guarded is not None:
                guarded.handling += 1
                guarded.waiting_since = None
            try:
                return await handler(request)
            finally:
                if guarded is not None:
                    guarded.handling -= 1
                    if not guarded.handling:
                        guarded.idle_since = self.now()

        return mark_handling

    async def read_body(self, request: web.Request) -> bytes | None:
        """The whole body, or None when it did not arrive within ``body_timeout``."""
        try:
            return await asyncio.wait_for(request.read(), self.body_timeout)
        except asyncio.TimeoutError:
            self.closed_slow += 1
            return None

    def start(self) -> None:
        if self._sweeper is None:
            self._sweeper = asyncio.ensure_future(self._sweep())

    async def stop(self) -> None:
        if self._sweeper is not None:
            self._sweeper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._sweeper
            self._sweeper = None

    async def _sweep(self) -> None:
        while True:
            await asyncio.sleep(self.sweep_every)
            now = self.now()
            for transport, guarded in list(self.connections.items()):
                if guarded.handling:
                    continue
                slow = (
                    guarded.waiting_since is not None
                    and now - guarded.waiting_since > self.header_timeout
                )
                idle = (
                    guarded.idle_since is not None and now - guarded.idle_since > self.idle_timeout
                )
                if slow or idle:
                    if slow:
                        self.closed_slow += 1
                        logger.debug("closing a connection whose request did not arrive in time")
                    self.connections.pop(transport, None)
                    transport.close()
