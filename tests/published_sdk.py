"""The published ``osmosis-ai`` 0.3 SDK, installed from the package index into a cached
environment outside the checkout, for the compatibility tests.

``PUBLISHED_VERSION`` is the newest 0.3.x that resolves on this machine's index (0.3.8
needs a ``certifi`` newer than the index has). The environment lives under
``$OSMOSIS_CI_CACHE`` (default ``~/.cache/osmosis-ci``), keyed by version and extras,
and is built once (under a file lock; a finished build leaves a marker) with ``uv`` — the one
on PATH, or one installed into the same cache.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

PUBLISHED_VERSION = "0.3.7"
EXTRAS = "server,openai-agents,strands"
#: resolved now, before the test fixtures point HOME at a temp dir
CACHE = Path(os.environ.get("OSMOSIS_CI_CACHE") or Path("~/.cache/osmosis-ci").expanduser())
MARKER = ".osmosis-ci-complete"
#: this machine's trust store for the package index, read before the test fixtures clear
#: the TLS variables (a proxy with its own CA stands between some machines and PyPI)
INDEX_TLS = {k: os.environ[k] for k in ("SSL_CERT_FILE", "SSL_CERT_DIR") if os.environ.get(k)}


def _works(python: Path) -> bool:
    try:
        done = subprocess.run(
            [str(python), "-c", "import sys; sys.exit(sys.version_info < (3, 12))"],
            capture_output=True,
            timeout=30,
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


def python312() -> Path | None:
    """A working Python >= 3.12 (pyenv shims on PATH fail unless selected, so pyenv's
    versions are looked up directly), or None."""
    candidates: list[Path] = []
    given = os.environ.get("OSMOSIS_TEST_PYTHON312")
    if given:
        candidates.append(Path(given))
    if sys.version_info >= (3, 12):
        candidates.append(Path(sys.executable))
    pyenv_root = os.environ.get("PYENV_ROOT") or str(Path("~/.pyenv").expanduser())
    for folder in sorted(Path(pyenv_root, "versions").glob("3.1[2-9]*"), reverse=True):
        candidates.append(folder / "bin" / "python3")
    for name in ("python3.13", "python3.12"):
        found = shutil.which(name)
        if found:
            candidates.append(Path(found))
    return next((c for c in candidates if c.exists() and _works(c)), None)


@contextmanager
def _locked(name: str) -> Iterator[None]:
    CACHE.mkdir(parents=True, exist_ok=True)
    with open(CACHE / f"{name}.lock", "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield


def uv() -> Path:
    """``uv`` from PATH, else installed (once) into the cache."""
    found = shutil.which("uv")
    if found:
        return Path(found)
    tools = CACHE / "tools"
    binary = tools / "bin" / "uv"
    with _locked("tools"):
        if not binary.exists():
            subprocess.run([sys.executable, "-m", "venv", str(tools)], check=True)
            subprocess.run(
                [str(tools / "bin" / "python"), "-m", "pip", "install", "-q", "uv"], check=True
            )
    return binary


def uv_env(python: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"}
    env.update(INDEX_TLS)
    env.update(
        UV_PYTHON_DOWNLOADS="never",
        UV_PYTHON=str(python),
        UV_CACHE_DIR=str(CACHE / "uv-cache"),
    )
    return env


def published_python(python: Path) -> Path:
    """The cached environment's interpreter (built on first use; a build cut short has
    no marker and is rebuilt)."""
    target = CACHE / f"published-{PUBLISHED_VERSION}-{EXTRAS.replace(',', '-')}"
    if (target / MARKER).exists():
        return target / "bin" / "python"
    with _locked(target.name):
        if not (target / MARKER).exists():
            shutil.rmtree(target, ignore_errors=True)
            env = uv_env(python)
            tool = str(uv())
            subprocess.run(
                [tool, "venv", "-q", "--python", str(python), str(target)], check=True, env=env
            )
            requirement = f"osmosis-ai[{EXTRAS}]=={PUBLISHED_VERSION}"
            subprocess.run(
                [
                    tool,
                    "pip",
                    "install",
                    "-q",
                    "--python",
                    str(target / "bin" / "python"),
                    requirement,
                ],
                check=True,
                env=env,
            )
            (target / MARKER).write_text(PUBLISHED_VERSION + "\n")
    return target / "bin" / "python"
