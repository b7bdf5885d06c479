"""An agent loop's rollout server as an ASGI application, so 0.2 code runs under the
standard tools its docs name: ``uvicorn server:app``, ``python -m server`` (a module that
calls ``uvicorn.run(app, …)``), and FastAPI's ``TestClient(app)`` in pytest.

The routes and their behaviour are :class:`RolloutServer`'s — the same object answers
``osmosis serve`` over aiohttp — so the two never drift apart. The ASGI server (uvicorn)
brings its own protection against slow clients; bodies are capped here as there.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from osmosis_client.rollout.agent_loop.server import MAX_REQUEST, RolloutServer

logger = logging.getLogger("osmosis_client.serve")

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]


class AsgiRolloutServer:
    """``await app(scope, receive, send)``: HTTP requests and the lifespan protocol."""

    def __init__(self, server: RolloutServer) -> None:
        self.server = server

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
        elif scope["type"] == "http":
            await self._http(scope, receive, send)
        # websockets: not part of the protocol; returning closes them

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await self.server.stop()  # running rollouts cancelled, the client closed
                await send({"type": "lifespan.shutdown.complete"})
                return

    async def _http(self, scope: Scope, receive: Receive, send: Send) -> None:
        body = await _body(receive)
        method = str(scope.get("method", "GET")).upper()
        if body is None:
            reply: tuple[int, dict[str, Any], dict[str, str]] = (
                413,
                {"detail": f"the body is larger than {MAX_REQUEST >> 20} MiB"},
                {},
            )
        else:
            headers = {
                k.decode("latin-1").lower(): v.decode("latin-1")
                for k, v in scope.get("headers", [])
            }
            try:
                reply = await self.server.dispatch(method, scope.get("path", "/"), headers, body)
            except Exception as exc:  # a one-line 500, never a traceback
                logger.warning("%s %s failed: %s", method, scope.get("path"), type(exc).__name__)
                reply = (500, {"detail": "Internal Server Error"}, {})
        status, payload, extra = reply
        data = json.dumps(payload).encode()
        head = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(data))]
        head += [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in extra.items()]
        await send({"type": "http.response.start", "status": status, "headers": head})
        await send({"type": "http.response.body", "body": b"" if method == "HEAD" else data})


async def _body(receive: Receive) -> bytes | None:
    """The whole request body, or None past the cap."""
    parts: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            break
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > MAX_REQUEST:
            return None
        parts.append(chunk)
        if not message.get("more_body", False):
            break
    return b"".join(parts)
