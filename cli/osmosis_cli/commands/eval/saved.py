"""A run's settings read back from its journal for ``--resume``: each of its flag's own
type, or one clear error naming the setting (a journal edited by hand, or damaged)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def checked(name: str, kind: Any, value: Any, paths: bool) -> Any:
    """A setting read back from a journal, of the flag's own type (a journal edited by
    hand, or damaged, is one clear error naming the setting — never a crash later)."""
    from pydantic import TypeAdapter, ValidationError

    from osmosis_client.errors import InvalidInputError

    flag = "--" + name.replace("_", "-")
    try:
        if paths:  # kept as text: a path, or a list of them
            if isinstance(value, list):
                return [Path(TypeAdapter(str).validate_python(v, strict=True)) for v in value]
            return Path(TypeAdapter(str).validate_python(value, strict=True))
        return TypeAdapter(kind).validate_python(value, strict=True)
    except ValidationError:
        raise InvalidInputError(
            f"the run's journal keeps a damaged setting {name}: {json.dumps(value)[:80]}",
            hint=f"give {flag} again, or start the run afresh",
            code="RESUME_MISMATCH",
            data={"setting": name},
        ) from None


