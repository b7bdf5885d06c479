"""The one tool the agent gets."""

from __future__ import annotations

from agents import function_tool


@function_tool
def multiply(a: float, b: float) -> float:
    """Multiply a by b."""
    return a * b
