"""Timestamps as people read them, one form everywhere (the CLI's tables, the viewer, a
static site): ``2026-11-26 2:07 PM UTC`` (the published CLI's)."""

from __future__ import annotations

from datetime import datetime, timezone

DASH = "–"


def parse_time(value: str | None) -> datetime | None:
    if not value:
        return None
    try:
        found = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return found if found.tzinfo else found.replace(tzinfo=timezone.utc)


def when(value: str | None) -> str:
    """``2026-11-26 2:07 PM UTC`` (unparseable text as it is, nothing as a dash)."""
    found = parse_time(value)
    if found is None:
        return value or DASH
    found = found.astimezone(timezone.utc)
    hour = found.hour % 12 or 12
    return f"{found:%Y-%m-%d} {hour}:{found:%M} {'AM' if found.hour < 12 else 'PM'} UTC"


__all__ = ["DASH", "parse_time", "when"]
