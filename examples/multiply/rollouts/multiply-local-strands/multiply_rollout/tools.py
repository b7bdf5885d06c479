"""The one tool the agent gets."""

from __future__ import annotations

from strands import tool


@tool
def multiply(a: float, b: float) -> float:
    """Multiply a by b.

    Args:
        a: the first factor
        b: the second factor
    """
    return a * b
