"""What users' rollout code implements: ``AgentWorkflow`` and ``Grader`` with their contexts.

    class MathWorkflow(AgentWorkflow):
        async def run(self, ctx: AgentWorkflowContext):
            reply = await ctx.chat(ctx.prompt, temperature=0.0)
            return [*ctx.prompt, reply]

    class ExactMatch(Grader):
        async def grade(self, ctx: GraderContext) -> float:
            return 1.0 if ctx.solution_str.strip() == (ctx.ground_truth or "").strip() else 0.0

Names follow the platform's published SDK so rollouts port with an import change.
Sync ``def run`` / ``def grade`` are accepted too (the runner calls them in a thread).
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable, Mapping, Sequence
from types import MappingProxyType
from typing import Any

Message = dict[str, Any]
#: the runner's model call: (messages, params) -> (assistant message, tokens used)
ChatFn = Callable[[Sequence[Message], dict[str, Any]], Awaitable[tuple[Message, int]]]


class AgentWorkflowContext:
    """What a workflow sees of one attempt. ``ground_truth`` is deliberately absent."""

    __slots__ = (
        "_chat",
        "api_key",
        "base_url",
        "config",
        "messages",
        "metadata",
        "model",
        "prompt",
        "row_index",
        "run_index",
        "tokens",
    )

    def __init__(
        self,
        *,
        prompt: list[Message],
        metadata: Mapping[str, Any],
        config: Mapping[str, Any],
        row_index: int,
        run_index: int,
        chat: ChatFn,
        model: str,
        base_url: str | None,
        api_key: str | None,
    ) -> None:
        self.prompt = prompt
        self.metadata: Mapping[str, Any] = MappingProxyType(
            dict(metadata) if not isinstance(metadata, dict) else metadata
        )
        self.config = config
        self.row_index = row_index
        self.run_index = run_index
        self.model = model
        self.base_url = base_url
        self.api_key = api_key
        self._chat = chat
        #: the latest conversation recorded by :meth:`chat` (messages sent + reply)
        self.messages: list[Message] = list(prompt)
        #: tokens reported by every :meth:`chat` call of this attempt
        self.tokens = 0

    async def chat(self, messages: Sequence[Message], **params: Any) -> Message:
        """Call the configured model; every chat-completions parameter passes through.

        Returns the assistant message (a dict) and records the exchange and its usage.
        """
        reply, tokens = await self._chat(messages, params)
        self.tokens += tokens
        self.messages = [*messages, reply]
        return reply

    def add_tokens(self, tokens: int) -> None:
        """Count tokens used by an agent framework that calls the model itself."""
        self.tokens += int(tokens)

    def __repr__(self) -> str:
        return (
            f"AgentWorkflowContext(row_index={self.row_index}, run_index={self.run_index}, "
            f"model={self.model!r})"
        )


class GraderContext:
    """What a grader sees: the final conversation and the row's ground truth."""

    __slots__ = (
        "ground_truth",
        "messages",
        "metadata",
        "reward",
        "row_index",
        "run_index",
        "solution_str",
    )

    def __init__(
        self,
        *,
        messages: list[Message],
        ground_truth: str | None,
        metadata: Mapping[str, Any],
        row_index: int,
        run_index: int,
        raw: bool = False,
    ) -> None:
        self.messages = messages
        self.solution_str = last_assistant_content(messages, raw=raw)
        self.ground_truth = ground_truth
        self.metadata: Mapping[str, Any] = MappingProxyType(
            dict(metadata) if not isinstance(metadata, dict) else metadata
        )
        self.row_index = row_index
        self.run_index = run_index
        self.reward: float | None = None

    def set_reward(self, value: float) -> None:
        """An alternative to returning the score from ``grade``."""
        self.reward = check_score(value)


class AgentWorkflow:
    """Subclass and implement ``async def run(self, ctx)`` (or a sync ``def run``)."""

    async def run(self, ctx: AgentWorkflowContext) -> list[Message] | None:
        raise NotImplementedError


class Grader:
    """Subclass and implement ``async def grade(self, ctx) -> float`` (or sync)."""

    async def grade(self, ctx: GraderContext) -> float | None:
        raise NotImplementedError


def last_assistant_content(messages: Sequence[Message], *, raw: bool = False) -> str:
    """The text of the last assistant message ("" if none): the answer alone — its
    reasoning travels beside it — or, ``raw``, the reasoning in ``<think>…</think>``
    then the answer."""
    for message in reversed(messages):
        if isinstance(message, Mapping) and message.get("role") == "assistant":
            content = message.get("content")
            if raw:
                from osmosis_client.llm.reasoning import raw_text

                return raw_text(message)
            if isinstance(content, str):
                return content
            if isinstance(content, list):  # content parts
                return "".join(
                    str(part.get("text", "")) for part in content if isinstance(part, Mapping)
                )
            return ""
    return ""


def check_score(value: Any) -> float:
    """A score must be a finite real number (``bool`` excluded)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"a score must be a number, got {type(value).__name__}")
    score = float(value)
    if not math.isfinite(score):
        raise ValueError(f"a score must be finite, got {score}")
    return score
