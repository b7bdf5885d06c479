"""A results document's row lines: one JSON object per line (results.document_chunks),
decoded strictly — JSON proper: no ``NaN`` or ``Infinity``, nothing nested beyond the
parser, numbers a float can hold; each problem a ``ValueError``.

Row lines are decoded by orjson (a dependency: osmosis_client._json says why): a
million-row ``eval compare`` spends most of its time decoding lines, and orjson does it
in a quarter of the standard library's time, with the same strictness.
"""

from __future__ import annotations

import json
from typing import Any

import orjson


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _finite_float(text: str) -> float:
    value = float(text)
    if value - value != 0.0:  # 1e400 parses as inf
        raise ValueError(f"{text[:20]} is too large for a number")
    return value


def load_json(raw: bytes | str) -> Any:
    """JSON proper: no ``NaN``/``Infinity``, no float beyond range, not nested beyond the
    parser (each a ``ValueError``)."""
    try:
        return json.loads(raw, parse_constant=_refuse_constant, parse_float=_finite_float)
    except RecursionError as exc:
        raise ValueError("nested too deeply") from exc


def decode_line(text: bytes) -> Any:
    """A row line, strictly, by orjson — its rules are :func:`load_json`'s (no NaN or
    Infinity, no number beyond a double, bounded nesting), each a ``ValueError``."""
    return orjson.loads(text)
