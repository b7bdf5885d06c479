"""Which weights answer behind a model's name — what a cached answer is keyed by, since
the name alone lies (a served name stays fixed while an RL run's checkpoints change).

- a name the user gave them (``cache_scope``): theirs to keep true;
- a hosted API (a known provider at its own URL): the provider and the model id as sent
  (a dated snapshot is its own id; an alias that moves is the provider's);
- any other endpoint: its ``GET /models`` entry for the model — vLLM lists a model's
  ``root`` (the weights' path or repository) and, for a LoRA adapter, its ``parent``
  (the base): a new adapter loaded under the same name is another root;
- else nobody can tell, and the call is not cached.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from osmosis_client.llm.providers import PROVIDERS, ModelTarget

if TYPE_CHECKING:
    import aiohttp

    from osmosis_client.llm.routing import Route


def listed_weights(listing: Any, model: str) -> dict[str, str]:
    """``model``'s ``root`` and ``parent`` in a ``GET /models`` answer (vLLM lists them;
    empty when the server does not list the model or says nothing of its weights)."""
    listed = listing.get("data") if isinstance(listing, dict) else None
    for entry in listed if isinstance(listed, list) else []:
        if isinstance(entry, dict) and entry.get("id") == model:
            return {k: entry[k] for k in ("root", "parent") if isinstance(entry.get(k), str)}
    return {}


def api_identity(target: ModelTarget) -> str | None:
    """A hosted API's identity (a known provider called at its own URL), else None."""
    provider = PROVIDERS.get(target.provider or "")
    if provider is None or (target.base_url or "").rstrip("/") != provider.base_url:
        return None
    return f"api:{provider.name}:{target.model}"


async def served_identity(
    session: aiohttp.ClientSession, route: Route, timeout: float = 10.0
) -> str | None:
    """The model's ``root`` (and ``parent``) in the endpoint's ``GET /models``, else None."""
    import asyncio

    import aiohttp

    url = route.replica.base_url.rstrip("/") + "/models"
    try:
        async with session.get(
            url,
            headers=route.headers(),
            proxy=None if route.socks else route.proxy,
            allow_redirects=False,
            timeout=aiohttp.ClientTimeout(total=timeout),
        ) as answer:
            if answer.status != 200:
                return None
            weights = listed_weights(await answer.json(content_type=None), route.replica.model)
    except (aiohttp.ClientError, asyncio.TimeoutError, OSError, ValueError):
        return None
    if not weights.get("root"):
        return None
    return f"served:root={weights['root']};parent={weights.get('parent', '')}"


__all__ = ["api_identity", "listed_weights", "served_identity"]
