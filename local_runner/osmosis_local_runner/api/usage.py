"""What a run's model calls used, as ``EvalResult.summary.usage`` gives it: typed totals
and their spread over the attempts (docs/models.md#tokens-truncation-and-cost)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from osmosis_client.llm.usage import count_of


def number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


@dataclass(frozen=True)
class Spread:
    """A per-attempt distribution: mean, median, 95th percentile."""

    mean: float
    p50: float
    p95: float


@dataclass(frozen=True)
class UsageSummary:
    """What a run's model calls used (docs/models.md#tokens-truncation-and-cost):
    totals are sums of calls; ``cost_usd`` is None when a price was not known."""

    input_tokens: int
    output_tokens: int
    reasoning_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int
    calls: int
    attempts: int
    truncated: int  # attempts cut by a length limit or their token budget
    cost_usd: float | None
    #: ``output_tokens``, ``reasoning_tokens``, ``input_tokens``, ``total_tokens``,
    #: ``cost_usd`` → their spread over the attempts
    per_attempt: dict[str, Spread] = field(default_factory=dict)
    #: model → its own totals, when the run called more than one (a judge apart)
    by_model: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: calls answered from the call cache or a replayed run (no call made, $0) and their
    #: tokens — never in the totals above (docs/cache.md)
    cached_calls: int = 0
    cached_tokens: int = 0

    @property
    def truncation_rate(self) -> float:
        return self.truncated / self.attempts if self.attempts else 0.0

    @classmethod
    def of(cls, raw: Any) -> UsageSummary | None:
        if not isinstance(raw, dict):
            return None

        def count(key: str) -> int:
            return count_of(raw.get(key))

        spreads: dict[str, Spread] = {}
        given = raw.get("per_attempt")
        for key, found in given.items() if isinstance(given, dict) else ():
            values = (
                [number(found.get(s)) for s in ("mean", "p50", "p95")]
                if isinstance(found, dict)
                else []
            )
            if len(values) == 3 and all(v is not None for v in values):
                spreads[str(key)] = Spread(*values)  # type: ignore[arg-type]
        models = raw.get("by_model")
        return cls(
            **{
                k: count(k)
                for k in (
                    "input_tokens",
                    "output_tokens",
                    "reasoning_tokens",
                    "cache_read_tokens",
                    "cache_write_tokens",
                    "calls",
                    "attempts",
                    "truncated",
                    "cached_calls",
                    "cached_tokens",
                )
            },
            cost_usd=number(raw.get("cost_usd")),
            per_attempt=spreads,
            by_model={str(k): dict(v) for k, v in models.items() if isinstance(v, dict)}
            if isinstance(models, dict)
            else {},
        )


__all__ = ["Spread", "UsageSummary", "number"]
