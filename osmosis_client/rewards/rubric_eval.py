"""0.2's ``osmosis_ai.rubric_eval``: the names 0.2 code imports from it
(``DEFAULT_API_KEY_ENV``, as 0.2.17's ``examples/rubric_functions.py`` does;
``evaluate_rubric``; ``ensure_api_key_available``), served by this package's judge."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from osmosis_client.errors import MissingAPIKeyError, ProviderRequestError
from osmosis_client.llm.providers import PROVIDERS
from osmosis_client.rewards.rubric import RubricResult, aevaluate_rubric, evaluate_rubric

#: provider → the variable its key is read from (every provider of the model table)
DEFAULT_API_KEY_ENV: dict[str, str] = {name: p.key_env for name, p in PROVIDERS.items()}


def ensure_api_key_available(model_info: Mapping[str, Any]) -> None:
    """Raise :class:`MissingAPIKeyError` unless ``model_info``'s provider has a key: its
    ``api_key``, the variable named by ``api_key_env``, or the provider's own variable."""
    provider = model_info.get("provider")
    if not isinstance(provider, str) or not provider.strip():
        raise TypeError("'model_info' must include a 'provider' string")
    explicit = model_info.get("api_key")
    if isinstance(explicit, str) and explicit.strip():
        return
    named = model_info.get("api_key_env")
    env_name = named.strip() if isinstance(named, str) and named.strip() else None
    env_name = env_name or DEFAULT_API_KEY_ENV.get(provider.strip().lower())
    if env_name is None:
        raise MissingAPIKeyError(
            f"no API key for provider {provider!r}: name its variable with 'api_key_env'",
            data={"provider": provider},
        )
    if not os.environ.get(env_name, "").strip():
        raise MissingAPIKeyError(
            f"the environment variable {env_name} is not set",
            hint=f"export {env_name}=…",
            data={"env_var": env_name},
        )


__all__ = [
    "DEFAULT_API_KEY_ENV",
    "MissingAPIKeyError",
    "ProviderRequestError",
    "RubricResult",
    "aevaluate_rubric",
    "ensure_api_key_available",
    "evaluate_rubric",
]
