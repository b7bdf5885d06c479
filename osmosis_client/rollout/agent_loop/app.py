"""``create_app(agent_loop)``: what user modules call at import time (``app = create_app(…)``).

It must be cheap and must not start anything. What it returns is both a description of
the server that ``osmosis serve`` (or :meth:`AgentLoopApp.serve`) runs and a real ASGI
application serving the same routes, for the tools 0.2's docs name: ``uvicorn
server:app``, ``uvicorn.run(app, …)`` under ``python -m server``, FastAPI's
``TestClient(app)``. Options: ``max_concurrent_rollouts``, ``api_key`` (else none: the
routes are open, as 0.2's were), ``debug_dir`` (else ``$ROLLOUT_DEBUG_DIR``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

DEFAULT_MAX_CONCURRENT = 100


@dataclass
class AgentLoopApp:
    agent_loop: Any
    max_concurrent_rollouts: int = DEFAULT_MAX_CONCURRENT
    options: dict[str, Any] = field(default_factory=dict)

    _asgi: Any = field(default=None, init=False, repr=False, compare=False)

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        """The ASGI application (module docstring)."""
        if self._asgi is None:
            import os
            from pathlib import Path

            from osmosis_client.rollout.agent_loop.asgi import AsgiRolloutServer
            from osmosis_client.rollout.agent_loop.server import RolloutServer

            debug = self.options.get("debug_dir") or os.environ.get("ROLLOUT_DEBUG_DIR")
            server = RolloutServer(
                self.agent_loop,
                api_key=self.options.get("api_key"),
                max_concurrent=self.max_concurrent_rollouts,
                debug_dir=Path(debug) if debug else None,
            )
            self._asgi = AsgiRolloutServer(server)
        await self._asgi(scope, receive, send)

    async def serve(self, host: str = "127.0.0.1", port: int = 9000, **kwargs: Any) -> None:
        """Serve until cancelled (``osmosis serve`` adds keys, registration and logs)."""
        from osmosis_client.rollout.agent_loop.server import RolloutServer

        server = RolloutServer(
            self.agent_loop, max_concurrent=self.max_concurrent_rollouts, **kwargs
        )
        await server.serve_forever(host, port)


def create_app(agent_loop: Any, **options: Any) -> AgentLoopApp:
    """Describe a rollout server for ``agent_loop`` (an instance or a class)."""
    limit = options.pop("max_concurrent_rollouts", None) or options.pop("max_concurrent", None)
    loop = agent_loop() if isinstance(agent_loop, type) else agent_loop
    return AgentLoopApp(loop, int(limit or DEFAULT_MAX_CONCURRENT), options)
