"""``--rows`` specs, both ways: ``"3,7,10-20"`` → source row indices, and back."""

from __future__ import annotations


def parse_row_spec(text: str) -> frozenset[int]:
    """``--rows "3,7,10-20"``: source row indices (0-based), ranges inclusive."""
    import re

    from osmosis_client.errors import InvalidInputError

    spec = text.replace(" ", "")
    if not re.fullmatch(r"\d+(-\d+)?(,\d+(-\d+)?)*", spec):
        raise InvalidInputError(
            f"--rows {text!r} is not a row list",
            hint='use row indices and ranges, like "3,7,10-20"',
            code="USAGE",
        )
    rows: set[int] = set()
    for part in spec.split(","):
        first, _, last = part.partition("-")
        low, high = int(first), int(last or first)
        if low > high:
            raise InvalidInputError(
                f"--rows: the range {part} runs backwards",
                hint=f"write it {high}-{low}",
                code="USAGE",
            )
        if high - low > 10_000_000:
            raise InvalidInputError(f"--rows: the range {part} is too large", code="USAGE")
        rows.update(range(low, high + 1))
    return frozenset(rows)


def row_spec(indices: list[int]) -> str:
    """``2,4,8-10``: row indices as --rows takes them (runs of 3 or more as ranges)."""
    parts: list[str] = []
    ordered = sorted(set(indices))
    start = 0
    while start < len(ordered):
        end = start
        while end + 1 < len(ordered) and ordered[end + 1] == ordered[end] + 1:
            end += 1
        if end - start >= 2:
            parts.append(f"{ordered[start]}-{ordered[end]}")
        else:
            parts.extend(str(i) for i in ordered[start : end + 1])
        start = end + 1
    return ",".join(parts)
