"""Answers read whole and decoded safely, whatever the network does to them.

A real peer sends an answer in pieces: small TCP segments with pauses, chunked
transfer-encoding, gzip. ``read_body`` reads until the end of the body (never
"what happens to be buffered"), decompressed, with a cap: an answer over the cap
is one clear error, not a truncated document. ``loads`` is ``json.loads`` (by orjson
where both agree) that turns a nesting too deep for the parser (``[`` × 100,000 →
``RecursionError``) into the ``ValueError`` every caller already handles.

Used by every aiohttp client of the package (model endpoints, rollout servers,
the 0.2 trainer callbacks); the platform transport (httpx) collects its bodies
the same way in ``platform/_transport.Body``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from osmosis_client import _json

if TYPE_CHECKING:
    import aiohttp

READ_PIECE = 1 << 16


class BodyTooLarge(ValueError):
    """An answer larger than the reader's cap (decompressed)."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"the answer is larger than {_size(limit)}")
        self.limit = limit


def _size(limit: int) -> str:
    return f"{limit >> 20} MiB" if limit >= 1 << 20 else f"{limit >> 10} KiB"


async def read_body(response: aiohttp.ClientResponse, limit: int) -> bytes:
    """The whole body of ``response`` (decompressed), at most ``limit`` bytes.

    Raises :class:`BodyTooLarge` as soon as the answer is known to exceed the cap
    (a ``Content-Length`` over it, or that many bytes read); transport errors while
    reading (a connection dying mid-body) propagate as aiohttp raises them.
    """
    declared = response.content_length
    if declared is not None and not response.headers.get("Content-Encoding"):
        if declared > limit:
            raise BodyTooLarge(limit)
        # the usual answer: its length known and nothing to inflate, so it is read in one
        # go (aiohttp stops at the declared length; a cut-short body still raises)
        return await response.read()
    parts: list[bytes] = []
    size = 0
    async for piece in response.content.iter_chunked(READ_PIECE):
        size += len(piece)
        if size > limit:
            raise BodyTooLarge(limit)
        parts.append(piece)
    return b"".join(parts)


def loads(raw: bytes | str) -> Any:
    """``json.loads`` (by orjson where both agree: osmosis_client._json); a document
    nested too deeply raises ``ValueError`` like any other malformed one."""
    try:
        return _json.loads(raw)
    except RecursionError as exc:
        raise ValueError("the JSON is nested too deeply") from exc
