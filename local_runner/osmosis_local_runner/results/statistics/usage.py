"""Tokens and cost, per attempt and per run.

An attempt's ``usage`` (its record's, the journal's, the document's per-run key) is what
every model call made on its behalf cost — the rollout's and any judge's, counted by
:class:`~osmosis_client.llm.usage.Meter` — plus, from the rollout's own calls, its last
finish reason and whether it was cut by a length limit. Kinds that are 0 are left out
(a journal line per attempt stays short)::

    {"input_tokens": 812, "output_tokens": 340, "calls": 3, "reasoning_tokens": 256,
     "cache_read_tokens": 512, "finish_reason": "stop", "cost_usd": 0.00123,
     "model": "openai/gpt-5-mini"}            # or, when it called more than one model:
     "by_model": {"openai/gpt-5-mini": {…}, "openai/gpt-5-nano": {…}}
    # and "truncated": true when cut (length, max_output_tokens, its token budget)

The run's (``summary.usage``) adds attempts up — totals are sums of calls, never
averages of averages — with ``truncated`` attempts and their rate, ``cost_usd`` (null
when any call's price is unknown), ``per_attempt`` mean / p50 / p95 of each kind, and
``by_model`` when the run called more than one model (a judge apart from the model
under test).
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Iterable, Mapping
from typing import Any

from osmosis_client.llm.prices import PriceTable, costs
from osmosis_client.llm.usage import KINDS, Meter, Usage, amount_of, count_of

#: per-attempt distributions the summary gives
DISTRIBUTIONS = ("input_tokens", "output_tokens", "reasoning_tokens", "total_tokens", "cost_usd")


def attempt_usage(
    meter: Meter,
    rollout: Usage,
    last_finish: str | None,
    prices: PriceTable,
    *,
    capped: bool = False,
    unknown_as_zero: bool = False,
    cached: Usage | None = None,
) -> dict[str, Any] | None:
    """One attempt's ``usage`` (None: it made no model call). ``rollout``: the usage of
    the rollout's own calls (truncation is theirs, not a judge's). Calls whose usage is
    unknown (unreported, invalid) make the cost unknown, unless ``unknown_as_zero``: the
    user counts them as free (they stay counted as unknown). ``cached``: the calls
    answered without a call (the cache, a replay) — counted apart, costing nothing."""
    models = meter.by_model
    if not models and not (cached and cached.calls):
        return None
    found = _metered(meter, prices, unknown_as_zero) if models else Usage().to_json()
    if cached is not None and cached.calls:
        found["cached_calls"] = cached.calls
        found["cached_tokens"] = cached.total_tokens
    reason = "token_budget" if capped else last_finish
    if reason is not None:
        found["finish_reason"] = reason
    if capped or rollout.truncated or (cached is not None and cached.truncated):
        found["truncated"] = True
    return found


def _metered(meter: Meter, prices: PriceTable, unknown_as_zero: bool) -> dict[str, Any]:
    """The calls made: their tokens by kind, per model when several, and their cost."""
    models = meter.by_model
    counted = {m: _known(u) for m, u in models.items()} if unknown_as_zero else models
    if len(models) == 1:
        ((model, total),) = models.items()
        found = total.to_json()
        found["model"] = model
        cost = prices.cost(model, counted[model])
    else:
        found = meter.total().to_json()
        cost = costs(prices, counted)
        found["by_model"] = {}
        for name, usage in models.items():
            one = usage.to_json()
            priced = prices.cost(name, counted[name])
            if priced is not None:
                one["cost_usd"] = round(priced, 10)
            found["by_model"][name] = one
    if cost is not None:
        found["cost_usd"] = round(cost, 10)
    return found


def _known(usage: Usage) -> Usage:
    """``usage`` priced as if its calls of unknown usage were free."""
    from dataclasses import replace

    return replace(usage, unreported=0, invalid=0)


class _Totals:
    """Sums of kinds over attempts (or one model's calls), and their cost."""

    __slots__ = ("calls", "cost", "invalid", "kinds", "unreported")

    def __init__(self) -> None:
        self.kinds = dict.fromkeys(KINDS, 0)
        self.calls = 0
        self.unreported = 0
        self.invalid = 0
        self.cost: float | None = 0.0

    def add(self, usage: Mapping[str, Any]) -> None:
        for kind in KINDS:
            self.kinds[kind] += count_of(usage.get(kind))
        calls = count_of(usage.get("calls"))
        self.calls += calls
        self.unreported += count_of(usage.get("unreported_calls"))
        self.invalid += count_of(usage.get("invalid_calls"))
        cost = amount_of(usage.get("cost_usd"))
        if calls and (cost is None or self.cost is None):
            self.cost = None  # a call whose price nobody knows
        elif cost is not None and self.cost is not None:
            self.cost += cost

    def to_json(self) -> dict[str, Any]:
        found = {
            **self.kinds,
            "total_tokens": self.kinds["input_tokens"] + self.kinds["output_tokens"],
            "calls": self.calls,
            "cost_usd": None if self.cost is None else round(self.cost, 10),
        }
        if self.unreported:
            found["unreported_calls"] = self.unreported
        if self.invalid:
            found["invalid_calls"] = self.invalid
        return found


def usage_summary(usages: Iterable[Mapping[str, Any] | None]) -> dict[str, Any] | None:
    """A run's ``summary.usage`` from its attempts' (None: no attempt has one — a run
    kept before usage was, or one that called no model)."""
    total = _Totals()
    models: dict[str, _Totals] = {}
    columns: dict[str, list[float]] = {key: [] for key in DISTRIBUTIONS}
    attempts = truncated = cached_calls = cached_tokens = 0
    for usage in usages:
        if not isinstance(usage, Mapping):
            continue
        attempts += 1
        total.add(usage)
        cached_calls += count_of(usage.get("cached_calls"))
        cached_tokens += count_of(usage.get("cached_tokens"))
        truncated += usage.get("truncated") is True
        inputs, outputs = count_of(usage.get("input_tokens")), count_of(usage.get("output_tokens"))
        columns["input_tokens"].append(inputs)
        columns["output_tokens"].append(outputs)
        columns["reasoning_tokens"].append(count_of(usage.get("reasoning_tokens")))
        columns["total_tokens"].append(inputs + outputs)
        cost = amount_of(usage.get("cost_usd"))
        if cost is not None:
            columns["cost_usd"].append(cost)
        by_model = usage.get("by_model")
        if not isinstance(by_model, Mapping):
            by_model = {str(usage.get("model") or "?"): usage}
        for model, one in by_model.items():
            if isinstance(one, Mapping):
                models.setdefault(str(model), _Totals()).add(one)
    if not attempts:
        return None
    summary = total.to_json()
    summary["attempts"] = attempts
    summary["truncated"] = truncated
    summary["truncation_rate"] = truncated / attempts
    summary["per_attempt"] = {key: spread(values) for key, values in columns.items()}
    if cached_calls:  # answered without a call (the cache, a replay): apart, and free
        summary["cached_calls"] = cached_calls
        summary["cached_tokens"] = cached_tokens
    if len(models) > 1:
        summary["by_model"] = {model: sums.to_json() for model, sums in models.items()}
    if total.cost is None:  # which models had no price (not those whose usage is unknown)
        unpriced = [m for m, t in models.items() if t.cost is None and not t.unreported + t.invalid]
        if unpriced:
            summary["unpriced_models"] = sorted(unpriced)
    return summary


#: what a comparison compares besides scores, per row the mean over its attempts
USAGE_METRICS = ("output_tokens", "reasoning_tokens", "truncation_rate", "cost_usd")


def row_usage(runs: list[dict[str, Any]], columns: dict[str, array[float]]) -> None:
    """A row's usage metrics (primary attempts that called a model; NaN when none did,
    or — cost — when a price was not known)."""
    found = [
        u
        for r in runs
        if r.get("model_tag") in (None, "primary") and isinstance(u := r.get("usage"), dict)
    ]
    nan = float("nan")
    if not found:
        for column in columns.values():
            column.append(nan)
        return
    count = len(found)
    columns["output_tokens"].append(sum(count_of(u.get("output_tokens")) for u in found) / count)
    columns["reasoning_tokens"].append(
        sum(count_of(u.get("reasoning_tokens")) for u in found) / count
    )
    columns["truncation_rate"].append(sum(u.get("truncated") is True for u in found) / count)
    costs = [u.get("cost_usd") for u in found]
    known = all(isinstance(c, int | float) and not isinstance(c, bool) for c in costs)
    columns["cost_usd"].append(sum(costs) / count if known else nan)  # type: ignore[arg-type]


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


def _spread_text(spread_: Any) -> str:
    if not isinstance(spread_, Mapping):
        return ""
    p50, p95 = amount_of(spread_.get("p50")), amount_of(spread_.get("p95"))
    return "" if p50 is None or p95 is None else f"p50 {round(p50):,}, p95 {round(p95):,}"


def usage_lines(usage: Any) -> list[str]:
    """A run's usage in a few lines (the terminal summary, Markdown step summaries)::

        tokens: 12,345 in (4,100 cached), 8,210 out (6,020 reasoning); out per attempt
          p50 410, p95 1,204   (one line)
        truncated: 3 of 60 attempts (5.0%); cost: $0.4213 ($0.0070 per attempt)
          by model: openai/gpt-5-mini 10,000 in, 8,000 out, $0.4000; mock/judge …

    Whatever a document read back holds, it is shown as numbers or left out."""
    if not isinstance(usage, Mapping) or not usage:
        return []
    get = usage.get
    tokens = f"tokens: {count_of(get('input_tokens')):,} in"
    if count_of(get("cache_read_tokens")):
        tokens += f" ({count_of(get('cache_read_tokens')):,} cached)"
    tokens += f", {count_of(get('output_tokens')):,} out"
    if count_of(get("reasoning_tokens")):
        tokens += f" ({count_of(get('reasoning_tokens')):,} reasoning)"
    spreads = get("per_attempt")
    per = _spread_text(spreads.get("output_tokens") if isinstance(spreads, Mapping) else None)
    if per:
        tokens += f"; out per attempt {per}"
    attempts = count_of(get("attempts"))
    second = f"truncated: {count_of(get('truncated')):,} of {attempts:,} attempts"
    if attempts:
        second += f" ({count_of(get('truncated')) / attempts:.1%})"
    cost = amount_of(get("cost_usd"))
    if cost is not None:
        second += f"; cost: ${cost:.4f}" + (
            f" (${cost / attempts:.4f} per attempt)" if attempts else ""
        )
    else:
        second += f"; cost: unknown ({_why_unknown(usage)})"
    lines = [tokens, second]
    cached = count_of(get("cached_calls"))
    if cached:
        made = count_of(get("calls"))
        lines.append(
            f"cache: {cached:,} of {cached + made:,} calls from cache "
            f"({count_of(get('cached_tokens')):,} tokens, $0)"
        )
    models = get("by_model")
    if isinstance(models, Mapping) and models:
        parts = []
        for model, one in models.items():
            if not isinstance(one, Mapping):
                continue
            text = f"{model} {count_of(one.get('input_tokens')):,} in, "
            text += f"{count_of(one.get('output_tokens')):,} out"
            if (priced := amount_of(one.get("cost_usd"))) is not None:
                text += f", ${priced:.4f}"
            parts.append(text)
        lines.append("  by model: " + "; ".join(parts))
    return lines


def _why_unknown(usage: Mapping[str, Any]) -> str:
    """Why a run's cost is unknown, naming what is missing."""
    reasons = []
    if unreported := count_of(usage.get("unreported_calls")):
        reasons.append(f"{unreported:,} call(s) reported no usage")
    if invalid := count_of(usage.get("invalid_calls")):
        reasons.append(f"{invalid:,} call(s) reported usage outside any sane range")
    unpriced = usage.get("unpriced_models")
    if isinstance(unpriced, list) and unpriced:
        reasons.append("no price for " + ", ".join(str(m) for m in unpriced[:5]))
    return "; ".join(reasons) or "no price for a model it called"


def usage_properties(usage: Any) -> dict[str, Any]:
    """A run's usage as flat ``usage.*`` names (JUnit properties, CI artefacts); only
    numbers are kept."""
    if not isinstance(usage, Mapping):
        return {}
    found: dict[str, Any] = {}
    for key in (*KINDS, "total_tokens", "calls", "truncated", "truncation_rate", "cost_usd"):
        value = amount_of(usage.get(key))
        if value is not None:
            found[f"usage.{key}"] = usage[key]
    per = usage.get("per_attempt")
    for key, spread_ in per.items() if isinstance(per, Mapping) else ():
        if isinstance(spread_, Mapping):
            for stat in ("mean", "p50", "p95"):
                if (value := amount_of(spread_.get(stat))) is not None:
                    found[f"usage.{key}.{stat}"] = value
    return found


def usage_facts(usage: Any) -> list[tuple[str, str]]:
    """Tokens by kind, truncation and cost as a card's facts (a run kept before usage
    was counted has none)."""
    if not isinstance(usage, dict):
        return []

    def count(key: str) -> int:
        return count_of(usage.get(key))

    facts = [("output tokens", f"{count('output_tokens'):,}")]
    if count("reasoning_tokens"):
        facts.append(("reasoning tokens", f"{count('reasoning_tokens'):,}"))
    if count("cache_read_tokens"):
        facts.append(("cached input", f"{count('cache_read_tokens'):,}"))
    attempts = count("attempts")
    facts.append(("truncated", f"{count('truncated') / attempts:.1%}" if attempts else "–"))
    cost = amount_of(usage.get("cost_usd"))
    facts.append(("cost", "unknown" if cost is None else f"${cost:.4f}"))
    if count("cached_calls"):  # answered from the call cache: no call made, nothing paid
        made = count("cached_calls") + count("calls")
        facts.append(("from cache", f"{count('cached_calls'):,} of {made:,} calls"))
    return facts


__all__ = [
    "DISTRIBUTIONS",
    "USAGE_METRICS",
    "attempt_usage",
    "row_usage",
    "spread",
    "usage_facts",
    "usage_lines",
    "usage_properties",
    "usage_summary",
]
