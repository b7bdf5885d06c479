"""osmosis_client._json: orjson on the hot paths, the standard library's verdicts."""

from __future__ import annotations

import dataclasses
import datetime
import json
import math

import pytest
from hypothesis import given, settings, strategies as st

from osmosis_client import _json

SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),  # beyond 64 bits too
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(),
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)
FLAT = st.dictionaries(
    st.text(), st.one_of(st.none(), st.booleans(), st.integers(), st.text()), max_size=6
)


def _stdlib_sorted(value: object) -> bytes:
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return text.encode("utf-8", "surrogatepass")


@settings(max_examples=300, deadline=None)
@given(VALUES)
def test_what_is_encoded_decodes_to_the_same_value(value: object) -> None:
    text = _json.compact(value)
    assert json.loads(text) == value
    assert _json.loads(text) == value
    assert _json.loads(text.encode()) == value
    assert _json.dumps(value) == text.encode()


@settings(max_examples=300, deadline=None)
@given(VALUES)
def test_decoding_agrees_with_the_standard_library(value: object) -> None:
    for text in (json.dumps(value), json.dumps(value, ensure_ascii=False, indent=1)):
        assert _json.loads(text) == json.loads(text)
        assert _json.loads(text.encode("utf-8", "surrogatepass")) == json.loads(text)


@settings(max_examples=500, deadline=None)
@given(FLAT)
def test_a_flat_row_sorts_byte_for_byte_as_the_standard_library(row: dict) -> None:
    fast = _json.sorted_dumps(row)
    if fast is not None:  # None: the caller encodes it the standard library's way
        assert fast == _stdlib_sorted(row)


def test_what_sorted_dumps_leaves_to_the_standard_library() -> None:
    assert _json.sorted_dumps({"a": [1]}) is None  # nested
    assert _json.sorted_dumps({"a": 1.5}) is None  # floats: their text may differ
    assert _json.sorted_dumps({"a": 2**70}) is None  # beyond 64 bits
    assert _json.sorted_dumps({"a": "\ud800"}) is None  # a lone surrogate
    assert _json.sorted_dumps({"b": 1, "a": "x"}) == b'{"a":"x","b":1}'


def test_long_integers_stay_exact() -> None:
    big = 123456789012345678901234567890
    assert _json.loads(f"[{big}, 1]") == [big, 1]
    assert _json.loads(f'{{"id": {-big}}}'.encode()) == {"id": -big}
    assert _json.compact([big]) == f"[{big}]"


def test_the_standard_library_decides_what_orjson_refuses() -> None:
    assert math.isnan(_json.loads("NaN"))  # json.loads takes the token, as before
    assert _json.loads(b'{"a": Infinity}') == {"a": math.inf}
    with pytest.raises(ValueError, match="Expecting value: line 1 column 4"):
        _json.loads(b"[1,")
    with pytest.raises(ValueError):
        _json.loads(b"\xff\xfe{")  # not UTF-8
    deep = "[" * 2000 + "]" * 2000
    with pytest.raises(RecursionError):  # the caller (_wire.loads) makes it a ValueError
        _json.loads(deep)


def test_encoding_refuses_what_the_standard_library_refuses() -> None:
    @dataclasses.dataclass
    class Point:
        x: int

    for value in (object(), Point(1), datetime.datetime(2026, 1, 1), {1, 2}, b"raw"):
        with pytest.raises(TypeError):
            _json.compact({"value": value})
    assert _json.compact({1: "a", None: "b"}) == '{"1":"a","null":"b"}'  # stdlib's keys
    assert _json.compact("\ud800") == '"\ud800"'  # a lone surrogate, as the stdlib wrote it


def test_a_non_finite_float_is_written_as_null() -> None:
    assert _json.compact([math.nan, math.inf, -math.inf, 1.5]) == "[null,null,null,1.5]"
    assert _json.dumps({"score": math.nan}) == b'{"score":null}'
