"""``--rows`` specs: ``"3,7,10-20"`` → source row indices (written back by the runner's
``rows_text``, as the fingerprint records them)."""

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
