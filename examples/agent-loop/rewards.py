"""Reward functions written for the published osmosis-ai SDK (unchanged)."""

import re

from osmosis_ai import osmosis_reward


@osmosis_reward
def compute_reward(solution_str: str, ground_truth: str, extra_info: dict = None) -> float:
    """1.0 when the last number in the answer equals the ground truth."""
    numbers = re.findall(r"-?\d+(?:\.\d+)?", solution_str or "")
    if not numbers:
        return 0.0
    return 1.0 if abs(float(numbers[-1]) - float(ground_truth)) < 1e-6 else 0.0


def used_a_tool(messages: list, ground_truth: str, metadata: dict, **kwargs) -> float:
    """Full mode: 1.0 when the loop answered through a tool call."""
    return 1.0 if any(m.get("role") == "tool" for m in messages) else 0.0
