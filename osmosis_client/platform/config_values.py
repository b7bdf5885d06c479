"""The typed values configs share (training, benchmark): counts, bounded numbers and
non-blank strings — each refused with one error that says what was written."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Annotated, Any

from pydantic import Field, PlainValidator, StrictInt, StrictStr

NonBlank = Annotated[StrictStr, Field(pattern=r"\S")]
Count = Annotated[StrictInt, Field(ge=1)]


def number(
    *, gt: float | None = None, ge: float | None = None, le: float | None = None
) -> Callable[[Any], int | float]:
    """A check of a finite int or float (never a bool or a string) within the bounds:
    one error per value, where a strict ``int | float`` union reports one per member."""

    def check(value: Any) -> int | float:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ValueError(f"must be a number, got {value!r}")
        if not math.isfinite(value):
            raise ValueError("must be a finite number")
        for bound, ok, word in ((gt, value > (gt or 0), ">"), (ge, value >= (ge or 0), ">=")):
            if bound is not None and not ok:
                raise ValueError(f"must be {word} {bound:g}, got {value!r}")
        if le is not None and value > le:
            raise ValueError(f"must be <= {le:g}, got {value!r}")
        return value

    return check


Positive = Annotated[int | float, PlainValidator(number(gt=0))]
Temperature = Annotated[int | float, PlainValidator(number(ge=0))]
TopP = Annotated[int | float, PlainValidator(number(gt=0, le=1))]
Fraction = Annotated[int | float, PlainValidator(number(ge=0, le=1))]
