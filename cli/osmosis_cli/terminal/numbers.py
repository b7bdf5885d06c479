"""Numbers as every table and detail shows them: counts with thousands separators
(``31,000,000``), money as ``$76.54`` (a cent's fraction as ``$0.0042``), a platform
document's totals with their unit named once and nothing shown for what is empty."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

DASH = "–"


def count(value: int | None) -> str:
    return DASH if value is None else f"{value:,}"


def money(value: float | None) -> str:
    """``$76.54``; under a dollar, the first significant cents (``$0.0042``)."""
    if value is None:
        return DASH
    if abs(value) >= 0.01 or value == 0:
        return f"${value:,.2f}"
    return f"${value:.4f}" if abs(value) >= 0.0001 else "<$0.0001"


def budget_to_finish(spent: float, done: int, total: int, budget: float) -> str:
    """A budget that would let a run stopped at its budget finish: what it has cost per
    attempt × every attempt, with a quarter more for rows dearer than the first ones,
    rounded up to two significant digits (``0.0064``); twice the old one when nothing
    says more."""
    import math

    projected = spent / done * total * 1.25 if done and total > done else 2 * budget
    wanted = max(projected, budget * 1.01)
    step = 10 ** (math.floor(math.log10(wanted)) - 1)
    return f"{math.ceil(wanted / step - 1e-9) * step:.2g}"


def number(value: float | int) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    return f"{value:,.4g}" if abs(value) < 1e6 else f"{value:,.0f}"


#: a key's unit suffix, and how a value with it is shown
UNITS = {"_usd": money, "_cost": money}


def labelled(values: Mapping[str, Any]) -> Iterator[tuple[str, str]]:
    """``(Label, shown)`` for each value worth showing: ``total_input_tokens: 31000000``
    → ``Total Input Tokens: 31,000,000``; ``total_cost_usd: 76.5432`` → ``Total Cost:
    $76.54``; nulls, empty tables and lists left out; a table as ``key=value, …``."""
    for key, value in values.items():
        if value is None or value == {} or value == [] or value == "":
            continue
        shown_key, render = key, None
        for suffix, how in UNITS.items():
            if key.endswith(suffix):
                shown_key = key[: -len("_usd")] if suffix == "_usd" else key
                render = how
        label = shown_key.replace("_", " ").title().replace(" Id", " ID")
        if isinstance(value, Mapping):
            text = ", ".join(f"{k}={v}" for k, v in value.items() if v not in (None, {}, []))
        elif isinstance(value, list):
            text = ", ".join(map(str, value))
        elif render is not None and isinstance(value, int | float) and not isinstance(value, bool):
            text = render(value)
        elif isinstance(value, int | float):
            text = number(value)
        else:
            text = str(value)
        if text:
            yield label, text
