"""Dotenv-style files: ``NAME=value`` lines, as ``.env``, ``--env-file`` and
``--secrets-file`` use them.

One reader for all three: blank lines and ``#`` lines are skipped, a name may carry a
leading ``export``, one pair of matching quotes around the value is removed (inside
double quotes ``\\n``, ``\\"`` and ``\\\\`` are escapes), and an unquoted value ends at a
`` #`` comment. A bad line is named by its number; its content (maybe a secret) never
appears in the error.
"""

from __future__ import annotations

from pathlib import Path

from osmosis_client.errors import InvalidInputError

_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "\\": "\\"}


def parse_env_text(text: str, source: str) -> dict[str, str]:
    """The ``NAME: value`` pairs of ``text`` (later lines win)."""
    values: dict[str, str] = {}
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        name, sep, value = line.partition("=")
        name = name.strip()
        if name.startswith("export ") or name.startswith("export\t"):
            name = name[len("export") :].strip()
        if not sep or not name.isidentifier() or not name.isascii():
            raise InvalidInputError(
                f"invalid line {number} in {source}: expected NAME=value",
                hint="each line is NAME=value (a name of letters, digits and _), or a # comment",
                code="INVALID_ENV_FILE",
                data={"file": source, "line": number},
            )
        values[name] = _value(value.strip(), number, source)
    return values


def read_env_file(path: Path) -> dict[str, str]:
    """The pairs of the file at ``path`` (``-`` is not handled here: callers read stdin)."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError as exc:
        raise InvalidInputError(
            f"file {path} does not exist", hint="check the path", code="FILE_NOT_FOUND"
        ) from exc
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else "not UTF-8 text"
        raise InvalidInputError(
            f"cannot read {path}: {reason}", hint="check the file", code="FILE_UNREADABLE"
        ) from exc
    return parse_env_text(text, str(path))


def _value(value: str, number: int, source: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        inner = value[1:-1]
        return _unescape(inner) if value[0] == '"' else inner
    if value[:1] in ("'", '"'):
        raise InvalidInputError(
            f"invalid line {number} in {source}: the quoted value is not closed",
            hint="values span one line; close the quote",
            code="INVALID_ENV_FILE",
            data={"file": source, "line": number},
        )
    comment = value.find(" #")
    tab_comment = value.find("\t#")
    cut = min((i for i in (comment, tab_comment) if i >= 0), default=-1)
    return (value[:cut] if cut >= 0 else value).rstrip()


def _unescape(text: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(text):
        char = text[i]
        if char == "\\" and i + 1 < len(text) and text[i + 1] in _ESCAPES:
            out.append(_ESCAPES[text[i + 1]])
            i += 2
            continue
        out.append(char)
        i += 1
    return "".join(out)
