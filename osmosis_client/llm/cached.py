"""A model call through the cache (osmosis_client/llm/cache.py): a previous run's recorded
answer when replaying, else a stored one under the call's key, else the call itself —
made once for identical calls in flight, its answer stored when it may be."""

from __future__ import annotations

import asyncio
import copy
import weakref
from typing import TYPE_CHECKING, Any

from osmosis_client.llm.cache import (
    SCOPE,
    CacheUse,
    canonical_body,
    key_of,
    key_parts,
    replay_key,
    storable,
)
from osmosis_client.llm.identity import api_identity, served_identity

if TYPE_CHECKING:
    from osmosis_client._retry import RetryPolicy
    from osmosis_client.llm.client import ModelClient

#: each client's weights identity, found once (None: nobody can tell)
_IDENTITIES: weakref.WeakKeyDictionary[ModelClient, str | None] = weakref.WeakKeyDictionary()
#: identical calls in flight, per run: the later ones wait for the first one's answer
_FLYING: weakref.WeakKeyDictionary[CacheUse, dict[str, asyncio.Future[Any]]] = (
    weakref.WeakKeyDictionary()
)


async def identity_of(client: ModelClient, use: CacheUse) -> str | None:
    """The identity of the weights answering ``client``'s calls (osmosis_client/llm/
    identity.py), with the user's named scope and the run's own weights."""
    if client not in _IDENTITIES:
        found = api_identity(client.target)
        if found is None:
            route = client._routes.all[0]
            found = await served_identity(
                client._session_for(route, client._session_or_new()), route
            )
        _IDENTITIES[client] = found
    found = _IDENTITIES[client]
    if use.named:
        found = f"{found};named={use.named}" if found else f"named:{use.named}"
    if found is not None and use.weights:
        found = f"{found};weights={use.weights}"
    return found


async def through_cache(
    client: ModelClient,
    use: CacheUse,
    payload: dict[str, Any],
    retry_policy: RetryPolicy | None,
) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """(the answer, what the cache made of the call: ``from`` — ``"replay"``, ``"cache"``,
    None when it was made — and its ``key``, ``identity``, ``endpoint``, ``wire``; None
    when the call could not be cached)."""
    route = client._routes.all[0]
    scope = SCOPE.get()
    body = canonical_body(route.request(payload))
    said = {"from": None, "endpoint": route.shown, "wire": route.wire}
    if use.replay:
        recorded = use.replay.get(replay_key(scope, body))
        if recorded is not None:
            use.replayed += 1
            return copy.deepcopy(recorded), {**said, "from": "replay"}
    store = use.store
    identity = None if store is None else await identity_of(client, use)
    if store is None or identity is None:
        if store is not None:
            use.not_cached(route.shown)
        return await client._call(payload, retry_policy), None
    parts = key_parts(route.shown, route.wire, identity, body, scope)
    key = key_of(parts)
    said.update(key=key, identity=identity)
    found = await asyncio.to_thread(store.get, key)
    if found is not None:
        use.hits += 1
        return found, {**said, "from": "cache"}
    flying = _FLYING.setdefault(use, {})
    first = flying.get(key)
    if first is not None:  # the same call is being made: its answer, once
        answer = await asyncio.shield(first)
        use.hits += 1
        return copy.deepcopy(answer), {**said, "from": "cache"}
    future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
    flying[key] = future
    try:
        result = await client._call(payload, retry_policy)
    except BaseException as exc:
        flying.pop(key, None)
        future.set_exception(exc)
        future.exception()  # retrieved: a failure no one else waited for is not warned of
        raise
    use.misses += 1
    try:
        if storable(result):
            await asyncio.to_thread(store.put, key, parts, result)
    finally:  # stored before it stops being in flight: a later twin finds one or the other
        future.set_result(result)
        flying.pop(key, None)
    return result, said


__all__ = ["identity_of", "through_cache"]
