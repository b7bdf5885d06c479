"""What model calls cost: a price table, and the billing rule every provider's usage
reduces to once it is in OpenAI's convention (:mod:`osmosis_client.llm.usage`).

A table is a TOML file (``--prices FILE``, the config's ``prices`` key)::

    [models."openai/gpt-5-mini"]      # the model as the run names it
    input = 0.25                      # USD per million input tokens
    output = 2.0                      # USD per million output tokens (reasoning included)
    cache_read = 0.025                # optional: cached input tokens
    cache_write = 0.3125              # optional: tokens written to the cache

The rule: ``(input − cache_read − cache_write) × input + cache_read × cache_read +
cache_write × cache_write + output × output``. Reasoning is billed as output (OpenAI,
Anthropic, OpenRouter, DeepSeek all count it inside the output tokens). A call whose
model has no price, or that read or wrote the cache with no price given for it, has no
cost: never a guess. A provider's own report of what a call cost (OpenRouter's
``usage.cost``) is used when the table has no price for that model.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from osmosis_client._toml import locate_keys
from osmosis_client.errors import ConfigError, Problem
from osmosis_client.llm.usage import Usage

PER = 1_000_000
_KEYS = ("input", "output", "cache_read", "cache_write")


@dataclass(frozen=True)
class Price:
    """USD per million tokens of each kind (None: not known)."""

    input: float
    output: float
    cache_read: float | None = None
    cache_write: float | None = None

    def __post_init__(self) -> None:
        # one rule for every source (a file, the platform, code): a price is a finite
        # number ≥ 0, or there is none
        for key in _KEYS:
            value = getattr(self, key)
            if value is None and key in ("cache_read", "cache_write"):
                continue
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise ValueError(f"a price's {key} must be a number, not {value!r}")
            if not (math.isfinite(value) and value >= 0):
                raise ValueError(f"a price's {key} must be finite and ≥ 0, not {value!r}")

    def cost(self, usage: Usage) -> float | None:
        """What ``usage`` costs at this price (None: it used a kind with no price, or
        some of its calls' tokens are unknown)."""
        if usage.unknown:
            return None
        if usage.cache_read_tokens and self.cache_read is None:
            return None
        if usage.cache_write_tokens and self.cache_write is None:
            return None
        fresh = max(0, usage.input_tokens - usage.cache_read_tokens - usage.cache_write_tokens)
        total = fresh * self.input + usage.output_tokens * self.output
        total += usage.cache_read_tokens * (self.cache_read or 0.0)
        total += usage.cache_write_tokens * (self.cache_write or 0.0)
        return total / PER

    def to_json(self) -> dict[str, float]:
        return {k: v for k in _KEYS if (v := getattr(self, k)) is not None}


@dataclass(frozen=True)
class PriceTable:
    """Prices by model name (as the run names it: ``openai/gpt-5-mini``; a name without
    its ``provider/`` is looked up too; :func:`for_called` adds the model a run calls)."""

    prices: Mapping[str, Price]
    source: str = ""

    def price(self, model: str) -> Price | None:
        found = self.prices.get(model)
        if found is None and "/" in model:
            found = self.prices.get(model.split("/", 1)[1])
        return found

    def cost(self, model: str, usage: Usage) -> float | None:
        """What ``model``'s ``usage`` costs: the table's price, else the provider's own
        report, else None."""
        price = self.price(model)
        if price is not None:
            return price.cost(usage)
        return None if usage.unknown else usage.reported_cost

    def with_prices(self, more: Mapping[str, Price]) -> PriceTable:
        """This table with prices for more models (this table's win)."""
        return PriceTable({**more, **self.prices}, self.source)


EMPTY = PriceTable({})


def for_called(table: PriceTable, called: Mapping[str, str]) -> PriceTable:
    """``table`` with each model as the run names it (``called``'s keys: a model path, an
    endpoint registry's id) priced as the model it calls (its values: the model in the
    request body) when the table names only that one — a table is keyed by either."""
    more = {
        named: price
        for named, model in called.items()
        if table.price(named) is None and (price := table.price(model)) is not None
    }
    return table.with_prices(more) if more else table


def costs(table: PriceTable, by_model: Mapping[str, Usage]) -> float | None:
    """The cost of calls to several models: a sum, or None when any one is unknown."""
    total = 0.0
    for model, usage in by_model.items():
        if not usage.calls:
            continue
        one = table.cost(model, usage)
        if one is None:
            return None
        total += one
    return total


def load_prices(path: Path) -> PriceTable:
    """A price table from TOML; every problem reported at once."""
    import tomlkit

    shown = str(path)
    try:
        text = path.read_text(encoding="utf-8")
        data = tomlkit.parse(text).unwrap()
    except (OSError, UnicodeDecodeError, tomlkit.exceptions.TOMLKitError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise ConfigError(
            f"cannot read the price table {shown}",
            [Problem(shown, None, None, "", reason.splitlines()[0][:200])],
            hint='write [models."NAME"] tables with input and output in USD per million tokens',
        ) from exc
    places = locate_keys(text)
    problems: list[Problem] = []

    def bad(path: tuple[str, ...], message: str) -> None:
        line, col = places.get(path, places.get(path[:2], (None, None)))
        problems.append(Problem(shown, line, col, ".".join(path), message))

    for key in sorted(set(data) - {"models"}):
        bad((key,), 'unknown key (only [models."NAME"])')
    models = data.get("models", {})
    if not isinstance(models, dict):
        bad(("models",), "must be a table of models")
        models = {}
    prices: dict[str, Price] = {}
    for name, row in models.items():
        price = _price(str(name), row, bad)
        if price is not None:
            prices[str(name)] = price
    if problems:
        raise ConfigError(
            f"{shown} has {len(problems)} problem{'s' if len(problems) != 1 else ''}",
            problems,
            hint="prices are numbers ≥ 0 in USD per million tokens",
        )
    return PriceTable(prices, shown)


def _price(name: str, row: Any, bad: Any) -> Price | None:
    if not isinstance(row, dict):
        bad(("models", name), "must be a table")
        return None
    failed = False
    for key in sorted(set(row) - set(_KEYS)):
        bad(("models", name, key), "unknown key")
        failed = True
    values: dict[str, float] = {}
    for key in _KEYS:
        value = row.get(key)
        if value is None:
            if key in ("input", "output"):
                bad(("models", name, key), "is required")
                failed = True
        elif isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
            bad(("models", name, key), "must be a number ≥ 0")
            failed = True
        elif not math.isfinite(value):
            bad(("models", name, key), "must be finite")
            failed = True
        else:
            values[key] = float(value)
    return None if failed else Price(**values)


__all__ = ["EMPTY", "Price", "PriceTable", "costs", "for_called", "load_prices"]
