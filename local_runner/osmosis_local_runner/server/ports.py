"""Where the server-mode pieces listen, when the user fixes it."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Ports:
    """Fixed ports: ``--listener-port`` (the model bridge), ``--advertise-url`` (how a
    rollout in a container or sandbox reaches it), ``--rollout-port`` (the server)."""

    listener: int = 0
    advertise_url: str | None = None
    rollout: int = 0
