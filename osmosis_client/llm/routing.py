"""The replicas of one model target as the client calls them: URL, headers, wire format
(chat completions or Anthropic Messages), and health — a replica that fails with a
connection error or a 5xx rests for ``REST_SECONDS`` while the others take its calls."""

from __future__ import annotations

import base64
import contextvars
import logging
from collections.abc import Mapping
from typing import Any
from urllib.parse import unquote, urlsplit, urlunsplit

from osmosis_client import _json
from osmosis_client._redact import redact_url
from osmosis_client._wire import loads
from osmosis_client.llm import anthropic
from osmosis_client.llm.endpoints import merge_headers
from osmosis_client.llm.providers import ModelTarget, Replica
from osmosis_client.llm.session import is_socks, proxy_for

logger = logging.getLogger("osmosis_client")

#: the session id of the attempt being run (sent as ``X-Session-ID`` for sticky routing
#: on multi-replica servers); the runner sets it per attempt
SESSION_ID: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "osmosis_session_id", default=None
)
REST_SECONDS = 10.0  # a failing replica is skipped this long


class Route:
    """One replica as the client calls it: URL, headers, wire format, health."""

    def __init__(
        self, replica: Replica, target: ModelTarget, base: Mapping[str, str] | None = None
    ) -> None:
        self.replica = replica
        self.anthropic = replica.api_client_type == "anthropic_messages"
        url = f"{replica.base_url}/{'messages' if self.anthropic else 'chat/completions'}"
        #: the URL requests go to: credentials written in it are sent as Basic auth
        self.url, basic = _without_credentials(url)
        self.shown = redact_url(replica.base_url)
        #: the proxy from the environment (credentials included: never print it)
        self.proxy = proxy_for(self.url)
        #: whether a TLS handshake happens on the way (the replica's or its proxy's)
        self.tls = self.url.startswith("https:") or bool(
            self.proxy and str(self.proxy).startswith("https:")
        )
        #: a SOCKS proxy is a connector of its own (a session per proxy), not a request's
        self.socks = is_socks(self.proxy)
        key = replica.api_key.get_secret_value() if replica.api_key else None
        own: dict[str, str] = {}
        if self.anthropic:
            own.update(anthropic.headers(key))
        elif key:
            own["Authorization"] = f"Bearer {key}"
        self._headers = merge_headers(base, own, replica.headers, target.headers)
        if basic and not any(k.lower() == "authorization" for k in self._headers):
            self._headers["Authorization"] = basic
        self._has_session = any(k.lower() == "x-session-id" for k in self._headers)
        self.resting_until = 0.0

    def headers(self) -> dict[str, str]:
        session = None if self._has_session else SESSION_ID.get()
        return {**self._headers, "X-Session-ID": session} if session else self._headers

    def request(self, payload: dict[str, Any]) -> bytes:
        body = {**payload, "model": self.replica.model}
        if self.anthropic:
            body = anthropic.to_messages_request(body)
        return _json.dumps(body)

    def answer(self, status: int, raw: bytes) -> bytes:
        if not self.anthropic or status >= 300:
            return raw
        try:
            data = loads(raw)
        except ValueError:
            return raw
        if not isinstance(data, dict):
            return raw
        return _json.dumps(anthropic.from_messages_response(data, self.replica.model))

    def rest(self, now: float) -> None:
        self.resting_until = now + REST_SECONDS
        logger.debug("model replica %s failed: resting it for %gs", self.shown, REST_SECONDS)

    def healthy(self) -> None:
        self.resting_until = 0.0


def _without_credentials(url: str) -> tuple[str, str | None]:
    """(the URL without ``user:password@``, the Basic authorization they make, if any)."""
    parts = urlsplit(url)
    if parts.username is None and parts.password is None:
        return url, None
    pair = f"{unquote(parts.username or '')}:{unquote(parts.password or '')}"
    netloc = parts.netloc.rpartition("@")[2]
    bare = urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))
    return bare, "Basic " + base64.b64encode(pair.encode()).decode()


class Routes:
    """Round-robin over a target's replicas, rested ones last."""

    def __init__(self, target: ModelTarget, base: Mapping[str, str] | None = None) -> None:
        """``base``: headers every request carries (a replica's or the target's win)."""
        endpoints = [] if target.is_mock else target.endpoints()
        self.all = [Route(r, target, base) for r in endpoints]
        self._next = 0

    def order(self, now: float) -> list[Route]:
        """Replicas to try for one request: round-robin over the rested-out ones first,
        then the resting ones (soonest back first) rather than none."""
        count = len(self.all)
        if count == 1:
            return self.all
        start = self._next
        self._next = (self._next + 1) % count
        rotated = self.all[start:] + self.all[:start]
        ready = [e for e in rotated if e.resting_until <= now]
        resting = sorted(
            (e for e in rotated if e.resting_until > now), key=lambda e: e.resting_until
        )
        return ready + resting
