"""Where each key of a TOML file is written (line, column), for problems that say
``FILE:LINE:COL`` — the TOML parser keeps values, not positions, so the source is
scanned once more. ``locate_keys`` knows tables; ``locate`` also numbers arrays of tables
(``("eval", 0, "limit")``, ``("endpoint", 1, "headers", "X-Team")``)."""

from __future__ import annotations

import re
from typing import Any

KEY_RE = re.compile(
    r"""^\s*((?:[A-Za-z0-9_-]+|"[^"]*"|'[^']*')(?:\s*\.\s*(?:[A-Za-z0-9_-]+|"[^"]*"|'[^']*'))*)\s*="""
)


def split_key(raw: str) -> tuple[str, ...]:
    parts = re.findall(r"""[A-Za-z0-9_-]+|"[^"]*"|'[^']*'""", raw)
    return tuple(p.strip("\"'") for p in parts)


def locate_keys(text: str) -> dict[tuple[str, ...], tuple[int, int]]:
    """Map each key path to its (line, column), both 1-based, by scanning the source;
    arrays of tables are not numbered (the first occurrence wins)."""
    positions: dict[tuple[str, ...], tuple[int, int]] = {}
    for path, where in locate(text).items():
        positions.setdefault(tuple(str(p) for p in path if not isinstance(p, int)), where)
    return positions


def locate(text: str) -> dict[tuple[Any, ...], tuple[int, int]]:
    """Positions of keys, with arrays of tables indexed: ``("eval", 0, "limit")``,
    ``("ablation", 1, "sweep", "sampling", "temperature")``."""
    positions: dict[tuple[Any, ...], tuple[int, int]] = {}
    counters: dict[str, int] = {}
    table: tuple[Any, ...] = ()
    for lineno, line in enumerate(text.splitlines(), 1):
        stripped = line.lstrip()
        if not stripped or stripped.startswith("#"):
            continue
        col = len(line) - len(stripped) + 1
        match = re.match(r"^\s*\[\[\s*([^\]]+?)\s*\]\]", line)
        if match:
            name = match.group(1).strip()
            counters[name] = counters.get(name, -1) + 1
            table = (name, counters[name])
            positions.setdefault(table, (lineno, col))
            continue
        match = re.match(r"^\s*\[\s*([^\]]+?)\s*\]", line)
        if match:
            parts = split_key(match.group(1))
            head = parts[0]
            if head in counters and len(parts) > 1:
                table = (head, counters[head], *parts[1:])
            else:
                table = tuple(parts)
            positions.setdefault(table, (lineno, col))
            continue
        match = KEY_RE.match(line)
        if match:
            positions.setdefault((*table, *split_key(match.group(1))), (lineno, col))
    return positions
