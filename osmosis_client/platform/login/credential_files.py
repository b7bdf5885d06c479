"""The credential store's files: a private directory (0700), JSON files written
atomically (0600), an exclusive lock around every read-modify-write (``.lock``, fcntl) so
concurrent logins never lose an entry, and a file we cannot parse moved aside with a
warning — never silently overwritten. A token file readable by others is reported, not
changed."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from osmosis_client._fs import atomic_write, ensure_private_dir, move_aside, open_nofollow
from osmosis_client.errors import CredentialStoreError

logger = logging.getLogger("osmosis_client")


class PrivateFiles:
    """The JSON files under one config directory, and its lock."""

    def __init__(self, directory: Path, *, secret: Path) -> None:
        self.directory = directory
        self.secret = secret  # the file whose mode is checked (it holds tokens)
        self._lock_depth = 0
        self._thread_lock = threading.RLock()
        self._mode_warned = False

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """An exclusive lock on the store (re-entrant within this object); another
        process waits for it."""
        with self._thread_lock:
            if self._lock_depth:
                self._lock_depth += 1
                try:
                    yield
                finally:
                    self._lock_depth -= 1
                return
            try:
                ensure_private_dir(self.directory)
                fd = open_nofollow(self.directory / ".lock", os.O_RDWR | os.O_CREAT, 0o600)
            except OSError as exc:
                raise CredentialStoreError(
                    f"cannot use the config directory {self.directory}: {exc.strerror or exc}",
                    hint=f"check that {self.directory} is writable (or set OSMOSIS_CONFIG_DIR)",
                ) from exc
            try:
                _flock(fd)
                self._lock_depth = 1
                try:
                    yield
                finally:
                    self._lock_depth = 0
            finally:
                os.close(fd)  # closing releases the lock

    def read_json(self, path: Path, what: str) -> dict[str, Any]:
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            return {}
        except OSError as exc:
            raise CredentialStoreError(
                f"cannot read {path}: {exc.strerror}", hint="check the file's permissions"
            ) from exc
        self.check_mode(path)
        try:
            data = json.loads(raw)
            if not isinstance(data, dict):
                raise ValueError("not an object")
        except ValueError:
            moved = move_aside(path)
            logger.warning("%s %s was unreadable; moved it to %s", what, path, moved.name)
            return {}
        return data

    def check_mode(self, path: Path) -> None:
        if path != self.secret or self._mode_warned:
            return
        with contextlib.suppress(OSError):
            mode = path.stat().st_mode & 0o777
            if mode & 0o077:
                self._mode_warned = True
                logger.warning(
                    "%s holds tokens and is readable by others (mode %o): chmod 600 it",
                    path,
                    mode,
                )

    def write_json(self, path: Path, data: Mapping[str, Any]) -> None:
        ensure_private_dir(path.parent)
        payload = json.dumps(data, indent=2, sort_keys=True).encode() + b"\n"
        try:
            atomic_write(path, payload, mode=0o600)
        except OSError as exc:
            raise CredentialStoreError(
                f"cannot write {path}: {exc.strerror}",
                hint=f"check that {path.parent} is writable (or set OSMOSIS_CONFIG_DIR)",
            ) from exc


def _flock(fd: int) -> None:
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX: the in-process lock still holds
        return
    fcntl.flock(fd, fcntl.LOCK_EX)


def well_formed(data: Mapping[str, Any]) -> bool:
    """The metadata file's shape: anything else is moved aside, never half-trusted."""
    platforms = data.get("platforms")
    if not isinstance(platforms, dict):
        return False
    for plat in platforms.values():
        if not isinstance(plat, dict):
            return False
        for key in ("workspaces", "tokens"):
            table = plat.get(key, {})
            if not isinstance(table, dict) or not all(isinstance(v, dict) for v in table.values()):
                return False
        for key in ("active", "default_token"):
            if plat.get(key) is not None and not isinstance(plat.get(key), str):
                return False
        for workspace in plat.get("workspaces", {}).values():
            for key in ("name", "id", "role", "token", "connected_repo", "last_used_at"):
                if workspace.get(key) is not None and not isinstance(workspace.get(key), str):
                    return False
    return True
