"""``create_app(agent_loop)``: what user modules call at import time (``app = create_app(…)``).

It must be cheap and must not start anything: it returns a description of the
server that ``osmosis serve`` (or :meth:`AgentLoopApp.serve`) runs.
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
