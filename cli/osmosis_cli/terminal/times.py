"""Platform timestamps as people read them: ``2026-11-26 2:07 PM UTC`` and ``2h ago``
(the published CLI's forms)."""

from __future__ import annotations

from datetime import datetime, timezone

from osmosis_client._times import DASH, parse_time, when

__all__ = ["DASH", "ago", "duration", "parse_time", "when"]


def ago(value: str | None, now: datetime | None = None) -> str:
    """``just now``, ``5m ago``, ``2h ago``, ``3d ago`` (a date past a month)."""
    found = parse_time(value)
    if found is None:
        return value or DASH
    seconds = ((now or datetime.now(timezone.utc)) - found).total_seconds()
    for size, unit in ((86400 * 30, ""), (86400, "d"), (3600, "h"), (60, "m")):
        if seconds >= size:
            return f"{found:%Y-%m-%d}" if not unit else f"{int(seconds // size)}{unit} ago"
    return "just now"


def duration(seconds: float | None) -> str:
    """``59m 30s``, ``2h 5m``, ``12s``, ``0.3s`` (tenths under ten seconds)."""
    if seconds is None or seconds < 0:
        return DASH
    if seconds < 10:
        return f"{seconds:.1f}s"
    whole = int(seconds)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h {minutes}m"
    return f"{minutes}m {secs}s" if minutes else f"{secs}s"
