"""Where tokens live: the OS keyring (each call bounded in time: a backend that hangs
is an error, not a hang), else — when the keyring is unusable or
``OSMOSIS_TOKEN_STORE=file`` — a 0600 file beside the credentials."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Literal, TypeVar

from pydantic import SecretStr

from osmosis_client.errors import NotAuthenticatedError
from osmosis_client.platform.login.credential_files import PrivateFiles
from osmosis_client.platform.settings import ENV_TOKEN_STORE

logger = logging.getLogger("osmosis_client")

KEYRING_SERVICE = "osmosis-cli"
KEYRING_TIMEOUT = 3.0

TokenSource = Literal["env", "keyring", "file"]
T = TypeVar("T")


class KeyringUnavailable(Exception):
    pass


def _bounded(fn: Callable[[], T], timeout: float) -> T:
    """Run a keyring call in a daemon thread; a backend that hangs becomes an error."""
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = fn()
        except BaseException as exc:  # surfaced below as unavailability
            box["error"] = exc

    thread = threading.Thread(target=target, name="osmosis-keyring", daemon=True)
    thread.start()
    thread.join(timeout)
    if thread.is_alive():
        raise KeyringUnavailable(f"the keyring did not answer within {timeout:g}s")
    if "error" in box:
        err = box["error"]
        raise KeyringUnavailable(f"{type(err).__name__}: {err}")
    return box["value"]  # type: ignore[no-any-return]


class TokenStore:
    """Tokens by (platform, key): put, get and delete, in the keyring or the file."""

    def __init__(
        self,
        files: PrivateFiles,
        tokens_path: Path,
        *,
        env: Mapping[str, str],
        keyring_backend: Any = None,
        keyring_timeout: float = KEYRING_TIMEOUT,
    ) -> None:
        self.files = files
        self.tokens_path = tokens_path
        self._env = env
        self._keyring_backend = keyring_backend
        self._keyring_timeout = keyring_timeout
        self._keyring_warned = False

    def _wants_file(self) -> bool:
        return self._env.get(ENV_TOKEN_STORE, "").lower() == "file"

    def _keyring(self) -> Any:
        if self._keyring_backend is not None:
            return self._keyring_backend
        import keyring
        from keyring.backends import fail

        backend = keyring.get_keyring()
        priority = getattr(backend, "priority", 0)
        if isinstance(backend, fail.Keyring) or not priority or priority <= 0:
            raise KeyringUnavailable(f"no usable keyring backend ({type(backend).__name__})")
        chained = getattr(backend, "backends", None)
        if chained is not None and not chained:
            raise KeyringUnavailable("no usable keyring backend")
        self._keyring_backend = backend
        return backend

    def _warn_fallback(self, reason: str) -> None:
        if not self._keyring_warned:
            self._keyring_warned = True
            logger.warning(
                "the OS keyring is unavailable (%s); storing the token in %s (mode 0600)",
                reason,
                self.tokens_path,
            )

    @staticmethod
    def _account(platform: str, key: str) -> str:
        return f"{platform}|{key}"

    def put(self, platform: str, key: str, token: SecretStr) -> TokenSource:
        if not self._wants_file():
            try:
                backend = self._keyring()
                _bounded(
                    lambda: backend.set_password(
                        KEYRING_SERVICE, self._account(platform, key), token.get_secret_value()
                    ),
                    self._keyring_timeout,
                )
                return "keyring"
            except KeyringUnavailable as exc:
                self._warn_fallback(str(exc))
        tokens = self.files.read_json(self.tokens_path, "token file")
        tokens[self._account(platform, key)] = token.get_secret_value()
        self.files.write_json(self.tokens_path, tokens)
        return "file"

    def get(self, platform: str, key: str, source: str) -> SecretStr | None:
        account = self._account(platform, key)
        if source == "keyring":
            try:
                backend = self._keyring()
                value = _bounded(
                    lambda: backend.get_password(KEYRING_SERVICE, account),
                    self._keyring_timeout,
                )
            except KeyringUnavailable as exc:
                raise NotAuthenticatedError(
                    f"cannot read the stored token from the OS keyring ({exc})",
                    hint="unlock the keyring, or log in again with OSMOSIS_TOKEN_STORE=file",
                    code="KEYRING_UNAVAILABLE",
                ) from exc
        else:
            value = self.files.read_json(self.tokens_path, "token file").get(account)
        return SecretStr(value) if isinstance(value, str) and value else None

    def delete(self, platform: str, key: str, source: str) -> None:
        account = self._account(platform, key)
        if source == "keyring":
            try:
                backend = self._keyring()
                _bounded(
                    lambda: backend.delete_password(KEYRING_SERVICE, account),
                    self._keyring_timeout,
                )
            except KeyringUnavailable as exc:
                logger.debug("keyring delete failed: %s", exc)
            return
        tokens = self.files.read_json(self.tokens_path, "token file")
        if tokens.pop(account, None) is not None:
            self.files.write_json(self.tokens_path, tokens)
