"""Sparklines: a metric's course in one line of block characters, for a terminal only
(a log or a pipe gets the numbers alone)."""

from __future__ import annotations

import math
from collections.abc import Sequence

BARS = "▁▂▃▄▅▆▇█"


def sparkline(values: Sequence[float], width: int = 24) -> str:
    """``values`` scaled between their least and greatest, sampled evenly down to
    ``width`` characters; a flat series is a flat line, one value one bar. Any finite
    series is drawn (±1e308 too: scaled by halves, never overflowing); a value that is
    not finite is a blank."""
    if not values:
        return ""
    if len(values) > width:
        step = (len(values) - 1) / (width - 1)
        values = [values[round(i * step)] for i in range(width)]
    finite = [v for v in values if math.isfinite(v)]
    if not finite:
        return " " * len(values)
    low, high = min(finite), max(finite)
    if high == low:
        return "".join(BARS[len(BARS) // 2 - 1] if math.isfinite(v) else " " for v in values)
    span = high / 2 - low / 2  # halves: high − low may overflow, their halves never do
    top = len(BARS) - 1
    return "".join(
        BARS[round((v / 2 - low / 2) / span * top)] if math.isfinite(v) else " " for v in values
    )
