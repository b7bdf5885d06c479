"""Isolation for every test: a temp config dir, an in-memory keyring, no real sleeps."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import keyring
import pytest

from tests.helpers import FakeClock, MemoryKeyring

PLATFORM = "https://platform.test"


@pytest.fixture(autouse=True)
def isolated_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in (
        "OSMOSIS_TOKEN",
        "OSMOSIS_WORKSPACE",
        "OSMOSIS_TOKEN_STORE",
        "OSMOSIS_ALLOW_INSECURE",
        "NO_COLOR",
        "XDG_CONFIG_HOME",
        "GITHUB_STEP_SUMMARY",
        "OSMOSIS_CA_BUNDLE",
        "SSL_CERT_FILE",
        "SSL_CERT_DIR",
    ):
        monkeypatch.delenv(name, raising=False)
    config = tmp_path / "config"
    monkeypatch.setenv("OSMOSIS_CONFIG_DIR", str(config))
    # warm interpreters outlive a run by design: only the tests of them start one
    monkeypatch.setenv("OSMOSIS_WARM", "0")
    monkeypatch.setenv("OSMOSIS_WARM_DIR", str(tmp_path / "warm"))
    monkeypatch.setenv("OSMOSIS_PLATFORM_URL", PLATFORM)
    # an OSMOSIS_TOKEN a test sets is one issued for the test platform
    monkeypatch.setenv("OSMOSIS_TOKEN_PLATFORM_URL", PLATFORM)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    return config


@pytest.fixture(autouse=True)
def memory_keyring() -> Iterator[MemoryKeyring]:
    previous = keyring.get_keyring()
    backend = MemoryKeyring()
    keyring.set_keyring(backend)
    yield backend
    keyring.set_keyring(previous)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture(autouse=True)
def no_real_sleep(monkeypatch: pytest.MonkeyPatch) -> FakeClock:
    """The CLI sleeps through cli.context.SLEEP: record, never wait."""
    fake = FakeClock()
    monkeypatch.setattr("osmosis_cli.context.SLEEP", fake.sleep)
    return fake


QUICKSTART = Path(__file__).resolve().parents[1] / "examples" / "quickstart"


@pytest.fixture
def quickstart_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the bundled quickstart, the working directory."""
    import shutil

    root = tmp_path / "qs"
    shutil.copytree(QUICKSTART, root, ignore=shutil.ignore_patterns(".osmosis"))
    monkeypatch.chdir(root)
    return root
