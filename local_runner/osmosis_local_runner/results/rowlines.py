"""A results document's row lines: one JSON object per line (results.document_chunks),
decoded strictly — JSON proper: no ``NaN`` or ``Infinity``, nothing nested beyond the
parser, numbers a float can hold; each problem a ``ValueError`` — by orjson when the
optional extra is installed (``osmosis-client[fast]``), else the standard library's
decoder; and cut of their transcripts when a command never reads them.

Why orjson is optional: a million-row ``eval compare`` spends most of its time decoding
lines, and orjson does it in a quarter of the time; everything else reads documents fine
with the standard library.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any


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
    except RecursionError:
        raise ValueError("nested too deeply") from None


_DECODER = json.JSONDecoder(parse_constant=_refuse_constant)
#: a number whose exponent has three digits or more: the only kind a double may not hold
_LARGE_EXPONENT = re.compile(rb"[eE]\+?\d{3}")


def _orjson() -> Callable[[bytes], Any] | None:
    """orjson's decoder when the optional extra is installed."""
    try:
        from orjson import loads
    except ImportError:  # the standard library's decoder, below
        return None
    return loads


fast_decoder = _orjson()


def decode_line(text: bytes) -> Any:
    """A row line, strictly (:func:`load_json`'s rules); the number check — a Python call
    per number — only on lines where a number could be out of range. With orjson: its
    rules are the same (no NaN or Infinity, no number beyond a double, bounded nesting),
    each a ``ValueError``."""
    if fast_decoder is not None:
        return fast_decoder(text)
    if _LARGE_EXPONENT.search(text) is not None:
        return load_json(text)  # a three-digit exponent: maybe out of range (1e400)
    try:
        return _DECODER.decode(text.decode("utf-8"))
    except RecursionError:
        raise ValueError("nested too deeply") from None


#: how our documents separate a row's runs, and where a run's transcript starts (neither
#: can occur inside a JSON string, where quotes are escaped, nor in compact JSON)
_RUN_SEPARATOR = b'}, {"run_index":'
_MESSAGES = b',"messages":['


def without_messages(line: bytes) -> bytes:
    """A row line of ours with each run's ``messages`` cut out, so a command that never
    reads transcripts never parses them; any other line is returned as it is."""
    if _MESSAGES not in line:
        return line
    parts = line.split(_RUN_SEPARATOR)
    last = len(parts) - 1
    kept = []
    for i, part in enumerate(parts):
        cut = part.find(_MESSAGES)
        if cut < 0:
            kept.append(part)
        elif i < last and part.endswith(b"]"):
            kept.append(part[:cut])
        elif i == last and part.endswith(b"]}]}"):
            kept.append(part[:cut] + b"}]}")
        else:
            return line  # not our layout: parsed whole
    return _RUN_SEPARATOR.join(kept)
