"""What every config reader shares: the TOML parsed with its syntax error located, and
problems collected as ``FILE:LINE:COL: key: message`` so one run reports them all.

Eval configs, suites, training configs and benchmark configs each check their own
rules with these; nothing here knows a schema.
"""

from __future__ import annotations

import difflib
import math
import re
import sys
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from osmosis_client._toml import locate, locate_keys
from osmosis_client.errors import ConfigError, Problem


class Collector:
    """Problems of one file. ``numbered``: keys keep array indexes (``agents.0.model``)
    and are located in arrays of tables; otherwise indexes are dropped."""

    def __init__(
        self,
        file: str,
        positions: Mapping[tuple[Any, ...], tuple[int, int]],
        *,
        numbered: bool = False,
    ) -> None:
        self.file = file
        self.positions = positions
        self.numbered = numbered
        self.problems: list[Problem] = []

    @classmethod
    def for_text(cls, file: str, text: str, *, numbered: bool = False) -> Collector:
        return cls(file, locate(text) if numbered else locate_keys(text), numbered=numbered)

    def add(self, path: Iterable[str | int], message: str) -> None:
        given = tuple(path)
        keys = given if self.numbered else tuple(str(p) for p in given if not isinstance(p, int))
        line = col = None
        for n in range(len(keys), 0, -1):
            if keys[:n] in self.positions:
                line, col = self.positions[keys[:n]]
                break
        else:  # a table only written as [name.sub]: where its first sub-table starts
            below = [at for key, at in self.positions.items() if key[: len(keys)] == keys]
            if keys and below:
                line, col = min(below)
        self.problems.append(Problem(self.file, line, col, ".".join(map(str, keys)), message))

    def raise_if_any(self, *, error: str | None = None) -> None:
        """A ConfigError listing every problem found (nothing when there is none).
        ``error``: the published CLI's ``details.error`` ("Invalid training config"),
        sent with its ``issues`` list for scripts that read them."""
        if not self.problems:
            return
        count = len(self.problems)
        data = None
        if error is not None:
            issues = [{"key": p.key, "message": p.message, "line": p.line} for p in self.problems]
            data = {"error": error, "issues": issues}
        raise ConfigError(
            f"{self.file} has {count} problem{'s' if count > 1 else ''}",
            self.problems,
            hint="fix the keys listed below",
            data=data,
        )


def suggest(word: str, options: Iterable[str]) -> str:
    """`` (did you mean 'x'?)`` for a near miss, else nothing."""
    close = difflib.get_close_matches(word, list(options), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def pydantic_message(err: Mapping[str, Any], *, with_input: bool = False) -> str:
    """A pydantic error in the words a config's author reads; ``with_input``: a type
    error also says what was written (``must be a number, got 'fast'``)."""
    message = _message(err)
    shown = err["type"] not in ("missing", "extra_forbidden", "value_error")
    if with_input and shown and "input" in err and not isinstance(err["input"], dict | list):
        message += f", got {err['input']!r}"
    return message


def strict_message(err: Mapping[str, Any], keys: Iterable[str]) -> str:
    """:func:`pydantic_message` (with what was written) for a model that refuses unknown
    keys: one of them is "Unrecognized", with the nearest of ``keys`` suggested."""
    if err["type"] == "extra_forbidden":
        return "Unrecognized key" + suggest(str(err["loc"][-1]), keys)
    return pydantic_message(err, with_input=True)


#: pydantic's error types in a config author's words, as they are
FIXED = {
    "missing": "is required",
    "int_type": "must be an integer",
    "int_parsing": "must be an integer",
    "int_from_float": "must be an integer",
    "float_type": "must be a number",
    "float_parsing": "must be a number",
    "string_type": "must be a string",
    "bool_type": "must be true or false",
    "list_type": "must be an array",
    "dict_type": "must be a table",
    "model_type": "must be a table",
    "string_too_short": "must not be empty",
    "extra_forbidden": "unknown key",
    "finite_number": "must be a finite number",
}
#: ... and those that say their bound: the words, with ``{}`` for the bound's ctx key
BOUNDED = {
    "greater_than_equal": ("must be >= {}", "ge"),
    "greater_than": ("must be > {}", "gt"),
    "less_than_equal": ("must be <= {}", "le"),
    "literal_error": ("must be one of {}", "expected"),
    "too_long": ("must have at most {} items", "max_length"),
    "too_short": ("must have at least {} item(s)", "min_length"),
    "union_tag_invalid": ("type must be one of {}", "expected_tags"),
    "union_tag_not_found": ("needs a {} key", "discriminator"),
}


def _message(err: Mapping[str, Any]) -> str:
    kind = err["type"]
    ctx = err.get("ctx") or {}
    if kind in FIXED:
        return FIXED[kind]
    if kind == "string_pattern_mismatch" and ctx.get("pattern") == r"\S":
        return "must not be blank"
    if kind in BOUNDED:
        words, key = BOUNDED[kind]
        return words.format(ctx.get(key))
    return str(err["msg"]).removeprefix("Value error, ")


def check_tables(
    data: Mapping[str, Any],
    sections: Mapping[str, type[BaseModel]],
    out: Collector,
    message: Callable[[Mapping[str, Any], type[BaseModel]], str],
    *,
    known_only: bool = False,
) -> None:
    """Each of ``sections`` that is a table, validated by its model (one failure per
    field, in ``message``'s words; ``known_only``: the model's keys alone, when unknown
    keys are said elsewhere), and ``[env]``'s values strings."""
    for section, model in sections.items():
        value = data.get(section)
        if not isinstance(value, dict):
            continue
        if known_only:
            value = {k: v for k, v in value.items() if k in model.model_fields}
        try:
            model.model_validate(value)
        except ValidationError as exc:
            for err in exc.errors():
                out.add([section, *err["loc"]], message(err, model))
    env = data.get("env")
    for key, item in env.items() if isinstance(env, dict) else ():
        if not isinstance(item, str):
            out.add(["env", key], f"must be a string, got {item!r}")


def _last_mention(text: str, message: str) -> tuple[int | None, int | None]:
    """Where a key named in a tomlkit message (e.g. a duplicate) last appears."""
    match = re.search(r'"([^"]+)"', message)
    if not match:
        return None, None
    key = match.group(1).split(".")[-1]
    pattern = re.compile(rf"^\s*[\"']?{re.escape(key)}[\"']?\s*=")
    found: tuple[int | None, int | None] = (None, None)
    for lineno, line in enumerate(text.splitlines(), 1):
        if pattern.match(line):
            found = (lineno, len(line) - len(line.lstrip()) + 1)
    return found


def parse_toml(text: str, shown: str) -> dict[str, Any]:
    """The document as plain Python values; a syntax error is a located ConfigError.
    The standard library's parser reads it (a tenth of tomlkit's import and parse time on
    every run); tomlkit is asked only to locate what is wrong."""
    if sys.version_info >= (3, 11):  # 3.10 has no tomllib: tomlkit alone
        import tomllib

        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            data = _parse_located(text, shown, exc)
    else:
        data = _parse_located(text, shown, None)
    _check_integers(data, text, shown)
    return data


#: TOML integers are 64-bit: "an integer that cannot be represented losslessly must be
#: an error" (the spec), which both parsers leave to us
INT_RANGE = range(-(2**63), 2**63)


def _check_integers(data: Any, text: str, shown: str) -> None:
    out: Collector | None = None
    for path, value in _leaves(data, ()):
        if isinstance(value, int) and not isinstance(value, bool) and value not in INT_RANGE:
            out = out or Collector.for_text(shown, text, numbered=True)
            out.add(path, "is too large for a TOML integer (64 bits)")
    if out is not None:
        out.raise_if_any()


def _leaves(value: Any, path: tuple[Any, ...]) -> Iterable[tuple[tuple[Any, ...], Any]]:
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _leaves(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _leaves(item, (*path, index))
    else:
        yield path, value


#: a template's fill-me-in value, ``"<your-base-model>"``
PLACEHOLDER = re.compile(r"^\s*<[^<>\n]+>\s*$")


def check_sent_values(value: Any, where: list[str], out: Collector) -> None:
    """Values sent to the platform as they are written ([advanced]): JSON has no NaN or
    Infinity, and a template's ``<placeholder>`` is not a value."""
    for path, item in _leaves(value, tuple(where)):
        if isinstance(item, float) and not math.isfinite(item):
            out.add(path, f"must be a finite number, got {item!r} (JSON has no NaN or Infinity)")
        elif isinstance(item, str) and PLACEHOLDER.match(item):
            out.add(path, f"{item} is a template placeholder: replace it with a real value")


def _parse_located(text: str, shown: str, refused: ValueError | None) -> dict[str, Any]:
    import tomlkit
    from tomlkit.exceptions import ParseError, TOMLKitError

    try:
        document = tomlkit.parse(text)
    except TOMLKitError as exc:
        message = str(exc).split(" at line ")[0]
        line: int | None
        col: int | None
        if isinstance(exc, ParseError):
            line, col = exc.line, exc.col + 1
        else:
            line, col = _last_mention(text, message)
        raise _syntax_error(shown, line, col, message) from exc
    if refused is not None:  # only the standard library refuses it: its words, located
        found = re.search(r"\(at line (\d+), column (\d+)\)", str(refused))
        line, col = (int(found[1]), int(found[2])) if found else (None, None)
        raise _syntax_error(shown, line, col, str(refused).split(" (at line")[0]) from refused
    data: dict[str, Any] = document.unwrap()
    return data


def _syntax_error(shown: str, line: int | None, col: int | None, message: str) -> ConfigError:
    problem = Problem(shown, line, col, "", f"invalid TOML: {message}")
    return ConfigError(
        f"{shown} is not valid TOML", [problem], hint="fix the syntax at the position shown"
    )


def read_config_text(path: Path) -> str:
    """A config file's text; a missing, unreadable or non-UTF-8 file is a ConfigError."""
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise ConfigError(
            f"config file {path} does not exist", hint="check the path", code="CONFIG_NOT_FOUND"
        ) from exc
    except IsADirectoryError as exc:
        raise ConfigError(f"{path} is a directory, not a config file") from exc
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path} is not UTF-8 text") from exc
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror}") from exc


__all__ = [
    "PLACEHOLDER",
    "Collector",
    "check_sent_values",
    "parse_toml",
    "pydantic_message",
    "read_config_text",
    "suggest",
]
