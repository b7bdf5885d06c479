"""JSON on the hot paths — requests, answers, dataset rows, records, journal lines — by
orjson, with the standard library's verdicts.

Why orjson (a core dependency): at zero model latency a local run is bound by its own
CPU, and encoding and decoding JSON was the largest share of the runner's work
(docs/benchmarks.md); orjson does it in a fraction of the time. Where orjson and the
standard library would disagree, the standard library decides, so callers see the
values and errors they always saw:

- decoding: whatever orjson refuses (``NaN`` tokens, text that is not UTF-8, nesting
  beyond 1,024 levels, numbers beyond a double) is decoded — or refused, with its usual
  message — by ``json.loads``; text holding a run of 20 digits (an integer orjson would
  round to a float) goes to ``json.loads`` first, which keeps it exact;
- encoding: whatever orjson refuses (integers beyond 64 bits, keys that are not
  strings, lone surrogates, datetimes and dataclasses) goes to the standard library's
  strict encoder, which writes it or raises ``TypeError`` / ``ValueError`` as before.

One difference is chosen: a non-finite float (``NaN``, ``±Infinity``) is written as
``null`` (orjson's rule; JSON has no such numbers), where the strict standard encoder
refused the whole value. A conversation holding a NaN is kept, not failed.
"""

from __future__ import annotations

import json
from typing import Any

import orjson

#: datetimes and dataclasses are refused as the standard library refuses them
_OPTIONS = orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_DATACLASS
_STRICT = json.JSONEncoder(separators=(",", ":"), allow_nan=False, ensure_ascii=False).encode
#: an integer orjson would decode as a float (beyond 64 bits) has 20 digits or more: the
#: text's digits made zeros (the rest spaces), searched for 20 zeros — a tenth of what a
#: regular expression costs
_DIGITS = bytes(ord("0") if chr(i).isdigit() and i < 128 else ord(" ") for i in range(256))
_LONG_NUMBER = b"0" * 20


def dumps(value: Any) -> bytes:
    """``value`` as compact JSON (UTF-8 bytes); ``TypeError`` / ``ValueError`` for what
    JSON cannot hold (see the module: non-finite floats become ``null``)."""
    try:
        return orjson.dumps(value, option=_OPTIONS)
    except TypeError:
        return _STRICT(value).encode("utf-8")


def compact(value: Any) -> str:
    """:func:`dumps` as text."""
    try:
        return orjson.dumps(value, option=_OPTIONS).decode("utf-8")
    except TypeError:
        return _STRICT(value)


def sorted_dumps(value: dict[str, Any]) -> bytes | None:
    """A flat object of text, whole numbers, booleans and nulls as compact JSON with its
    keys sorted — byte for byte ``json.dumps(sort_keys=True, separators=(",", ":"),
    ensure_ascii=False)`` (tests/osmosis_client/test_json.py) — or None for anything
    else (the caller encodes it the standard library's way)."""
    for item in value.values():
        if item is not None and type(item) not in _FLAT:
            return None
    try:
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    except TypeError:  # an integer beyond 64 bits, a key that is not text, a surrogate
        return None


_FLAT = frozenset({str, int, bool})


def loads(raw: bytes | str) -> Any:
    """``json.loads``, by orjson where both agree (see the module)."""
    data = raw if isinstance(raw, bytes) else raw.encode("utf-8", "surrogatepass")
    if _LONG_NUMBER not in data.translate(_DIGITS):
        try:
            return orjson.loads(data)
        except orjson.JSONDecodeError:
            pass  # the standard library decides, with its own message
    return json.loads(raw)
