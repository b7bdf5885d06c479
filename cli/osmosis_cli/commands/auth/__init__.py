"""``osmosis login``, ``logout`` and ``whoami``: device-flow (or token) login, per-workspace
credentials, revocation."""

from __future__ import annotations

from osmosis_cli.commands.auth.login import register

__all__ = ["register"]
