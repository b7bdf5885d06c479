"""Tokens by kind and the finish reason of every model call, whatever the wire.

Every answer reaches the rest of the package as a chat completion (the Responses API's
and Anthropic's are converted to one), whose ``usage`` follows OpenAI's convention:
``prompt_tokens`` *include* cache reads and writes (``prompt_tokens_details``), and
``completion_tokens`` *include* reasoning (``completion_tokens_details``). DeepSeek's
``prompt_cache_hit_tokens`` and OpenRouter's ``cost`` are read too. :func:`call_usage`
reads one answer; :class:`Usage` adds calls up — totals are sums of calls, never
averages of averages.

:data:`METER` is the attempt being run: the runner sets a :class:`Meter` for each
attempt, and every :class:`~osmosis_client.llm.client.ModelClient` call made on its
behalf — the rollout's, a judge's inside an eval fn — is counted there, by model.
"""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

#: finish reasons of an answer cut short by a length limit (max_tokens, max_output_tokens,
#: the context window); Anthropic's and the Responses API's are mapped to ``length``
TRUNCATED = frozenset({"length", "max_tokens", "max_output_tokens"})

KINDS = (
    "input_tokens",
    "output_tokens",
    "reasoning_tokens",
    "cache_read_tokens",
    "cache_write_tokens",
)


@dataclass(slots=True)
class Usage:
    """Tokens of one or more model calls. ``input_tokens`` include the cache reads and
    writes; ``output_tokens`` include the reasoning (what providers bill as output)."""

    input_tokens: int = 0
    output_tokens: int = 0
    reasoning_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    #: model calls counted, and how many of them were cut by a length limit
    calls: int = 0
    truncated: int = 0
    #: the charge a provider reported itself (OpenRouter's ``usage.cost``), if every
    #: call reported one
    reported_cost: float | None = None

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def add(self, other: Usage) -> None:
        self.input_tokens += other.input_tokens
        self.output_tokens += other.output_tokens
        self.reasoning_tokens += other.reasoning_tokens
        self.cache_read_tokens += other.cache_read_tokens
        self.cache_write_tokens += other.cache_write_tokens
        mine, theirs = self.reported_cost, other.reported_cost
        if self.calls == 0:
            self.reported_cost = theirs
        else:  # a sum only while every call reported its cost
            self.reported_cost = None if mine is None or theirs is None else mine + theirs
        self.calls += other.calls
        self.truncated += other.truncated

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {kind: getattr(self, kind) for kind in KINDS}
        data["calls"] = self.calls
        data["truncated_calls"] = self.truncated
        if self.reported_cost is not None:
            data["reported_cost_usd"] = round(self.reported_cost, 10)
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Usage:
        """The inverse of :meth:`to_json` (counts that are not whole numbers ≥ 0 are 0)."""
        found = {kind: _count(data.get(kind)) for kind in KINDS}
        cost = data.get("reported_cost_usd")
        return cls(
            **found,
            calls=_count(data.get("calls")),
            truncated=_count(data.get("truncated_calls")),
            reported_cost=float(cost) if isinstance(cost, int | float) and cost >= 0 else None,
        )


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def _details(usage: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    found = usage.get(key)
    return found if isinstance(found, Mapping) else {}


def finish_reason(response: Mapping[str, Any]) -> str | None:
    """The first choice's finish reason (None: not given)."""
    choices = response.get("choices")
    if isinstance(choices, list) and choices and isinstance(choices[0], Mapping):
        reason = choices[0].get("finish_reason")
        return reason if isinstance(reason, str) and reason else None
    return None


def call_usage(response: Mapping[str, Any]) -> Usage:
    """One chat completion's usage (a call that reported none counts as a call of 0)."""
    raw = response.get("usage")
    usage: Mapping[str, Any] = raw if isinstance(raw, Mapping) else {}
    prompt = _count(usage.get("prompt_tokens"))
    completion = _count(usage.get("completion_tokens"))
    if not prompt and not completion:  # only a total: counted as it was before (input)
        prompt = _count(usage.get("total_tokens"))
    asked = _details(usage, "prompt_tokens_details")
    done = _details(usage, "completion_tokens_details")
    cache_read = _count(asked.get("cached_tokens")) or _count(usage.get("prompt_cache_hit_tokens"))
    cost = usage.get("cost")
    reason = finish_reason(response)
    return Usage(
        input_tokens=prompt,
        output_tokens=completion,
        reasoning_tokens=_count(done.get("reasoning_tokens")),
        cache_read_tokens=min(cache_read, prompt) if prompt else cache_read,
        cache_write_tokens=_count(asked.get("cache_write_tokens")),
        calls=1,
        truncated=1 if reason in TRUNCATED else 0,
        reported_cost=float(cost) if isinstance(cost, int | float) and cost >= 0 else None,
    )


@dataclass
class Meter:
    """The model calls of one attempt, by model (the rollout's and any judge's)."""

    by_model: dict[str, Usage] = field(default_factory=dict)
    #: the last finish reason of each model's calls
    last_finish: dict[str, str] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def add(self, model: str, response: Mapping[str, Any]) -> Usage:
        """Count one answer of ``model``; returns that call's usage."""
        one = call_usage(response)
        reason = finish_reason(response)
        with self._lock:  # a sync eval fn's judge runs on a worker thread
            self.by_model.setdefault(model, Usage()).add(one)
            if reason is not None:
                self.last_finish[model] = reason
        return one

    def total(self) -> Usage:
        found = Usage()
        for usage in self.by_model.values():
            found.add(usage)
        return found


#: the attempt whose model calls are being counted (None: nobody counts)
METER: contextvars.ContextVar[Meter | None] = contextvars.ContextVar("osmosis_meter", default=None)

__all__ = ["KINDS", "METER", "TRUNCATED", "Meter", "Usage", "call_usage", "finish_reason"]
