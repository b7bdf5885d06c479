"""Which mode a rollout runs in — decided by looking, never by importing.

A rollout whose directory has a ``pyproject.toml`` depending on ``osmosis-ai``, or
whose entrypoint imports ``osmosis_ai``, was written for the published SDK: it runs
in *server mode*. Anything else is osmosis-client's native in-process rollout.
``[local] mode`` / ``--rollout-mode`` override the guess.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from osmosis_client.errors import InvalidInputError

Mode = Literal["server", "native"]
MODES: tuple[Mode, ...] = ("server", "native")
PACKAGE = "osmosis-ai"
MODULE = "osmosis_ai"

_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")


@dataclass(frozen=True)
class Detection:
    mode: Mode
    reason: str  # for the plan line: "rollouts/x/pyproject.toml depends on osmosis-ai"


def normalize(name: str) -> str:
    """PEP 503: ``Osmosis_AI`` → ``osmosis-ai``."""
    return re.sub(r"[-_.]+", "-", name).lower()


def _requirements(project: dict[str, Any]) -> Iterator[str]:
    """Every requirement string a pyproject declares (PEP 621, PEP 735, uv, poetry)."""

    def strings(value: Any) -> Iterator[str]:
        if isinstance(value, str):
            yield value
        elif isinstance(value, list):
            for item in value:
                yield from strings(item)
        elif isinstance(value, dict):
            for item in value.values():
                yield from strings(item)

    section = project.get("project")
    if isinstance(section, dict):
        yield from strings(section.get("dependencies"))
        yield from strings(section.get("optional-dependencies"))
    yield from strings(project.get("dependency-groups"))
    tool = project.get("tool")
    if isinstance(tool, dict):
        uv = tool.get("uv")
        if isinstance(uv, dict):
            yield from strings(uv.get("dev-dependencies"))
        poetry = tool.get("poetry")
        if isinstance(poetry, dict):
            for key in ("dependencies", "dev-dependencies"):
                table = poetry.get(key)
                if isinstance(table, dict):
                    yield from table  # poetry lists names as keys


def depends_on_sdk(pyproject: Path) -> bool:
    """Whether ``pyproject`` declares a dependency on ``osmosis-ai`` (unreadable: no)."""
    import tomlkit

    try:
        data = tomlkit.parse(pyproject.read_text(encoding="utf-8")).unwrap()
    except (OSError, UnicodeDecodeError, tomlkit.exceptions.TOMLKitError):
        return False
    for requirement in _requirements(data):
        match = _NAME.match(requirement)
        if match and normalize(match.group(1)) == PACKAGE:
            return True
    return False


def imports_sdk(entrypoint: Path) -> bool:
    """Whether the file imports ``osmosis_ai`` anywhere (a syntax error: no)."""
    try:
        tree = ast.parse(entrypoint.read_bytes(), filename=str(entrypoint))
    except (OSError, SyntaxError, ValueError):
        return False
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        else:
            continue
        if any(name == MODULE or name.startswith(MODULE + ".") for name in names):
            return True
    return False


def check_mode(value: str, where: str) -> Mode:
    if value not in MODES:
        raise InvalidInputError(
            f"{where} must be 'server' or 'native', got {value!r}", code="BAD_ROLLOUT_MODE"
        )
    return value


def detect(
    rollout_dir: Path, entrypoint: Path, *, chosen: str | None = None, chosen_by: str = ""
) -> Detection:
    """The mode of the rollout at ``rollout_dir`` and why (``chosen``: an explicit choice)."""
    if chosen is not None:
        return Detection(check_mode(chosen, chosen_by), f"set by {chosen_by}")
    shown = f"rollouts/{rollout_dir.name}"
    pyproject = rollout_dir / "pyproject.toml"
    if pyproject.is_file() and depends_on_sdk(pyproject):
        return Detection("server", f"{shown}/pyproject.toml depends on {PACKAGE}")
    if entrypoint.is_file() and imports_sdk(entrypoint):
        return Detection("server", f"{shown}/{entrypoint.name} imports {MODULE}")
    return Detection("native", f"{shown} does not use {PACKAGE}")
