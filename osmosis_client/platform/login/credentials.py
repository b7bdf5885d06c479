"""Credentials per (platform URL, workspace): tokens in the OS keyring or a 0600 file.

Layout under the config dir (0700)::

    credentials.json        metadata only — users, workspaces, token ids, expiry, active workspace
    secrets/tokens.json     tokens, only when the keyring is unusable or OSMOSIS_TOKEN_STORE=file

Tokens are user-scoped, so several workspace entries may share one token; a
token is deleted only when no entry uses it. Every write is atomic, and every
read-modify-write holds an exclusive lock (``.lock``, fcntl) so concurrent logins never
lose an entry; a file we cannot parse — or whose values have the wrong types — is moved
aside with a warning, never silently overwritten. An existing config dir keeps its mode;
a token file readable by others is reported, not changed.
``OSMOSIS_TOKEN`` (with ``OSMOSIS_WORKSPACE``) wins over the store and is never written;
it goes only to its platform (``OSMOSIS_TOKEN_PLATFORM_URL``, else the default one).
"""

from __future__ import annotations

import functools
import logging
import os
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, TypeVar

from pydantic import SecretStr

from osmosis_client._fs import ensure_private_dir, move_aside
from osmosis_client.errors import CredentialStoreError, NotAuthenticatedError
from osmosis_client.platform.login.credential_files import PrivateFiles, well_formed
from osmosis_client.platform.login.token_store import KEYRING_TIMEOUT, TokenSource, TokenStore
from osmosis_client.platform.models import TokenGrant, User, Workspace
from osmosis_client.platform.settings import (
    ENV_TOKEN,
    ENV_WORKSPACE,
    check_env_token_platform,
    config_dir,
)

logger = logging.getLogger("osmosis_client")

FORMAT_VERSION = 1
T = TypeVar("T")


@dataclass(frozen=True)
class WorkspaceEntry:
    """A workspace logged in on this machine."""

    name: str
    id: str | None
    role: str | None
    token_key: str
    connected_repo: str | None = None
    last_used_at: str | None = None


@dataclass(frozen=True)
class ResolvedAuth:
    """The token and workspace a command should use, and where they came from."""

    token: SecretStr
    source: TokenSource
    workspace: str | None
    token_key: str | None = None
    entry: WorkspaceEntry | None = None
    user: User | None = None
    token_id: str | None = None
    expires_at: str | None = None

    def __repr__(self) -> str:
        return f"ResolvedAuth(source={self.source!r}, workspace={self.workspace!r}, token=***)"


def _exclusive(method: Callable[..., T]) -> Callable[..., T]:
    """Run a read-modify-write of the store under its lock."""

    @functools.wraps(method)
    def locked(self: CredentialStore, *args: Any, **kwargs: Any) -> T:
        with self._files.locked():
            return method(self, *args, **kwargs)

    return locked


def _now_iso() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="microseconds").replace("+00:00", "Z")


class CredentialStore:
    """Reads and writes logins for every platform under one config dir."""

    def __init__(
        self,
        directory: Path | None = None,
        *,
        env: Mapping[str, str] | None = None,
        keyring_backend: Any = None,
        keyring_timeout: float = KEYRING_TIMEOUT,
    ) -> None:
        self._env = os.environ if env is None else env
        self.directory = directory or config_dir(self._env)
        self.metadata_path = self.directory / "credentials.json"
        self.tokens_path = self.directory / "secrets" / "tokens.json"
        self._files = PrivateFiles(self.directory, secret=self.tokens_path)
        self._tokens = TokenStore(
            self._files,
            self.tokens_path,
            env=self._env,
            keyring_backend=keyring_backend,
            keyring_timeout=keyring_timeout,
        )

    def _load(self) -> dict[str, Any]:
        data = self._files.read_json(self.metadata_path, "credentials file")
        if data.get("version") != FORMAT_VERSION or not well_formed(data):
            if data:
                moved = move_aside(self.metadata_path)
                logger.warning("credentials file had an unknown format; moved it to %s", moved.name)
            data = {"version": FORMAT_VERSION, "platforms": {}}
        return data

    def _save(self, data: dict[str, Any]) -> None:
        ensure_private_dir(self.directory)
        self._files.write_json(self.metadata_path, data)

    @staticmethod
    def _platform(data: dict[str, Any], platform: str) -> dict[str, Any]:
        entry: dict[str, Any] = data["platforms"].setdefault(platform, {})
        entry.setdefault("active", None)
        entry.setdefault("default_token", None)
        entry.setdefault("tokens", {})
        entry.setdefault("workspaces", {})
        return entry

    # ---------------------------------------------------------------- queries

    def entries(self, platform: str) -> list[WorkspaceEntry]:
        """The workspaces logged in for ``platform``, most recently used first."""
        plat = self._load()["platforms"].get(platform) or {}
        found = [_entry(name, raw) for name, raw in (plat.get("workspaces") or {}).items()]
        return sorted(found, key=lambda e: e.last_used_at or "", reverse=True)

    def active_workspace(self, platform: str) -> str | None:
        plat = self._load()["platforms"].get(platform) or {}
        active = plat.get("active")
        return active if isinstance(active, str) else None

    def resolve(self, platform: str, *, workspace: str | None = None) -> ResolvedAuth:
        """The token and workspace to use: ``OSMOSIS_TOKEN`` first, then the store.

        ``workspace`` (e.g. from a flag) beats ``OSMOSIS_WORKSPACE`` beats the active one.
        """
        wanted = workspace or self._env.get(ENV_WORKSPACE) or None
        env_token = self._env.get(ENV_TOKEN)
        if env_token:
            check_env_token_platform(platform, self._env)
            return ResolvedAuth(token=SecretStr(env_token), source="env", workspace=wanted)
        data = self._load()
        plat = data["platforms"].get(platform)
        if not plat:
            raise NotAuthenticatedError(
                f"not logged in to {platform}",
                hint=f"log in, or set {ENV_TOKEN}",
                data={"platform": platform},
            )
        plat = self._platform(data, platform)
        name = wanted or plat.get("active")
        entry: WorkspaceEntry | None = None
        if name:
            raw = plat["workspaces"].get(name) or _find_by_id(plat["workspaces"], name)
            if raw is None:
                # a workspace we are not logged in to: the user-scoped token may still serve
                key = (plat.get("default_token") or _any_token(plat)) if wanted else None
                if key is None:
                    raise NotAuthenticatedError(
                        f"not logged in to workspace {name!r}",
                        hint=f"log in to workspace {name}",
                        data={"workspace": name},
                    )
            else:
                entry = _entry(raw.get("name", name), raw)
                key = entry.token_key
        else:
            key = plat.get("default_token")
            if key is None:
                raise NotAuthenticatedError(
                    f"not logged in to {platform}", hint="log in", data={"platform": platform}
                )
        info = plat["tokens"].get(key) or {}
        source = info.get("store", "keyring")
        token = self._tokens.get(platform, key, source)
        if token is None:
            raise NotAuthenticatedError(
                "the stored token is missing", hint="log in again", data={"relogin": True}
            )
        user = User.model_validate(info["user"]) if isinstance(info.get("user"), dict) else None
        return ResolvedAuth(
            token=token,
            source=source,
            workspace=entry.name if entry else name,
            token_key=key,
            entry=entry,
            user=user,
            token_id=info.get("token_id"),
            expires_at=info.get("expires_at"),
        )

    # ---------------------------------------------------------------- changes

    @_exclusive
    def save_login(
        self,
        platform: str,
        grant: TokenGrant | None = None,
        *,
        token: SecretStr | None = None,
        user: User | None = None,
        token_id: str | None = None,
        expires_at: datetime | None = None,
        workspace: Workspace | None = None,
    ) -> str:
        """Store a fresh token (from a grant, or pieces for ``--with-token``); returns its key.

        With ``workspace``, that workspace's entry uses the token and becomes active.
        """
        if grant is not None:
            token, user, token_id = grant.token, grant.user, grant.token_id
            expires_at = grant.expiry()
        if token is None or user is None:
            raise ValueError("save_login needs a token and a user")
        key = token_id or uuid.uuid4().hex
        source = self._tokens.put(platform, key, token)
        data = self._load()
        plat = self._platform(data, platform)
        previous = plat["default_token"]
        plat["tokens"][key] = {
            "token_id": token_id,
            "expires_at": expires_at.isoformat() if expires_at else None,
            "user": user.model_dump(mode="json"),
            "store": source,
            "created_at": _now_iso(),
        }
        plat["default_token"] = key
        if workspace is not None:
            _put_workspace(plat, workspace, key)
            plat["active"] = workspace.name
        orphan = previous if previous and previous != key and not _in_use(plat, previous) else None
        orphan_info = plat["tokens"].pop(orphan, None) if orphan else None
        self._save(data)
        if orphan and orphan_info:
            self._tokens.delete(platform, orphan, orphan_info.get("store", "keyring"))
        return key

    @_exclusive
    def add_workspace(self, platform: str, workspace: Workspace, token_key: str) -> None:
        """Log ``workspace`` in with an already stored token and make it active."""
        data = self._load()
        plat = self._platform(data, platform)
        if token_key not in plat["tokens"]:
            raise CredentialStoreError(
                "that token is not stored", hint="log in again", code="TOKEN_NOT_STORED"
            )
        _put_workspace(plat, workspace, token_key)
        plat["active"] = workspace.name
        self._save(data)

    @_exclusive
    def set_active(self, platform: str, name: str) -> WorkspaceEntry:
        data = self._load()
        plat = self._platform(data, platform)
        raw = _lookup(plat, name)
        raw["last_used_at"] = _now_iso()
        plat["active"] = raw["name"]
        self._save(data)
        return _entry(raw["name"], raw)

    @_exclusive
    def remove_workspace(self, platform: str, name: str) -> list[tuple[SecretStr, str | None]]:
        """Forget one workspace; returns ``(token, token_id)`` of tokens no entry uses now.

        The caller revokes those on the platform; they are already deleted locally.
        """
        data = self._load()
        plat = self._platform(data, platform)
        raw = _lookup(plat, name)
        del plat["workspaces"][raw["name"]]
        if plat["active"] == raw["name"]:
            rest = sorted(
                plat["workspaces"].values(),
                key=lambda w: w.get("last_used_at") or "",
                reverse=True,
            )
            plat["active"] = rest[0]["name"] if rest else None
        key = raw.get("token")
        unused = [key] if key and not _in_use(plat, key) else []
        return self._drop_tokens(data, platform, unused)

    @_exclusive
    def remove_all(self, platform: str) -> list[tuple[SecretStr, str | None]]:
        """Forget every login for ``platform``; returns the tokens to revoke."""
        data = self._load()
        plat = data["platforms"].get(platform)
        if not plat:
            return []
        plat = self._platform(data, platform)
        keys = list(plat["tokens"])
        dropped = self._drop_tokens(data, platform, keys)
        del data["platforms"][platform]
        self._save(data)
        return dropped

    def _drop_tokens(
        self, data: dict[str, Any], platform: str, keys: list[str]
    ) -> list[tuple[SecretStr, str | None]]:
        plat = data["platforms"][platform]
        dropped: list[tuple[SecretStr, str | None]] = []
        for key in keys:
            info = plat["tokens"].pop(key, None) or {}
            source = info.get("store", "keyring")
            try:
                token = self._tokens.get(platform, key, source)
            except NotAuthenticatedError:
                token = None
            if token is not None:
                dropped.append((token, info.get("token_id")))
            self._tokens.delete(platform, key, source)
            if plat.get("default_token") == key:
                plat["default_token"] = None
        if not plat["workspaces"] and not plat["tokens"]:
            data["platforms"].pop(platform, None)
        self._save(data)
        return dropped


def _entry(name: str, raw: Mapping[str, Any]) -> WorkspaceEntry:
    return WorkspaceEntry(
        name=name,
        id=raw.get("id"),
        role=raw.get("role"),
        token_key=raw.get("token", ""),
        connected_repo=raw.get("connected_repo"),
        last_used_at=raw.get("last_used_at"),
    )


def _put_workspace(plat: dict[str, Any], workspace: Workspace, key: str) -> None:
    plat["workspaces"][workspace.name] = {
        "name": workspace.name,
        "id": workspace.id,
        "role": workspace.role,
        "token": key,
        "connected_repo": (
            workspace.connected_repo.repo_full_name if workspace.connected_repo else None
        ),
        "last_used_at": _now_iso(),
    }


def _find_by_id(workspaces: Mapping[str, Any], ident: str) -> dict[str, Any] | None:
    for raw in workspaces.values():
        if isinstance(raw, dict) and raw.get("id") == ident:
            return raw
    return None


def _lookup(plat: Mapping[str, Any], name: str) -> dict[str, Any]:
    """A logged-in workspace entry by name or id."""
    raw = plat["workspaces"].get(name) or _find_by_id(plat["workspaces"], name)
    if raw is None:
        raise NotAuthenticatedError(
            f"not logged in to workspace {name!r}",
            hint=f"log in to workspace {name}",
            data={"workspace": name},
        )
    return dict(raw) if not isinstance(raw, dict) else raw


def _in_use(plat: Mapping[str, Any], key: str) -> bool:
    return any(w.get("token") == key for w in plat["workspaces"].values())


def _any_token(plat: Mapping[str, Any]) -> str | None:
    return next(iter(plat["tokens"]), None)
