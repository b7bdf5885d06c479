"""A rollout server's terminal result as the attempt's outcome: the reward, a skipped
sample, or the failure with its category — and the conversation, from the trajectory
the server wrote."""

from __future__ import annotations

import asyncio
import math
import os
from pathlib import Path
from typing import Any

from osmosis_local_runner.run.kinds import Outcome
from osmosis_local_runner.server.protocol import (
    Result,
    read_trajectory,
    sample_messages,
    trajectory_messages,
)

TRAJECTORY_WAITS = 10  # × 50 ms


async def await_trajectory(path: Path) -> None:
    """The server may report success a moment before its trajectory is on disk."""
    for _ in range(TRAJECTORY_WAITS):
        if path.exists():
            return
        await asyncio.sleep(0.05)


def messages_of(
    path: Path, result: Result | None, extra: dict[str, Any], results_dir: Path
) -> list[dict[str, Any]]:
    """The conversation: from the trajectory the server wrote (its path recorded in
    ``extra``), else from the sample's messages."""
    trajectory = read_trajectory(path)
    if trajectory is not None:
        extra["trajectory"] = os.path.relpath(path, results_dir)
        messages = trajectory_messages(trajectory)
        if messages:
            return messages
    return sample_messages(result.sample if result else None) or []


def outcome_of(
    result: Result,
    body: dict[str, Any],
    tokens: int,
    messages: list[dict[str, Any]],
    extra: dict[str, Any],
) -> Outcome:
    """What a terminal result means for the attempt (docs/server-mode.md's table)."""
    if result.status == "success":
        sample = result.sample or {}
        if sample.get("remove_sample"):
            return Outcome(messages, tokens, skipped=True, extra=extra)
        reward = sample.get("reward")
        if (
            not isinstance(reward, int | float)
            or isinstance(reward, bool)
            or not math.isfinite(reward)
        ):
            extra["err_category"] = "agent_error"
            return Outcome(
                messages,
                tokens,
                f"grader: set no finite reward (got {reward!r})"[:1000],
                extra=extra,
            )
        return Outcome(messages, tokens, scores={"grader": float(reward)}, extra=extra)
    category = result.err_category
    extra["err_category"] = category
    if result.status == "cancelled":
        return Outcome(
            messages,
            tokens,
            "the rollout was cancelled on the server",
            transient=True,
            extra=extra,
        )
    message = result.err_message
    if not message:
        if body.get("label") is None and body.get("metadata") is None:
            message = "row has no label or metadata to grade"
        else:
            message = "failed without a message"
    if category == "timeout":  # the category is recorded; the text says "timed out"
        text = message if "timed out" in message.lower() else f"timed out: {message}"
    else:
        text = f"{category}: {message}" if category else message
    return Outcome(
        messages, tokens, text[:1000], transient=category == "lease_expired", extra=extra
    )
