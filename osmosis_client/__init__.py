"""osmosis-client: the typed SDK for the Osmosis LLM-evaluation platform.

Public names are imported lazily so ``import osmosis_client`` (and the CLI's
start-up) stays cheap; ``from osmosis_client import Client`` works as usual.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ._version import __version__

if TYPE_CHECKING:
    from ._client import AsyncClient, Client
    from ._retry import RetryPolicy
    from .credentials import CredentialStore
    from .errors import (
        APIConnectionError,
        APIStatusError,
        APITimeoutError,
        AuthError,
        ConfigError,
        NotFoundError,
        OsmosisError,
        ProtocolError,
    )
    from .models import EvalRun, User, Workspace

_EXPORTS = {
    "Client": "._client",
    "AsyncClient": "._client",
    "RetryPolicy": "._retry",
    "CredentialStore": ".credentials",
    "OsmosisError": ".errors",
    "AuthError": ".errors",
    "ConfigError": ".errors",
    "APIConnectionError": ".errors",
    "APIStatusError": ".errors",
    "APITimeoutError": ".errors",
    "NotFoundError": ".errors",
    "ProtocolError": ".errors",
    "EvalRun": ".models",
    "User": ".models",
    "Workspace": ".models",
}

__all__ = [
    "APIConnectionError",
    "APIStatusError",
    "APITimeoutError",
    "AsyncClient",
    "AuthError",
    "Client",
    "ConfigError",
    "CredentialStore",
    "EvalRun",
    "NotFoundError",
    "OsmosisError",
    "ProtocolError",
    "RetryPolicy",
    "User",
    "Workspace",
    "__version__",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'osmosis_client' has no attribute {name!r}")
    return getattr(importlib.import_module(module, __name__), name)
