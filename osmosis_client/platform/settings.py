"""Environment variables, the platform URL and the config directory: one place.

Kept free of heavy imports: the CLI reads it while it starts.
"""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Mapping
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from osmosis_client._redact import redact_url
from osmosis_client.errors import AuthError, InsecureURLError, InvalidInputError

DEFAULT_PLATFORM_URL = "https://platform.osmosis.ai"

ENV_PLATFORM_URL = "OSMOSIS_PLATFORM_URL"
ENV_TOKEN = "OSMOSIS_TOKEN"
#: the platform an ``OSMOSIS_TOKEN`` was issued for (the published CLI's name)
ENV_TOKEN_PLATFORM = "OSMOSIS_TOKEN_PLATFORM_URL"
ENV_WORKSPACE = "OSMOSIS_WORKSPACE"
ENV_CONFIG_DIR = "OSMOSIS_CONFIG_DIR"
ENV_TOKEN_STORE = "OSMOSIS_TOKEN_STORE"
ENV_ALLOW_INSECURE = "OSMOSIS_ALLOW_INSECURE"

_DEFAULT_PORTS = {"http": 80, "https": 443}


def config_dir(env: Mapping[str, str] | None = None) -> Path:
    """``$OSMOSIS_CONFIG_DIR``, else ``$XDG_CONFIG_HOME/osmosis``, else ``~/.config/osmosis``."""
    env = os.environ if env is None else env
    if env.get(ENV_CONFIG_DIR):
        return Path(env[ENV_CONFIG_DIR]).expanduser()
    if env.get("XDG_CONFIG_HOME"):
        return Path(env["XDG_CONFIG_HOME"]).expanduser() / "osmosis"
    return Path.home() / ".config" / "osmosis"


def is_loopback_host(host: str) -> bool:
    """``localhost``, 127.0.0.0/8 or ::1 — not ``*.localhost``, which a resolver may send
    anywhere."""
    host = host.strip("[]").lower().rstrip(".")
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def normalize_platform_url(url: str, *, allow_insecure: bool = False) -> str:
    """Lower-case scheme and host, drop the default port and trailing ``/``.

    Plain ``http://`` is refused unless the host is loopback or ``allow_insecure``.
    """
    raw = url.strip()
    try:
        parts = urlsplit(raw)
        hostname = parts.hostname
    except ValueError:  # e.g. "http://[::1" (an unclosed IPv6 bracket)
        hostname = None
    scheme = parts.scheme.lower() if hostname else ""
    if scheme not in ("http", "https") or not hostname:
        raise InvalidInputError(
            f"invalid platform URL {redact_url(raw)!r}",
            hint="use a URL like https://platform.osmosis.ai",
            code="INVALID_URL",
        )
    if parts.username or parts.password:
        raise InvalidInputError(
            "the platform URL must not contain credentials",
            hint="remove the user:password@ part",
            code="INVALID_URL",
        )
    host = hostname.lower()
    try:
        port = parts.port
    except ValueError as exc:
        raise InvalidInputError(
            f"invalid port in platform URL {redact_url(raw)!r}", code="INVALID_URL"
        ) from exc
    if scheme == "http" and not allow_insecure and not is_loopback_host(host):
        raise InsecureURLError(
            f"refusing plain http to {host}: tokens would travel unencrypted",
            hint=f"use https, or set {ENV_ALLOW_INSECURE}=1 if you really mean it",
        )
    netloc = f"[{host}]" if ":" in host else host
    if port is not None and port != _DEFAULT_PORTS[scheme]:
        netloc += f":{port}"
    path = parts.path.rstrip("/")
    return urlunsplit((scheme, netloc, path, "", ""))


def resolve_platform_url(explicit: str | None = None, env: Mapping[str, str] | None = None) -> str:
    """The platform URL from ``--platform-url``, ``OSMOSIS_PLATFORM_URL`` or the default."""
    env = os.environ if env is None else env
    url = explicit or env.get(ENV_PLATFORM_URL) or DEFAULT_PLATFORM_URL
    return normalize_platform_url(url, allow_insecure=env.get(ENV_ALLOW_INSECURE) == "1")


def check_env_token_platform(platform: str, env: Mapping[str, str] | None = None) -> None:
    """An ``OSMOSIS_TOKEN`` goes only to the platform it was issued for, as the published
    CLI binds it: ``OSMOSIS_TOKEN_PLATFORM_URL`` names that platform, and without it only
    the default platform gets the token — so ``--platform`` (or a planted ``.env``)
    pointing elsewhere cannot collect a CI secret. Raised before any request."""
    env = os.environ if env is None else env
    bound = env.get(ENV_TOKEN_PLATFORM)
    if not bound:
        if platform != DEFAULT_PLATFORM_URL:
            raise AuthError(
                f"{ENV_TOKEN} was not sent to {redact_url(platform)}: without "
                f"{ENV_TOKEN_PLATFORM} it goes only to {DEFAULT_PLATFORM_URL}",
                hint=f"set {ENV_TOKEN_PLATFORM}={redact_url(platform)} if the token was "
                "issued there (or unset the platform override)",
                code="ENV_TOKEN_PLATFORM_REQUIRED",
                data={"platform": redact_url(platform)},
            )
        return
    try:
        wanted = normalize_platform_url(bound, allow_insecure=env.get(ENV_ALLOW_INSECURE) == "1")
    except InvalidInputError as exc:
        raise InvalidInputError(
            f"{ENV_TOKEN_PLATFORM}: {exc.message}", hint=exc.hint, code=exc.code
        ) from exc
    if wanted != platform:
        raise AuthError(
            f"{ENV_TOKEN} was not sent to {redact_url(platform)}: {ENV_TOKEN_PLATFORM} binds "
            f"it to {redact_url(wanted)}",
            hint=f"talk to {redact_url(wanted)}, or use a token issued for {redact_url(platform)}",
            code="ENV_TOKEN_PLATFORM_MISMATCH",
            data={"platform": redact_url(platform), "token_platform": redact_url(wanted)},
        )
