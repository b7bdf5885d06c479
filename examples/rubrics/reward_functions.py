"""Reward functions written for the published Osmosis SDK: only the import changed.

PYTHONPATH=. python examples/rubrics/reward_functions.py
"""

from __future__ import annotations

from osmosis_client.rewards import osmosis_reward


@osmosis_reward
def case_insensitive_match(solution_str: str, ground_truth: str, extra_info: dict = None) -> float:
    """Case-insensitive string matching with partial credit."""
    match = solution_str.lower().strip() == ground_truth.lower().strip()
    if extra_info and extra_info.get("partial_credit") and not match:
        if abs(len(solution_str) - len(ground_truth)) <= 2:
            return 0.5
    return 1.0 if match else 0.0


@osmosis_reward
def numeric_tolerance(solution_str: str, ground_truth: str, extra_info: dict = None) -> float:
    """Numeric comparison with configurable tolerance."""
    try:
        tolerance = extra_info.get("tolerance", 0.01) if extra_info else 0.01
        return 1.0 if abs(float(solution_str) - float(ground_truth)) <= tolerance else 0.0
    except ValueError:
        return 0.0


if __name__ == "__main__":
    print(case_insensitive_match("Paris", "paris"))
    print(numeric_tolerance("3.14159", "3.14", {"tolerance": 0.01}))
