"""Reward 1 when the last '#### <number>' the agent wrote is the product (to 0.01)."""

from __future__ import annotations

import re
from typing import Any

from osmosis_ai.rollout.context import GraderContext
from osmosis_ai.rollout.grader import Grader

ANSWER = re.compile(r"####\s*([-+]?\d[\d,]*\.?\d*(?:[eE][-+]?\d+)?)")


def text_of(message: Any) -> str:
    """The text of a chat message or a Strands message (content blocks)."""
    if not isinstance(message, dict):
        return ""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return ""


def answer_of(messages: list[Any]) -> float | None:
    for message in reversed(messages):
        if isinstance(message, dict) and message.get("role") not in (None, "assistant"):
            continue
        found = ANSWER.findall(text_of(message))
        if found:
            try:
                return float(found[-1].replace(",", ""))
            except ValueError:
                return None
    return None


class ProductGrader(Grader):
    async def grade(self, ctx: GraderContext) -> None:
        got = answer_of(list(ctx.sample.messages)) if ctx.sample else None
        try:
            expected = float(ctx.label or "")
        except ValueError:
            expected = None
        ok = got is not None and expected is not None and abs(got - expected) < 1e-2
        ctx.set_reward(1.0 if ok else 0.0)
