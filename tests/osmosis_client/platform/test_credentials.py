"""The credential store: keyring and file backends, modes, atomicity, corruption, switching."""

from __future__ import annotations

import json
import os
import stat
import time
from datetime import datetime, timezone
from pathlib import Path

import pytest
from pydantic import SecretStr

from osmosis_client.errors import NotAuthenticatedError
from osmosis_client.platform.login.credentials import CredentialStore
from osmosis_client.platform.models import User, Workspace
from tests.helpers import BrokenKeyring, MemoryKeyring

P = "https://platform.test"
USER = User(id="u1", email="ada@example.com")
ACME = Workspace(id="w1", name="acme", role="admin")
BETA = Workspace(id="w2", name="beta", role="member")
EXPIRY = datetime(2027, 1, 1, tzinfo=timezone.utc)


def login(
    store: CredentialStore,
    token: str = "tok-1",
    ws: Workspace | None = ACME,
    token_id: str | None = "tid-1",
) -> str:
    return store.save_login(
        P, token=SecretStr(token), user=USER, token_id=token_id, expires_at=EXPIRY, workspace=ws
    )


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_token_goes_to_keyring_and_metadata_never_holds_it(
    isolated_env: Path, memory_keyring: MemoryKeyring
) -> None:
    store = CredentialStore()
    login(store)
    assert memory_keyring.items == {("osmosis-cli", f"{P}|tid-1"): "tok-1"}
    text = (isolated_env / "credentials.json").read_text()
    assert "tok-1" not in text
    auth = store.resolve(P)
    assert auth.token.get_secret_value() == "tok-1"
    assert auth.source == "keyring"
    assert auth.workspace == "acme"
    assert "tok-1" not in repr(auth)


def test_file_store_when_requested(isolated_env: Path, memory_keyring: MemoryKeyring) -> None:
    store = CredentialStore(
        env={"OSMOSIS_TOKEN_STORE": "file", "OSMOSIS_CONFIG_DIR": str(isolated_env)}
    )
    login(store)
    assert memory_keyring.items == {}
    tokens = isolated_env / "secrets" / "tokens.json"
    assert json.loads(tokens.read_text()) == {f"{P}|tid-1": "tok-1"}
    assert mode(tokens) == 0o600
    assert mode(tokens.parent) == 0o700
    assert mode(isolated_env) == 0o700
    assert mode(isolated_env / "credentials.json") == 0o600
    assert store.resolve(P).source == "file"


def test_broken_keyring_falls_back_to_file_with_one_warning(
    isolated_env: Path, caplog: pytest.LogCaptureFixture
) -> None:
    store = CredentialStore(keyring_backend=BrokenKeyring())
    with caplog.at_level("WARNING", logger="osmosis_client"):
        login(store)
        login(store, token="tok-2", token_id="tid-2", ws=BETA)
    warnings = [r.getMessage() for r in caplog.records]
    assert len(warnings) == 1
    assert "keyring is unavailable" in warnings[0]
    assert "tok-1" not in warnings[0]
    assert store.resolve(P).source == "file"


def test_hanging_keyring_is_bounded_in_time(isolated_env: Path) -> None:
    class Hanging(MemoryKeyring):
        def set_password(self, service: str, username: str, password: str) -> None:
            time.sleep(5)

    store = CredentialStore(keyring_backend=Hanging(), keyring_timeout=0.05)
    started = time.monotonic()
    login(store)
    assert time.monotonic() - started < 2
    assert store.resolve(P).source == "file"


def test_no_usable_keyring_backend_falls_back(isolated_env: Path) -> None:
    import keyring
    from keyring.backends import fail

    keyring.set_keyring(fail.Keyring())
    store = CredentialStore()
    login(store)
    assert store.resolve(P).source == "file"


def test_env_token_wins_and_is_never_stored(isolated_env: Path) -> None:
    store = CredentialStore(
        env={
            "OSMOSIS_TOKEN": "env-tok",
            "OSMOSIS_TOKEN_PLATFORM_URL": P,
            "OSMOSIS_WORKSPACE": "beta",
            "OSMOSIS_CONFIG_DIR": str(isolated_env),
        }
    )
    auth = store.resolve(P)
    assert auth.source == "env"
    assert auth.workspace == "beta"
    assert auth.token.get_secret_value() == "env-tok"
    assert not isolated_env.exists()


def test_corrupt_file_is_moved_aside_not_overwritten(
    isolated_env: Path, caplog: pytest.LogCaptureFixture
) -> None:
    isolated_env.mkdir(parents=True)
    (isolated_env / "credentials.json").write_text("{not json")
    store = CredentialStore()
    with caplog.at_level("WARNING", logger="osmosis_client"):
        login(store)
    aside = list(isolated_env.glob("credentials.json.corrupt-*"))
    assert len(aside) == 1
    assert aside[0].read_text() == "{not json"
    assert "moved it to" in caplog.records[0].getMessage()
    assert store.resolve(P).workspace == "acme"


def test_atomic_write_leaves_old_file_on_failure(
    isolated_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = CredentialStore()
    login(store)
    before = (isolated_env / "credentials.json").read_text()

    def boom(src: str, dst: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(Exception, match="No space left"):
        login(store, token="tok-2", token_id="tid-2", ws=BETA)
    assert (isolated_env / "credentials.json").read_text() == before
    assert not [p for p in isolated_env.iterdir() if p.name.endswith(".tmp")]


def test_switching_workspace_changes_header_workspace_and_token(isolated_env: Path) -> None:
    store = CredentialStore()
    login(store, token="tok-a", token_id="ta", ws=ACME)
    login(store, token="tok-b", token_id="tb", ws=BETA)
    assert store.resolve(P).workspace == "beta"
    assert store.resolve(P).token.get_secret_value() == "tok-b"
    store.set_active(P, "acme")
    auth = store.resolve(P)
    assert (auth.workspace, auth.token.get_secret_value()) == ("acme", "tok-a")
    # OSMOSIS_WORKSPACE picks another logged-in workspace for one process
    env_store = CredentialStore(
        env={"OSMOSIS_WORKSPACE": "beta", "OSMOSIS_CONFIG_DIR": str(isolated_env)}
    )
    assert env_store.resolve(P).token.get_secret_value() == "tok-b"


def test_shared_token_deleted_only_when_unused(
    isolated_env: Path, memory_keyring: MemoryKeyring
) -> None:
    store = CredentialStore()
    key = login(store, ws=ACME)
    store.add_workspace(P, BETA, key)
    assert store.remove_workspace(P, "beta") == []
    assert memory_keyring.items  # acme still uses it
    assert store.active_workspace(P) == "acme"
    dropped = store.remove_workspace(P, "acme")
    assert [(t.get_secret_value(), tid) for t, tid in dropped] == [("tok-1", "tid-1")]
    assert memory_keyring.items == {}
    with pytest.raises(NotAuthenticatedError):
        store.resolve(P)


def test_logout_of_active_makes_most_recent_remaining_active(isolated_env: Path) -> None:
    store = CredentialStore()
    login(store, token="a", token_id="ta", ws=ACME)
    login(store, token="b", token_id="tb", ws=BETA)
    gamma = Workspace(id="w3", name="gamma")
    login(store, token="c", token_id="tc", ws=gamma)
    store.set_active(P, "acme")
    store.remove_workspace(P, "acme")
    assert store.active_workspace(P) == "gamma"


def test_remove_all_returns_every_token(isolated_env: Path) -> None:
    store = CredentialStore()
    login(store, token="a", token_id="ta", ws=ACME)
    login(store, token="b", token_id="tb", ws=BETA)
    dropped = store.remove_all(P)
    assert sorted(t.get_secret_value() for t, _ in dropped) == ["a", "b"]
    assert store.entries(P) == []


def test_login_without_workspace_keeps_token(isolated_env: Path) -> None:
    store = CredentialStore()
    login(store, ws=None)
    auth = store.resolve(P)
    assert auth.workspace is None
    assert auth.token.get_secret_value() == "tok-1"
    assert auth.token_key == "tid-1"


def test_platforms_are_kept_apart(isolated_env: Path) -> None:
    store = CredentialStore()
    login(store)
    with pytest.raises(NotAuthenticatedError):
        store.resolve("https://other.test")
