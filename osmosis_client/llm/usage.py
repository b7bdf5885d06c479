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
    #: calls whose answer carried no usage at all: their tokens are unknown (never 0)
    unreported: int = 0
    #: calls whose usage was outside any sane range (negative, not a whole number, beyond
    #: :data:`MAX_CALL_TOKENS`, a cost beyond :data:`MAX_CALL_COST`): kept out of every sum
    invalid: int = 0

    @property
    def unknown(self) -> int:
        """Calls whose tokens nobody knows (unreported or invalid): what they cost is
        unknown too."""
        return self.unreported + self.invalid

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
        self.unreported += other.unreported
        self.invalid += other.invalid

    def to_json(self) -> dict[str, Any]:
        """Input and output tokens and calls always; the other kinds when not 0 (a
        journal line per attempt stays short)."""
        data: dict[str, Any] = {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "calls": self.calls,
        }
        if self.reasoning_tokens:
            data["reasoning_tokens"] = self.reasoning_tokens
        if self.cache_read_tokens:
            data["cache_read_tokens"] = self.cache_read_tokens
        if self.cache_write_tokens:
            data["cache_write_tokens"] = self.cache_write_tokens
        if self.truncated:
            data["truncated_calls"] = self.truncated
        if self.reported_cost is not None:
            data["reported_cost_usd"] = round(self.reported_cost, 10)
        if self.unreported:
            data["unreported_calls"] = self.unreported
        if self.invalid:
            data["invalid_calls"] = self.invalid
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Usage:
        """The inverse of :meth:`to_json` (counts that are not whole numbers ≥ 0 are 0)."""
        cost = data.get("reported_cost_usd")
        return cls(
            input_tokens=count_of(data.get("input_tokens")),
            output_tokens=count_of(data.get("output_tokens")),
            reasoning_tokens=count_of(data.get("reasoning_tokens")),
            cache_read_tokens=count_of(data.get("cache_read_tokens")),
            cache_write_tokens=count_of(data.get("cache_write_tokens")),
            calls=count_of(data.get("calls")),
            truncated=count_of(data.get("truncated_calls")),
            reported_cost=_cost(cost),
            unreported=count_of(data.get("unreported_calls")),
            invalid=count_of(data.get("invalid_calls")),
        )


#: the most tokens one call can report and be believed (context windows hold a few
#: million): beyond it a count is a peer's bug or hostility, never summed
MAX_CALL_TOKENS = 1_000_000_000
#: the most one call can cost (USD) and be believed
MAX_CALL_COST = 1_000.0
#: the largest count a document may hold (sums of calls) and still be exact as a float
MAX_COUNT = 2**53


def _cost(value: Any) -> float | None:
    amount = amount_of(value)
    return amount if amount is not None and amount >= 0 else None


def count_of(value: Any) -> int:
    """A token count as written (a whole JSON number ≥ 0 that a float holds exactly), else
    0: whatever a document holds."""
    return value if type(value) is int and 0 < value <= MAX_COUNT else 0


def amount_of(value: Any) -> float | None:
    """A finite number as written (a cost, a rate), else None."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        found = float(value)  # an integer beyond a float's range raises
    except OverflowError:
        return None
    return found if found - found == 0 else None


def finish_reason(response: Mapping[str, Any]) -> str | None:
    """The first choice's finish reason (None: not given)."""
    choices = response.get("choices")
    if isinstance(choices, list) and choices and isinstance(choices[0], Mapping):
        reason = choices[0].get("finish_reason")
        return reason if isinstance(reason, str) and reason else None
    return None


class _Insane(ValueError):
    """A usage value outside any sane range: the call's usage is invalid."""


def _tokens(value: Any) -> int:
    """A call's token count as reported: absent (None) is 0; anything but a whole number
    in [0, MAX_CALL_TOKENS] is insane."""
    if value is None:
        return 0
    if type(value) is not int or not 0 <= value <= MAX_CALL_TOKENS:
        raise _Insane(value)
    return value


def call_usage(response: Mapping[str, Any], reason: str | None = None) -> Usage:
    """One chat completion's usage; ``reason``: its finish reason, when the caller has
    read it already. A call that reported no usage is counted as ``unreported`` and one
    whose usage is outside any sane range as ``invalid`` — never as 0 tokens, never
    summed: what either cost is unknown."""
    raw = response.get("usage")
    found = Usage(calls=1)
    if reason is None:
        reason = finish_reason(response)
    if reason in TRUNCATED:
        found.truncated = 1
    if not isinstance(raw, Mapping) or not raw:
        found.unreported = 1
        return found
    try:
        _read_counts(raw, found)
    except _Insane:
        return Usage(calls=1, truncated=found.truncated, invalid=1)
    return found


def _read_counts(raw: Mapping[str, Any], found: Usage) -> None:
    prompt = _tokens(raw.get("prompt_tokens"))
    completion = _tokens(raw.get("completion_tokens"))
    if not prompt and not completion:  # only a total: counted as it was before (input)
        prompt = _tokens(raw.get("total_tokens"))
    found.input_tokens, found.output_tokens = prompt, completion
    asked = raw.get("prompt_tokens_details")
    if isinstance(asked, Mapping):
        found.cache_read_tokens = min(_tokens(asked.get("cached_tokens")), prompt)
        found.cache_write_tokens = _tokens(asked.get("cache_write_tokens"))
    if not found.cache_read_tokens and "prompt_cache_hit_tokens" in raw:  # DeepSeek
        found.cache_read_tokens = min(_tokens(raw["prompt_cache_hit_tokens"]), prompt)
    done = raw.get("completion_tokens_details")
    if isinstance(done, Mapping):
        found.reasoning_tokens = _tokens(done.get("reasoning_tokens"))
    cost = raw.get("cost")
    if cost is not None:
        amount = amount_of(cost)
        if amount is None or not 0 <= amount <= MAX_CALL_COST:
            raise _Insane(cost)
        found.reported_cost = amount


@dataclass
class Meter:
    """The model calls of one attempt, by model (the rollout's and any judge's)."""

    by_model: dict[str, Usage] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def add(self, model: str, usage: Usage) -> None:
        """Count one call of ``model``."""
        with self._lock:  # a sync eval fn's judge runs on a worker thread
            found = self.by_model.get(model)
            if found is None:
                self.by_model[model] = found = Usage()
            found.add(usage)

    def total(self) -> Usage:
        found = Usage()
        for usage in self.by_model.values():
            found.add(usage)
        return found


#: the attempt whose model calls are being counted (None: nobody counts)
METER: contextvars.ContextVar[Meter | None] = contextvars.ContextVar("osmosis_meter", default=None)
#: set while a caller that counts its own calls (the runner's CallLog) waits for one: the
#: client leaves that call to it (each call counted once, its usage read once)
COUNTED: contextvars.ContextVar[bool] = contextvars.ContextVar("osmosis_counted", default=False)
#: the failed tries of the call being made (``HTTP 503``, an error's name), noted for
#: whoever set a list here — an attempt's call log: its transcript shows three tries
#: and why, not one slow call
TRIES: contextvars.ContextVar[list[str] | None] = contextvars.ContextVar(
    "osmosis_tries", default=None
)

__all__ = [
    "COUNTED",
    "KINDS",
    "MAX_CALL_COST",
    "MAX_CALL_TOKENS",
    "MAX_COUNT",
    "METER",
    "TRIES",
    "TRUNCATED",
    "Meter",
    "Usage",
    "amount_of",
    "call_usage",
    "count_of",
    "finish_reason",
]
