"""osmosis-client: the typed SDK for the Osmosis LLM-evaluation platform.

Rooms (see docs/architecture.md): ``platform`` (the hosted platform's client,
credentials, git pinning, eval configs), ``llm`` (model endpoints), ``rollout``
(what users' rollout code implements), ``rewards`` (reward and rubric helpers).
The names below are the public surface; they are imported lazily so
``import osmosis_client`` (and the CLI's start-up) stays cheap.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from osmosis_client._version import __version__

if TYPE_CHECKING:
    from osmosis_client._retry import RetryPolicy
    from osmosis_client.errors import (
        APIConnectionError,
        APIStatusError,
        APITimeoutError,
        AuthenticationError,
        AuthError,
        BadRequestError,
        ConfigError,
        ConflictError,
        InvalidInputError,
        MissingAPIKeyError,
        ModelEndpointError,
        ModelNotFoundError,
        NotAuthenticatedError,
        NotFoundError,
        OsmosisError,
        PermissionDeniedError,
        ProtocolError,
        ProviderRequestError,
        RateLimitError,
        ServerError,
    )
    from osmosis_client.platform._client import AsyncClient, Client
    from osmosis_client.platform.eval.eval_config import EvalConfig, load_config
    from osmosis_client.platform.login.credentials import CredentialStore
    from osmosis_client.platform.models import (
        EvalRun,
        EvalRunPage,
        LogEntry,
        LogPage,
        RunMetrics,
        User,
        Workspace,
    )
    from osmosis_client.rewards import (
        RubricResult,
        aevaluate_rubric,
        evaluate_rubric,
        osmosis_reward,
        osmosis_rubric,
    )
    from osmosis_client.rollout import AgentWorkflow, AgentWorkflowContext, Grader, GraderContext

#: public name → the module that defines it
_EXPORTS: dict[str, str] = {
    "Client": "osmosis_client.platform._client",
    "AsyncClient": "osmosis_client.platform._client",
    "RetryPolicy": "osmosis_client._retry",
    "CredentialStore": "osmosis_client.platform.login.credentials",
    "EvalConfig": "osmosis_client.platform.eval.eval_config",
    "load_config": "osmosis_client.platform.eval.eval_config",
    "EvalRun": "osmosis_client.platform.models",
    "EvalRunPage": "osmosis_client.platform.models",
    "RunMetrics": "osmosis_client.platform.models",
    "LogEntry": "osmosis_client.platform.models",
    "LogPage": "osmosis_client.platform.models",
    "User": "osmosis_client.platform.models",
    "Workspace": "osmosis_client.platform.models",
    "osmosis_reward": "osmosis_client.rewards",
    "osmosis_rubric": "osmosis_client.rewards",
    "evaluate_rubric": "osmosis_client.rewards",
    "aevaluate_rubric": "osmosis_client.rewards",
    "RubricResult": "osmosis_client.rewards",
    "AgentWorkflow": "osmosis_client.rollout",
    "AgentWorkflowContext": "osmosis_client.rollout",
    "Grader": "osmosis_client.rollout",
    "GraderContext": "osmosis_client.rollout",
}

__all__ = [
    "APIConnectionError",
    "APIStatusError",
    "APITimeoutError",
    "AgentWorkflow",
    "AgentWorkflowContext",
    "AsyncClient",
    "AuthError",
    "AuthenticationError",
    "BadRequestError",
    "Client",
    "ConfigError",
    "ConflictError",
    "CredentialStore",
    "EvalConfig",
    "EvalRun",
    "EvalRunPage",
    "Grader",
    "GraderContext",
    "InvalidInputError",
    "LogEntry",
    "LogPage",
    "MissingAPIKeyError",
    "ModelEndpointError",
    "ModelNotFoundError",
    "NotAuthenticatedError",
    "NotFoundError",
    "OsmosisError",
    "PermissionDeniedError",
    "ProtocolError",
    "ProviderRequestError",
    "RateLimitError",
    "RetryPolicy",
    "RubricResult",
    "RunMetrics",
    "ServerError",
    "User",
    "Workspace",
    "__version__",
    "aevaluate_rubric",
    "evaluate_rubric",
    "load_config",
    "osmosis_reward",
    "osmosis_rubric",
]


#: the error tree: every public name ending in ``Error`` (errors.py draws it)
_EXPORTS.update({name: "osmosis_client.errors" for name in __all__ if name.endswith("Error")})


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'osmosis_client' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later lookups skip __getattr__
    return value


def __dir__() -> list[str]:
    return __all__
