"""Tokens and cost, per attempt and per run.

An attempt's ``usage`` (its record's, the journal's, the document's per-run key) is what
every model call made on its behalf cost — the rollout's and any judge's, counted by
:class:`~osmosis_client.llm.usage.Meter` — plus, from the rollout's own calls, its last
finish reason and whether it was cut by a length limit (``truncated``)::

    {"input_tokens": 812, "output_tokens": 340, "reasoning_tokens": 256,
     "cache_read_tokens": 512, "cache_write_tokens": 0, "calls": 3, "truncated_calls": 0,
     "finish_reason": "stop", "truncated": false, "cost_usd": 0.00123,
     "model": "openai/gpt-5-mini"}          # or, when it called more than one model:
     "by_model": {"openai/gpt-5-mini": {…}, "openai/gpt-5-nano": {…}}

The run's (``summary.usage``) adds attempts up: totals are sums of calls, never averages
of averages; ``per_attempt`` gives each kind's mean, p50 and p95 over the attempts;
``by_model`` the same totals per model when the run called more than one (a judge apart
from the model under test). ``cost_usd`` is null when any call's price is unknown.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

from osmosis_client.llm.prices import PriceTable, costs
from osmosis_client.llm.usage import KINDS, Meter, Usage

#: per-attempt distributions the summary gives
DISTRIBUTIONS = ("input_tokens", "output_tokens", "reasoning_tokens", "total_tokens", "cost_usd")


def attempt_usage(
    meter: Meter,
    rollout: Usage,
    last_finish: str | None,
    prices: PriceTable,
    *,
    capped: bool = False,
) -> dict[str, Any] | None:
    """One attempt's ``usage`` (None: it made no model call). ``rollout``: the usage of
    the rollout's own calls (truncation is theirs, not a judge's)."""
    if not meter.by_model:
        return None
    total = meter.total()
    found = total.to_json()
    found["finish_reason"] = "token_budget" if capped else last_finish
    found["truncated"] = capped or rollout.truncated > 0
    found["cost_usd"] = _rounded(costs(prices, meter.by_model))
    if len(meter.by_model) == 1:
        found["model"] = next(iter(meter.by_model))
    else:
        found["by_model"] = {
            model: {**usage.to_json(), "cost_usd": _rounded(costs(prices, {model: usage}))}
            for model, usage in meter.by_model.items()
        }
    return found


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 10)


def usage_summary(usages: Iterable[Mapping[str, Any] | None]) -> dict[str, Any] | None:
    """A run's ``summary.usage`` from its attempts' (None: no attempt has one — a run
    kept before usage was, or one that called no model)."""
    kept = [u for u in usages if isinstance(u, Mapping)]
    if not kept:
        return None
    total, by_model = Usage(), _ByModel()
    truncated, cost, priced = 0, 0.0, True
    for usage in kept:
        total.add(Usage.from_json(usage))
        truncated += usage.get("truncated") is True
        one = usage.get("cost_usd")
        if isinstance(one, int | float) and math.isfinite(one):
            cost += one
        elif _count(usage.get("calls")):
            priced = False  # an attempt whose calls have no known price
        by_model.add(usage)
    summary: dict[str, Any] = {kind: getattr(total, kind) for kind in KINDS}
    summary["total_tokens"] = total.total_tokens
    summary["calls"] = total.calls
    summary["attempts"] = len(kept)
    summary["truncated"] = truncated
    summary["truncation_rate"] = truncated / len(kept)
    summary["cost_usd"] = round(cost, 10) if priced else None
    summary["per_attempt"] = {
        key: spread([v for u in kept if (v := _value(u, key)) is not None])
        for key in DISTRIBUTIONS
    }
    models = by_model.summary()
    if len(models) > 1:
        summary["by_model"] = models
    return summary


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def _value(usage: Mapping[str, Any], key: str) -> float | None:
    if key == "total_tokens":
        return float(_count(usage.get("input_tokens")) + _count(usage.get("output_tokens")))
    value = usage.get(key)
    if key == "cost_usd":
        return float(value) if isinstance(value, int | float) and math.isfinite(value) else None
    return float(_count(value))


def spread(values: list[float]) -> dict[str, float] | None:
    """Mean, median and 95th percentile (linear between the closest ranks)."""
    if not values:
        return None
    ordered = sorted(values)
    return {
        "mean": sum(ordered) / len(ordered),
        "p50": _percentile(ordered, 0.5),
        "p95": _percentile(ordered, 0.95),
    }


def _percentile(ordered: list[float], q: float) -> float:
    at = (len(ordered) - 1) * q
    low = math.floor(at)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (at - low)


class _ByModel:
    """Totals per model over the attempts."""

    def __init__(self) -> None:
        self.models: dict[str, Usage] = {}
        self.costs: dict[str, float | None] = {}

    def add(self, usage: Mapping[str, Any]) -> None:
        models = usage.get("by_model")
        if not isinstance(models, Mapping):
            models = {str(usage.get("model") or "?"): usage}
        for model, one in models.items():
            if isinstance(one, Mapping):
                self.models.setdefault(str(model), Usage()).add(Usage.from_json(one))
                self.costs[str(model)] = _plus(self.costs.get(str(model), 0.0), one.get("cost_usd"))

    def summary(self) -> dict[str, Any]:
        return {
            model: {**usage.to_json(), "cost_usd": _rounded(self.costs.get(model))}
            for model, usage in self.models.items()
        }


def _plus(total: float | None, value: Any) -> float | None:
    if total is None or not isinstance(value, int | float) or not math.isfinite(value):
        return None
    return total + value


__all__ = ["DISTRIBUTIONS", "attempt_usage", "spread", "usage_summary"]
