"""Rewards and rubrics: ``@osmosis_reward``, ``@osmosis_rubric``, ``evaluate_rubric`` and
rubric config files — the published SDK's surface."""

from __future__ import annotations

from osmosis_client.rewards.decorators import (
    osmosis_reward,
    osmosis_rubric,
    rubric_model_info,
    validate_rubric_extra_info,
)
from osmosis_client.rewards.rubric import RubricResult, aevaluate_rubric, evaluate_rubric

__all__ = [
    "RubricResult",
    "aevaluate_rubric",
    "evaluate_rubric",
    "osmosis_reward",
    "osmosis_rubric",
    "rubric_model_info",
    "validate_rubric_extra_info",
]
