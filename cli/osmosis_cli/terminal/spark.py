"""Sparklines: a metric's course in one line of block characters, for a terminal only
(a log or a pipe gets the numbers alone)."""

from __future__ import annotations

from collections.abc import Sequence

BARS = "▁▂▃▄▅▆▇█"


def sparkline(values: Sequence[float], width: int = 24) -> str:
    """``values`` scaled between their least and greatest, sampled evenly down to
    ``width`` characters; a flat series is a flat line, one value one bar."""
    if not values:
        return ""
    if len(values) > width:
        step = (len(values) - 1) / (width - 1)
        values = [values[round(i * step)] for i in range(width)]
    low, high = min(values), max(values)
    if high == low:
        return BARS[len(BARS) // 2 - 1] * len(values)
    top = len(BARS) - 1
    return "".join(BARS[round((v - low) / (high - low) * top)] for v in values)
