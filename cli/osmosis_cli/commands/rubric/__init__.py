"""Rubric scoring from the command line: ``osmosis eval rubric``, ``osmosis eval-rubric``
and ``osmosis preview`` (the published 0.2 commands)."""

from __future__ import annotations

from osmosis_cli.commands.rubric.rubric import register, register_eval

__all__ = ["register", "register_eval"]
