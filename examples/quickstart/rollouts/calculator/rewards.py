"""Eval functions for the seed form (`osmosis eval -m … --eval-fn …`)."""

from __future__ import annotations

import re


def exact_number(
    solution_str: str, ground_truth: str, extra_info: dict | None = None, **kw
) -> float:
    """Simple mode (same signature as @osmosis_reward): the last number must match."""
    numbers = re.findall(r"-?\d+(?:\.\d+)?", solution_str)
    return 1.0 if numbers and float(numbers[-1]) == float(ground_truth) else 0.0


def brevity(messages: list, ground_truth: str, metadata: dict, **kw) -> float:
    """Full mode: rewards short answers."""
    answer = messages[-1].get("content") or ""
    return 1.0 if len(answer) <= 8 else 0.5
