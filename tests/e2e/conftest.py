from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.e2e.platform_double import PlatformDouble

Run = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture
def platform() -> Iterator[PlatformDouble]:
    with PlatformDouble() as double:
        yield double


def osmosis_command() -> list[str]:
    """The installed console script (falls back to the module beside this interpreter)."""
    script = Path(sys.executable).parent / "osmosis"
    if script.exists():
        return [str(script)]
    found = shutil.which("osmosis")
    return [found] if found else [sys.executable, "-m", "osmosis_cli.main"]


@pytest.fixture
def run_osmosis(platform: PlatformDouble, tmp_path: Path) -> Run:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OSMOSIS_")} | {
        "OSMOSIS_WARM": "0"
    }
    env.update(
        OSMOSIS_CONFIG_DIR=str(tmp_path / "cfg"),
        OSMOSIS_TOKEN_STORE="file",
        OSMOSIS_PLATFORM_URL=platform.url,
        OSMOSIS_TOKEN_PLATFORM_URL=platform.url,
        PYTHON_KEYRING_BACKEND="keyring.backends.fail.Keyring",
        HOME=str(tmp_path / "home"),
    )

    def run(
        *args: str,
        input: str = "",
        extra_env: dict[str, str] | None = None,
        timeout: float = 30,
        cwd: Path | None = None,
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*osmosis_command(), *args],
            input=input,
            capture_output=True,
            text=True,
            env={**env, **(extra_env or {})},
            timeout=timeout,
            cwd=cwd or tmp_path,
        )

    return run
