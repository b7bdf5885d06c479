"""The CLI as a user without root meets files and directories it may not touch (issue
33): one clear line and a documented exit code, never an internal error.

The suite runs as root here, which ignores permissions: these tests then run the CLI
with the two capabilities that let root bypass them dropped (``setpriv``), so root obeys
mode bits like any user. Run as an ordinary user, they need nothing of the kind."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.e2e.conftest import osmosis_command
from tests.e2e.platform_double import PlatformDouble

pytestmark = pytest.mark.slow
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "quickstart"
DROP = "-dac_override,-dac_read_search"


def unprivileged() -> list[str]:
    """The prefix that makes the command obey file permissions."""
    if os.geteuid() != 0:
        return []
    if shutil.which("setpriv") is None:
        pytest.skip("running as root without setpriv (util-linux): permissions cannot apply")
    return ["setpriv", f"--bounding-set={DROP}", f"--inh-caps={DROP}"]


def osmosis(cwd: Path, *args: str, input: str = "", **env: str) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("OSMOSIS_")}
    base |= {
        "OSMOSIS_WARM": "0",
        "OSMOSIS_TOKEN_STORE": "file",
        "HOME": str(cwd),
        "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring",
    }
    return subprocess.run(
        [*unprivileged(), *osmosis_command(), *args],
        cwd=cwd,
        env=base | env,
        input=input,
        capture_output=True,
        text=True,
        timeout=60,
    )


def clean_failure(result: subprocess.CompletedProcess[str], code: int, words: str) -> None:
    assert result.returncode == code, result.stderr
    assert "internal error" not in result.stderr and "Traceback" not in result.stderr
    assert words in result.stderr, result.stderr


def test_an_unreadable_dataset_of_a_config_is_exit_2(tmp_path: Path) -> None:
    project = tmp_path / "qs"
    shutil.copytree(EXAMPLE, project, ignore=shutil.ignore_patterns(".osmosis"))
    (project / "data" / "arithmetic.jsonl").chmod(0)
    result = osmosis(
        project,
        "eval",
        "run",
        "configs/eval/quickstart.toml",
        OSMOSIS_CONFIG_DIR=str(tmp_path / "cfg"),
    )
    clean_failure(result, 2, "cannot read the dataset")


def test_a_config_directory_that_cannot_be_created_is_one_clear_line(tmp_path: Path) -> None:
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o555)
    config = str(locked / "cfg")
    with PlatformDouble() as platform:
        logout = osmosis(
            tmp_path, "auth", "logout", OSMOSIS_CONFIG_DIR=config, OSMOSIS_PLATFORM_URL=platform.url
        )
        clean_failure(logout, 1, f"cannot use the config directory {config}")
        login = osmosis(
            tmp_path,
            "auth",
            "login",
            "--with-token",
            input=platform.state.token + "\n",
            OSMOSIS_CONFIG_DIR=config,
            OSMOSIS_PLATFORM_URL=platform.url,
        )
        clean_failure(login, 1, f"cannot use the config directory {config}")
    assert platform.state.token not in login.stdout + login.stderr
