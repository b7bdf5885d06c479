"""Byte counts for people: 512 B, 2.0 KB, 3.4 MB, 1.2 GB."""

from __future__ import annotations


def size_text(n: int | None) -> str:
    if n is None:
        return ""
    value = float(n)
    for unit in ("B", "KB", "MB", "GB"):
        if value < 1024 or unit == "GB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{n} B"
