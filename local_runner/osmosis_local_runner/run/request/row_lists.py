"""Row lists (``--rows "3,7,10-20"``, ``rows=``): parsed, counted before anything is
made, and written back compactly as journals and fingerprints record them."""

from __future__ import annotations

from collections.abc import Iterable

from osmosis_client.errors import InvalidInputError

#: the most source rows a row list may name (a range is counted, never expanded, first)
MAX_ROWS = 10_000_000


def row_ranges(text: str) -> list[tuple[int, int]]:
    """``"3,7,10-20"``: its ranges (inclusive), checked, in order — nothing expanded."""
    import re

    spec = text.replace(" ", "")
    if len(spec) > 1_000_000 or not re.fullmatch(r"\d+(-\d+)?(,\d+(-\d+)?)*", spec):
        raise InvalidInputError(
            f"rows {text[:80]!r} is not a row list",
            hint='use row indices and ranges, like "3,7,10-20"',
            code="USAGE",
        )
    ranges = []
    for part in spec.split(","):
        first, _, last = part.partition("-")
        low, high = int(first), int(last or first)
        if low > high:
            raise InvalidInputError(
                f"rows: the range {part} runs backwards",
                hint=f"write it {high}-{low}",
                code="USAGE",
            )
        ranges.append((low, high))
    return ranges


def count_rows(text: str) -> int:
    """How many distinct rows a row list names, counted from its merged ranges (a
    planted ``0-10000000`` costs no memory)."""
    count, reach = 0, -1
    for low, high in sorted(row_ranges(text)):
        if high > reach:
            count += high - max(low, reach + 1) + 1
            reach = high
    return count


def parse_rows(text: str) -> frozenset[int]:
    """``"3,7,10-20"``: source row indices (0-based), ranges inclusive; at most
    :data:`MAX_ROWS` of them (counted before any is made)."""
    ranges = row_ranges(text)
    if count_rows(text) > MAX_ROWS:
        raise InvalidInputError(
            f"rows {text[:80]!r} names more than {MAX_ROWS:,} rows", code="USAGE"
        )
    rows: set[int] = set()
    for low, high in ranges:
        rows.update(range(low, high + 1))
    return frozenset(rows)


def rows_text(rows: Iterable[int]) -> str:
    """Row indices as the fingerprint and the journal record them (``0-3,7``)."""
    chosen = sorted(set(rows))
    parts: list[str] = []
    i = 0
    while i < len(chosen):
        j = i
        while j + 1 < len(chosen) and chosen[j + 1] == chosen[j] + 1:
            j += 1
        parts.append(str(chosen[i]) if i == j else f"{chosen[i]}-{chosen[j]}")
        i = j + 1
    return ",".join(parts)


__all__ = ["MAX_ROWS", "count_rows", "parse_rows", "row_ranges", "rows_text"]
