"""``RolloutAgentLoop`` and ``RolloutContext``: the 0.2 agent-loop API.

    class CalculatorLoop(RolloutAgentLoop):
        name = "calculator"

        def get_tools(self, request):
            return TOOLS

        async def run(self, ctx):
            messages = list(ctx.request.messages)
            for _ in range(ctx.request.max_turns):
                result = await ctx.chat(messages)
                messages.append(result.message)
                if not result.has_tool_calls:
                    return ctx.complete(messages)
                ...
            return ctx.complete(messages, finish_reason="max_turns")

The same loop runs in two places: in-process under ``osmosis eval -m`` (model calls
go to the configured model, tools attached) and behind ``osmosis serve`` (model
calls go to the trainer). Both reach the model through ``ctx.llm``.
"""

from __future__ import annotations

import inspect
import json
import time
from abc import ABC, abstractmethod
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar, Protocol

from osmosis_client.rollout.agent_loop.schemas import (
    CompletionsResult,
    RolloutMetrics,
    RolloutRequest,
    RolloutResult,
    RolloutStatus,
    tool_to_dict,
)


class LLMBackend(Protocol):
    """Where ``ctx.chat`` goes: the configured model, or the trainer."""

    async def chat_completions(
        self, messages: list[dict[str, Any]], **params: Any
    ) -> CompletionsResult: ...


class RolloutAgentLoop(ABC):
    """Subclass with a non-empty ``name``, ``get_tools(request)`` and ``async run(ctx)``."""

    name: ClassVar[str] = ""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        abstract = any(
            getattr(getattr(cls, method, None), "__isabstractmethod__", False)
            for method in ("get_tools", "run")
        )
        name = getattr(cls, "name", "")
        if not abstract and not (isinstance(name, str) and name.strip()):
            raise TypeError(
                f"agent loop {cls.__name__} must set a non-empty class attribute `name`"
            )

    @abstractmethod
    def get_tools(self, request: RolloutRequest) -> list[Any]:
        """The tools offered to the model for this rollout (schemas or dicts)."""

    @abstractmethod
    async def run(self, ctx: RolloutContext) -> RolloutResult:
        """Drive the conversation; finish with ``ctx.complete(…)`` or ``ctx.error(…)``."""


class RolloutContext:
    """What ``run`` gets: the request, the tools, the model, metrics and debug events."""

    def __init__(
        self,
        request: RolloutRequest,
        tools: Sequence[dict[str, Any]],
        llm: LLMBackend,
        *,
        debug_dir: Path | None = None,
    ) -> None:
        self.request = request
        self.tools = list(tools)
        self.llm = llm
        self.metrics = RolloutMetrics()
        self._debug_dir = debug_dir
        self._started = time.monotonic()

    @property
    def debug_enabled(self) -> bool:
        return self._debug_dir is not None

    async def chat(self, messages: Sequence[dict[str, Any]], **params: Any) -> CompletionsResult:
        """One model call with the conversation so far; every keyword passes through."""
        started = time.monotonic()
        result = await self.llm.chat_completions(list(messages), **params)
        m = self.metrics
        m.llm_latency_ms += (time.monotonic() - started) * 1000
        m.num_llm_calls += 1
        prompt = _int(result.usage.get("prompt_tokens"))
        completion = _int(result.usage.get("completion_tokens"))
        m.prompt_tokens += prompt
        m.response_tokens += completion
        m.max_context_tokens = max(m.max_context_tokens, prompt + completion)
        return result

    def record_tool_call(self, latency_ms: float = 0.0) -> None:
        self.metrics.num_tool_calls += 1
        self.metrics.tool_latency_ms += float(latency_ms)

    def _finish(self) -> RolloutMetrics:
        self.metrics.total_latency_ms = (time.monotonic() - self._started) * 1000
        return self.metrics

    def complete(
        self,
        final_messages: Sequence[dict[str, Any]],
        finish_reason: str = "stop",
        reward: float | None = None,
    ) -> RolloutResult:
        return RolloutResult(
            status=RolloutStatus.COMPLETED,
            final_messages=list(final_messages),
            finish_reason=finish_reason,
            metrics=self._finish(),
            reward=reward,
        )

    def error(
        self, message: str, final_messages: Sequence[dict[str, Any]] | None = None
    ) -> RolloutResult:
        return RolloutResult(
            status=RolloutStatus.ERROR,
            final_messages=list(final_messages or []),
            finish_reason="error",
            error_message=message,
            metrics=self._finish(),
        )

    def log_event(self, event_type: str, **data: Any) -> None:
        """One JSON line ``{"event", "rollout_id", …data}`` in the debug directory."""
        if self._debug_dir is None:
            return
        line = {"event": event_type, "rollout_id": self.request.rollout_id, **data}
        self._debug_dir.mkdir(parents=True, exist_ok=True)
        path = self._debug_dir / f"{_safe_name(self.request.rollout_id)}.jsonl"
        with path.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(line, default=str) + "\n")


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _safe_name(rollout_id: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in rollout_id)[:200] or "rollout"


def is_agent_loop(value: Any) -> bool:
    """A ``RolloutAgentLoop`` class or instance — ours, or any class named so in its MRO
    (code written against a real osmosis_ai 0.2 installation)."""
    cls = value if inspect.isclass(value) else type(value)
    return any(base.__name__ == "RolloutAgentLoop" for base in inspect.getmro(cls)[1:]) or (
        inspect.isclass(value) and value.__name__ == "RolloutAgentLoop"
    )


async def execute(
    loop: Any,
    request: RolloutRequest,
    llm: LLMBackend,
    *,
    debug_dir: Path | None = None,
    tools: list[dict[str, Any]] | None = None,
) -> RolloutResult:
    """Run one rollout: ``get_tools`` (unless given), then ``run``; a non-result is an error."""
    if tools is None:
        tools = [tool_to_dict(t) for t in loop.get_tools(request)]
    ctx = RolloutContext(request, tools, llm, debug_dir=debug_dir)
    result = await loop.run(ctx)
    if isinstance(result, RolloutResult):
        return result
    if hasattr(result, "model_dump"):  # a RolloutResult of another installation
        return RolloutResult.model_validate(result.model_dump())
    raise TypeError(f"run() must return a RolloutResult, not {type(result).__name__}")
