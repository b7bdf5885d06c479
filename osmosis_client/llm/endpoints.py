"""The endpoint registry: ``configs/endpoints.toml`` names model endpoints once.

    [[endpoint]]
    endpoint_id = "qwen3-8b"
    model = "Qwen/Qwen3-8B"
    url = "http://gpu-1:8000/v1"
    key = "VLLM_API_KEY"               # the NAME of an env var, never a value
    api_client_type = "openai_chat_completions"   # or "openai_responses", "anthropic_messages"
    headers = { "X-Team" = "rl" }      # alias: extra_headers (not both)
    think_tags = true                  # split <think>…</think> out of the answer (default)

Several rows with the same ``endpoint_id`` are replicas of one model: requests are
spread round-robin over them, and one that fails with a connection error or a 5xx
is skipped for a cool-down (see :class:`~osmosis_client.llm.client.ModelClient`).

A model name (``--model``, ``model_path``, ``endpoint_id``) is looked up here first,
and used literally otherwise.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from osmosis_client._toml import locate, locate_keys
from osmosis_client.errors import ConfigError, InvalidInputError, Problem

DEFAULT_PATH = Path("configs") / "endpoints.toml"
CLIENT_TYPES = ("openai_chat_completions", "openai_responses", "anthropic_messages")
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_HEADER_NAME = re.compile(r"^[A-Za-z0-9!#$%&'*+.^_`|~-]+$")


@dataclass(frozen=True)
class Endpoint:
    """One row of the registry (one replica)."""

    endpoint_id: str
    model: str
    url: str
    key: str | None = None  # the NAME of the env var holding the key
    api_client_type: str = "openai_chat_completions"
    headers: Mapping[str, str] = field(default_factory=dict)
    #: a server without a reasoning parser answers ``<think>…</think>answer``: split it
    think_tags: bool = True


@dataclass(frozen=True)
class Registry:
    path: Path | None
    endpoints: Mapping[str, tuple[Endpoint, ...]] = field(default_factory=dict)

    def get(self, name: str | None) -> tuple[Endpoint, ...]:
        """The replicas registered under ``name`` (empty: not in the registry)."""
        return self.endpoints.get(name, ()) if name else ()

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name in self.endpoints


EMPTY = Registry(None)


_BAD_VALUE = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")


def header_problem(name: object, value: object) -> str | None:
    """Why ``name: value`` cannot be sent as an HTTP header (CR/LF would end it early:
    every request would fail), or None."""
    if not isinstance(name, str) or not _HEADER_NAME.match(name):
        return f"{str(name)[:40]!r} is not a header name (letters, digits and !#$%&'*+.^_`|~-)"
    if not isinstance(value, str):
        return f"the value of {name} must be a string"
    if _BAD_VALUE.search(value):
        return f"the value of {name} holds a line break or another control character"
    return None


def parse_header(line: str, where: str = "--header") -> tuple[str, str]:
    """``"Name: Value"`` → ``("Name", "Value")``."""
    name, sep, value = line.partition(":")
    name, value = name.strip(), value.strip()
    if not sep or header_problem(name, value) is not None:
        raise InvalidInputError(
            f"{where} {line!r} is not a 'Name: Value' header",
            hint='e.g. "X-Team: rl" (one line, no control characters)',
            code="BAD_HEADER",
        )
    return name, value


def merge_headers(*layers: Mapping[str, str] | None) -> dict[str, str]:
    """Later layers win by name (compared case-insensitively, as HTTP does)."""
    merged: dict[str, str] = {}
    for layer in layers:
        for name, value in (layer or {}).items():
            for existing in [k for k in merged if k.lower() == name.lower()]:
                del merged[existing]
            merged[name] = value
    return merged


ROW_KEYS = frozenset(
    {
        "endpoint_id",
        "model",
        "url",
        "key",
        "api_client_type",
        "headers",
        "extra_headers",
        "think_tags",
    }
)


def load_registry(path: Path | None, *, required: bool = False) -> Registry:
    """Read a registry; a missing default file is an empty registry, a missing named
    one (``required``) an error. Every problem is reported at once, with its line."""
    if path is None:
        return EMPTY
    if not path.is_file():
        if required:
            raise InvalidInputError(
                f"endpoint registry {path} does not exist", hint="check the path"
            )
        return EMPTY
    shown = str(path)
    text, data = _read_toml(path)
    problems: list[Problem] = []
    top = locate_keys(text)
    for key in sorted(set(data) - {"endpoint"}):
        line, col = top.get((key,), (None, None))
        problems.append(Problem(shown, line, col, key, "unknown key (only [[endpoint]] rows)"))
    rows = data.get("endpoint") or []
    if not isinstance(rows, list):
        problems.append(Problem(shown, None, None, "endpoint", "must be [[endpoint]] rows"))
        rows = []
    rows_at = _RowPlaces(shown, text, problems)
    found: dict[str, list[Endpoint]] = {}
    for index, row in enumerate(rows):
        endpoint = _endpoint(row, rows_at.for_row(index))
        if endpoint is not None:
            found.setdefault(endpoint.endpoint_id, []).append(endpoint)
    if problems:
        raise ConfigError(
            f"{shown} has {len(problems)} problem{'s' if len(problems) != 1 else ''}",
            problems,
            hint="fix the rows listed below",
        )
    return Registry(path, {k: tuple(v) for k, v in found.items()})


def _read_toml(path: Path) -> tuple[str, dict[str, Any]]:
    import tomlkit

    try:
        text = path.read_text(encoding="utf-8")
        return text, tomlkit.parse(text).unwrap()
    except (OSError, UnicodeDecodeError, tomlkit.exceptions.TOMLKitError) as exc:
        shown = str(path)
        raise ConfigError(
            f"{shown} is not valid TOML",
            [Problem(shown, None, None, "", str(exc).splitlines()[0][:200])],
        ) from exc


class _RowPlaces:
    """Where each ``[[endpoint]]`` row and its keys are written, for problems."""

    def __init__(self, shown: str, text: str, problems: list[Problem]) -> None:
        self.shown = shown
        self.lines = _row_positions(text)
        self.where = locate(text)  # arrays of tables indexed: ("endpoint", 0, "headers", …)
        self.problems = problems

    def for_row(self, index: int) -> _Row:
        return _Row(self, index, self.lines[index] if index < len(self.lines) else None)


class _Row:
    def __init__(self, places: _RowPlaces, index: int, line: int | None) -> None:
        self.places, self.index, self.line = places, index, line
        self.failed = False

    def bad(self, key: str, message: str, *path: Any) -> None:
        """A problem at the row's line, or where ``path`` (under the row) is written."""
        at: tuple[int | None, int | None] = (self.line, None)
        for depth in range(len(path), 0, -1):
            found = self.places.where.get(("endpoint", self.index, *path[:depth]))
            if found is not None:
                at = found
                break
        self.failed = True
        problem = Problem(self.places.shown, at[0], at[1], f"endpoint[{self.index}].{key}", message)
        self.places.problems.append(problem)


def _endpoint(row: Any, at: _Row) -> Endpoint | None:
    """One row as an Endpoint, or None after reporting what is wrong with it."""
    if not isinstance(row, dict):
        at.bad("", "must be a table")
        return None
    for key in sorted(set(row) - ROW_KEYS):
        at.bad(key, "unknown key")
    for key in ("endpoint_id", "model", "url"):
        if not isinstance(row.get(key), str) or not row[key].strip():
            at.bad(key, "is required (a non-empty string)")
    url = row.get("url")
    if isinstance(url, str) and url.strip() and not re.match(r"^https?://[^\s/]+", url):
        at.bad("url", "must be an http(s) URL")
    key_env = row.get("key")
    if key_env is not None and (not isinstance(key_env, str) or not _ENV_NAME.match(key_env)):
        at.bad("key", "must be the NAME of an environment variable (never the key itself)")
    client_type = row.get("api_client_type", "openai_chat_completions")
    if client_type not in CLIENT_TYPES:
        at.bad("api_client_type", f"must be one of {', '.join(CLIENT_TYPES)}")
    headers = _headers(row, at)
    think_tags = row.get("think_tags", True)
    if not isinstance(think_tags, bool):
        at.bad("think_tags", "must be true or false")
    if at.failed:
        return None
    return Endpoint(
        endpoint_id=row["endpoint_id"].strip(),
        model=row["model"].strip(),
        url=row["url"].strip().rstrip("/"),
        key=key_env,
        api_client_type=client_type,
        headers=headers,
        think_tags=think_tags,
    )


def _headers(row: dict[str, Any], at: _Row) -> dict[str, str]:
    if "headers" in row and "extra_headers" in row:
        at.bad("headers", "set headers or extra_headers, not both")
    table = "headers" if "headers" in row else "extra_headers"
    headers = row.get(table, {})
    if not isinstance(headers, dict):
        at.bad(table, "must be a table of header names to string values")
        return {}
    for name, value in headers.items():
        problem = header_problem(name, value)
        if problem is not None:
            at.bad(f"{table}.{name}", problem, table, name)
    return dict(headers)


def _row_positions(text: str) -> list[int]:
    """The line of each ``[[endpoint]]`` header, in order."""
    return [
        number
        for number, line in enumerate(text.splitlines(), 1)
        if re.match(r"^\s*\[\[\s*endpoint\s*\]\]", line)
    ]
