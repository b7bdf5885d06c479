"""What went over the wire: each try of a model call as it was sent and as it came back.

A caller that wants the exchanges of its calls sets :data:`WIRE` to a list (a run's
attempt does, with transcripts); every try of a model call then appends one
:func:`exchange` — the URL it went to (never with credentials), the request body exactly
as sent, the status, the response headers that matter (request ids, rate limits), the
response exactly as received (a stream's events as their bytes arrived) and its time.
Request headers are never kept: they carry the keys. Unset (the default), nothing is
collected and a call costs nothing more.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from contextvars import ContextVar
from typing import Any

#: the exchanges of the calls made in this context (None: not collected)
WIRE: ContextVar[list[dict[str, Any]] | None] = ContextVar("osmosis_wire", default=None)
#: a request or response kept whole up to this size (bytes); past it, its digest and size
MAX_KEPT_BYTES = 256 * 1024
#: response headers worth keeping: who answered, how much is left, when to come back
KEPT_PREFIXES = ("x-ratelimit-", "anthropic-ratelimit-", "ratelimit-")
KEPT_HEADERS = frozenset(
    {
        "x-request-id",
        "request-id",
        "openai-processing-ms",
        "openai-version",
        "openai-organization",
        "retry-after",
        "content-type",
        "x-vllm-request-id",
        "cf-ray",
    }
)


def kept_headers(headers: Mapping[str, str]) -> dict[str, str]:
    """The response headers a record keeps (names lower-cased; values cut to 200)."""
    kept = {}
    for name, value in headers.items():
        lower = name.lower()
        if lower in KEPT_HEADERS or lower.startswith(KEPT_PREFIXES):
            kept[lower] = str(value)[:200]
    return kept


def _body(prefix: str, data: bytes) -> dict[str, Any]:
    """A body kept as text when it is small and UTF-8, else its digest and size."""
    found: dict[str, Any] = {f"{prefix}_bytes": len(data)}
    if len(data) <= MAX_KEPT_BYTES:
        try:
            found[prefix] = data.decode("utf-8")
            return found
        except UnicodeDecodeError:
            pass
    found[f"{prefix}_sha256"] = hashlib.sha256(data).hexdigest()
    return found


def exchange(
    url: str,
    sent: bytes,
    *,
    status: int | None = None,
    headers: Mapping[str, str] | None = None,
    received: bytes | None = None,
    duration_ms: float = 0.0,
    error: str | None = None,
) -> dict[str, Any]:
    """One try as a record keeps it (see the module)."""
    found: dict[str, Any] = {"url": url, "status": status, "duration_ms": round(duration_ms, 3)}
    found.update(_body("sent", sent))
    if headers:
        found["headers"] = kept_headers(headers)
    if received is not None:
        found.update(_body("received", received))
    if error is not None:
        found["error"] = error[:500]
    return found


__all__ = ["MAX_KEPT_BYTES", "WIRE", "exchange", "kept_headers"]
