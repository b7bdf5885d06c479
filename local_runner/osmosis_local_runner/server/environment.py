"""The rollout's own Python: found, synced and checked before anything starts.

First that applies:

1. ``--rollout-python PATH`` / ``[local] rollout_python`` (an interpreter, or a
   virtual environment's directory);
2. ``uv`` (on ``PATH`` or next to our interpreter): the project synced into an
   environment of ours, leaving the user's tree alone (:mod:`.uv_sync`) — skipped
   when the project files and the environment are unchanged since the last sync;
3. ``rollouts/<name>/.venv/bin/python``.

``uv`` runs with ``UV_PYTHON_DOWNLOADS=never`` (unless set otherwise). The chosen
interpreter is then asked, in one short subprocess, for its version and whether
``osmosis_ai`` is installed: Python < 3.12 or a missing SDK is one clear error
before any model call. The server later runs on that interpreter directly, so it
is our own child (signals and the death signal reach it; no launcher in between).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from osmosis_local_runner.server.uv_sync import RolloutEnvironmentError, sync

MIN_PYTHON = (3, 12)
PROBE_TIMEOUT = 120.0  # seconds; `uv run` may build the project on its first call

#: one subprocess: the interpreter's path and version, and the SDK it can import
PROBE = """\
import importlib.util, json, site, sys
sdk = None
try:
    from importlib.metadata import version
    sdk = version("osmosis-ai")
except Exception:
    pass
print(json.dumps({"executable": sys.executable, "version": list(sys.version_info[:3]),
                  "sdk": sdk, "importable": importlib.util.find_spec("osmosis_ai") is not None,
                  "site_packages": site.getsitepackages()}))
"""


@dataclass(frozen=True)
class RolloutPython:
    """The interpreter a rollout server runs on."""

    executable: Path
    origin: str  # "--rollout-python", "[local] rollout_python", "uv", ".venv"
    version: tuple[int, int, int]
    sdk: str | None  # the installed osmosis-ai version
    sync: str | None = None  # uv: "synced" or "in sync"
    #: where its distributions are installed (what keys a warm interpreter)
    site_packages: tuple[str, ...] = ()

    def describe(self) -> str:
        version = ".".join(map(str, self.version))
        sdk = f", osmosis-ai {self.sdk}" if self.sdk else ""
        how = {"uv": f"uv, {self.sync}"}.get(self.origin, self.origin)
        return f"Python {version}{sdk} ({how})"


Note = Callable[[str], None]


def find_uv() -> str | None:
    """``uv`` on PATH, else next to our own interpreter (a venv with uv installed)."""
    found = shutil.which("uv")
    if found:
        return found
    beside = Path(sys.executable).parent / "uv"
    return str(beside) if beside.is_file() and os.access(beside, os.X_OK) else None


def tool_env(base: Mapping[str, str] | None = None) -> dict[str, str]:
    """Our environment for ``uv`` and probes: no ``VIRTUAL_ENV`` (ours is not the
    rollout's), downloads of Pythons off unless asked for."""
    env = {k: v for k, v in (base if base is not None else os.environ).items()}
    env.pop("VIRTUAL_ENV", None)
    env.setdefault("UV_PYTHON_DOWNLOADS", "never")
    return env


def resolve(
    rollout_dir: Path,
    *,
    given: Path | None = None,
    given_by: str = "--rollout-python",
    note: Note | None = None,
    uv: str | bool | None = True,
) -> RolloutPython:
    """Find, sync and check the rollout's interpreter (``uv``: a path, True to look for
    one, False/None to skip uv)."""
    shown = _shown(rollout_dir)
    if given is not None:
        return _probe(_given_python(given, given_by), origin=given_by, shown=shown, cwd=rollout_dir)
    uv_path = find_uv() if uv is True else (uv or None)
    if uv_path:
        state, target = sync(uv_path, rollout_dir, tool_env(), note=note)
        return _probe(
            [str(target.python)], origin="uv", shown=shown, sync_state=state, cwd=rollout_dir
        )
    venv_python = rollout_dir / ".venv" / "bin" / "python"
    if venv_python.exists():
        return _probe([str(venv_python)], origin=".venv", shown=shown, cwd=rollout_dir)
    raise RolloutEnvironmentError(
        f"no Python environment for {shown}: uv is not installed and {shown}/.venv does not exist",
        hint="install uv (it syncs the rollout's pyproject.toml), create "
        f"{shown}/.venv with osmosis-ai installed, or name an interpreter "
        "in [local] rollout_python",
        code="NO_ROLLOUT_PYTHON",
    )


def _shown(rollout_dir: Path) -> str:
    return f"rollouts/{rollout_dir.name}"


def _given_python(given: Path, given_by: str) -> list[str]:
    # absolute (never resolved: a venv's bin/python is a symlink that must stay in it),
    # as the probe and the server run in the rollout's folder, not here
    path = given.expanduser().absolute()
    if path.is_dir():
        candidate = path / "bin" / "python"
        if not candidate.exists():
            raise RolloutEnvironmentError(
                f"{given_by} {given} is a directory without bin/python",
                hint="name a Python interpreter, or a virtual environment's directory",
            )
        path = candidate
    if not path.exists():
        raise RolloutEnvironmentError(
            f"{given_by} {given} does not exist", hint="name a Python 3.12+ interpreter"
        )
    if not os.access(path, os.X_OK):
        raise RolloutEnvironmentError(f"{given_by} {given} is not executable")
    return [str(path)]


def _facts(command: list[str], *, origin: str, shown: str, cwd: Path) -> dict[str, Any]:
    """What PROBE prints on the interpreter: executable, version, the SDK it has."""
    where = " ".join(command[:1]) if origin != "uv" else f"uv's environment of {shown}"
    try:
        done = subprocess.run(
            [*command, "-c", PROBE],
            capture_output=True,
            text=True,
            # the real SDK, not osmosis-client's start-up layer (when both share a Python)
            env={**tool_env(), "OSMOSIS_NO_OSMOSIS_AI_LAYER": "1"},
            cwd=cwd,
            timeout=PROBE_TIMEOUT,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise RolloutEnvironmentError(
            f"cannot run the rollout's Python ({where}): {exc}",
            hint="check the interpreter, or name another one in [local] rollout_python",
        ) from exc
    facts = last_json(done.stdout)
    if done.returncode != 0 or facts is None:
        detail = last_line(done.stderr) or f"exit {done.returncode}"
        raise RolloutEnvironmentError(
            f"cannot run the rollout's Python ({where}): {detail}",
            hint="check the interpreter, or name another one in [local] rollout_python",
        )
    return facts


def _probe(
    command: list[str],
    *,
    origin: str,
    shown: str,
    cwd: Path,
    sync_state: str | None = None,
) -> RolloutPython:
    """Ask the interpreter for its facts, from the rollout's directory (so an
    ``osmosis_ai`` importable there counts, as it would for ``python main.py``)."""
    facts = _facts(command, origin=origin, shown=shown, cwd=cwd)
    raw = facts.get("version")
    numbers = [int(v) for v in raw[:3]] if isinstance(raw, list) else []
    version = (*numbers, 0, 0, 0)[:3]
    executable = Path(str(facts.get("executable") or command[0]))
    shown_version = ".".join(map(str, version))
    if version < MIN_PYTHON:
        raise RolloutEnvironmentError(
            f"the rollout's Python is {shown_version} ({executable}); rollouts written for "
            "the osmosis-ai 0.3 SDK need Python >= 3.12",
            hint=f'set requires-python = ">=3.12" in {shown}/pyproject.toml (uv: point '
            "UV_PYTHON at a 3.12+ interpreter), or name one in [local] rollout_python",
            code="ROLLOUT_PYTHON_TOO_OLD",
        )
    if not facts.get("importable"):
        raise RolloutEnvironmentError(
            f"osmosis_ai is not installed in the rollout's environment ({executable})",
            hint=f'add "osmosis-ai[server]>=0.3,<0.4" to {shown}/pyproject.toml and sync, '
            "or name an interpreter that has it in [local] rollout_python",
            code="ROLLOUT_SDK_MISSING",
        )
    sdk = facts.get("sdk")
    return RolloutPython(
        executable=executable,
        origin=origin,
        version=version,  # type: ignore[arg-type]
        sdk=str(sdk) if sdk else None,
        sync=sync_state,
        site_packages=tuple(str(p) for p in facts.get("site_packages") or () if isinstance(p, str)),
    )


def last_json(text: str) -> dict[str, Any] | None:
    """The last JSON object line of a probe's output (what user code printed is ignored)."""
    for line in reversed(text.splitlines()):
        line = line.strip()
        if line.startswith("{"):
            try:
                value = json.loads(line)
            except ValueError:
                return None
            return value if isinstance(value, dict) else None
    return None


def last_line(text: str) -> str:
    """The last non-empty line of a tool's output (its error, usually)."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1][:300] if lines else ""
