"""``uv sync`` of a rollout's project without touching the user's tree.

``uv sync --project rollouts/NAME`` writes ``rollouts/NAME/uv.lock`` (when there was
none), ``.venv`` and, installing the project, ``*.egg-info``: the next ``eval submit``
then sees a dirty rollout. So the project files (``pyproject.toml``, and ``uv.lock``,
``.python-version``, ``README*`` when present) are copied to a directory of ours, and
that copy is synced with ``--no-install-project`` into an environment beside it:

    ~/.cache/osmosis-client/rollout-envs/NAME-<digest of the rollout's path>/
      project/   the copy uv syncs (and may lock)
      venv/      the rollout's environment (what the server runs on)

The rollout's own code is imported from its directory (the server runs there with
``rollouts/NAME`` and ``rollouts/NAME/src`` on its path), as ``python main.py`` would.
A project uv must read in place — local ``path`` sources, a uv workspace — is synced
in place as before; so is one whose environment ``UV_PROJECT_ENVIRONMENT`` names.
The sync is skipped while the project files and the environment are unchanged.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import subprocess
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from osmosis_client.errors import InvalidInputError

SYNC_STAMP = ".osmosis-client-sync"
SYNC_TIMEOUT = 1800.0
#: what the copy holds: what uv reads to resolve a project's dependencies
PROJECT_FILES = ("pyproject.toml", "uv.lock", ".python-version")
MAX_SHOWN = 40  # lines of uv's own error shown under ours

Note = Callable[[str], None]


class RolloutEnvironmentError(InvalidInputError):
    """The rollout's Python environment is missing, unusable, or failed to sync (exit 2)."""

    code = "ROLLOUT_ENVIRONMENT"


class SyncFailed(RolloutEnvironmentError):
    """``uv sync`` failed; ``problems`` holds uv's own error lines."""

    code = "ROLLOUT_SYNC_FAILED"

    def __init__(self, message: str, *, hint: str, problems: list[str]) -> None:
        super().__init__(message, hint=hint, code=self.code)
        self.problems = problems


@dataclass(frozen=True)
class SyncTarget:
    project: Path  # where uv sync runs (--project)
    environment: Path  # the environment it syncs (UV_PROJECT_ENVIRONMENT)
    copied: bool  # a copy of the project files, outside the user's tree

    @property
    def python(self) -> Path:
        return self.environment / "bin" / "python"


def envs_root(environ: Mapping[str, str]) -> Path:
    given = environ.get("OSMOSIS_ROLLOUT_ENVS")
    if given:
        return Path(given).expanduser()
    cache = environ.get("XDG_CACHE_HOME") or str(Path("~/.cache").expanduser())
    return Path(cache) / "osmosis-client" / "rollout-envs"


def sync_target(rollout_dir: Path, environ: Mapping[str, str] | None = None) -> SyncTarget:
    environ = os.environ if environ is None else environ
    configured = environ.get("UV_PROJECT_ENVIRONMENT")
    if configured:
        path = Path(configured).expanduser()
        return SyncTarget(rollout_dir, path if path.is_absolute() else rollout_dir / path, False)
    if _read_in_place(rollout_dir / "pyproject.toml"):
        return SyncTarget(rollout_dir, rollout_dir / ".venv", False)
    key = hashlib.sha256(str(rollout_dir.resolve()).encode()).hexdigest()[:12]
    home = envs_root(environ) / f"{rollout_dir.name}-{key}"
    return SyncTarget(home / "project", home / "venv", True)


def _read_in_place(pyproject: Path) -> bool:
    """Whether uv must read the project where it is: local path sources (relative to
    it) or a uv workspace."""
    import tomlkit

    try:
        data: dict[str, Any] = tomlkit.parse(pyproject.read_text(encoding="utf-8")).unwrap()
    except (OSError, UnicodeDecodeError, tomlkit.exceptions.TOMLKitError):
        return False
    uv = data.get("tool", {}).get("uv", {}) if isinstance(data.get("tool"), dict) else {}
    if not isinstance(uv, dict):
        return False
    if "workspace" in uv:
        return True
    sources = uv.get("sources") or {}
    entries = [e for v in sources.values() for e in (v if isinstance(v, list) else [v])]
    return any(isinstance(e, dict) and ("path" in e or e.get("workspace")) for e in entries)


def fingerprint(rollout_dir: Path, environment: Path) -> str | None:
    """The project files and the environment's state, or None when there is no
    environment yet. A package installed, upgraded or removed by hand changes the set
    of ``*.dist-info`` directories, so the environment is synced again (site-packages'
    modification time would also change when Python writes bytecode there)."""
    config = environment / "pyvenv.cfg"
    if not config.is_file():
        return None
    digest = hashlib.blake2b(digest_size=16)
    for name in PROJECT_FILES:
        try:
            digest.update(name.encode() + b"\0" + (rollout_dir / name).read_bytes())
        except OSError:
            digest.update(name.encode() + b"\0-")
    digest.update(config.read_bytes())
    for site in sorted((environment / "lib").glob("python*/site-packages")):
        installed = sorted(p.name for p in site.glob("*.dist-info"))
        digest.update(f"{site.parent.name}:{','.join(installed)}".encode())
    digest.update(os.environ.get("UV_PYTHON", "").encode())
    return digest.hexdigest()


def sync(
    uv: str, rollout_dir: Path, env: Mapping[str, str], *, note: Note | None = None
) -> tuple[str, SyncTarget]:
    """Sync unless nothing changed since the last time: ("synced" | "in sync", target)."""
    target = sync_target(rollout_dir)
    stamp = target.environment / SYNC_STAMP
    before = fingerprint(rollout_dir, target.environment)
    with contextlib.suppress(OSError):
        if before is not None and stamp.read_text().strip() == before:
            return "in sync", target
    shown = f"rollouts/{rollout_dir.name}"
    if note is not None:
        note(f"syncing the rollout's environment: uv sync --project {shown}")
    command = [uv, "sync", "--project", str(target.project)]
    if target.copied:
        _copy_project(rollout_dir, target.project)
        command.append("--no-install-project")
    run_env = {**env, "UV_PROJECT_ENVIRONMENT": str(target.environment)}
    try:
        done = subprocess.run(
            command,
            capture_output=True,
            text=True,
            env=run_env,
            timeout=SYNC_TIMEOUT,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise RolloutEnvironmentError(
            f"uv sync --project {shown} failed: {exc}", code="ROLLOUT_SYNC_FAILED"
        ) from exc
    if done.returncode != 0:
        lines = [line for line in (done.stderr or done.stdout).splitlines() if line.strip()]
        raise SyncFailed(
            f"uv sync --project {shown} failed (exit {done.returncode}); uv said:",
            hint="fix the rollout's pyproject.toml; without internet or a managed Python, "
            "point UV_PYTHON at a local 3.12+ interpreter",
            problems=lines[-MAX_SHOWN:],
        )
    after = fingerprint(rollout_dir, target.environment)
    if after is not None:
        with contextlib.suppress(OSError):  # no stamp: the next run syncs again
            stamp.write_text(after + "\n")
    return "synced", target


def _copy_project(rollout_dir: Path, project: Path) -> None:
    """The project files, copied fresh (a file removed from the rollout goes too)."""
    project.mkdir(parents=True, exist_ok=True)
    readmes = [p.name for p in rollout_dir.glob("README*") if p.is_file()]
    for name in (*PROJECT_FILES, *readmes):
        source, copy = rollout_dir / name, project / name
        if source.is_file():
            shutil.copyfile(source, copy)
        elif copy.exists() and name != "uv.lock":  # uv keeps its own lock of the copy
            copy.unlink()


def import_path(rollout_dir: Path, existing: str | None) -> str:
    """``PYTHONPATH`` for the server: the rollout's directory (and ``src/``) first."""
    parts = [str(rollout_dir.resolve())]
    if (rollout_dir / "src").is_dir():
        parts.append(str((rollout_dir / "src").resolve()))
    if existing:
        parts.append(existing)
    return os.pathsep.join(parts)
