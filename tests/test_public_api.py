"""The public surface: every name users import keeps working (rooms may move behind it)."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

import osmosis_client

ROOT_NAMES = [
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

MODULE_NAMES = {
    "osmosis_client.rollout": ["AgentWorkflow", "AgentWorkflowContext", "Grader", "GraderContext"],
    "osmosis_client.rewards": [
        "RubricResult",
        "aevaluate_rubric",
        "evaluate_rubric",
        "osmosis_reward",
        "osmosis_rubric",
    ],
    "osmosis_client.llm": ["ModelSpec", "ModelTarget", "resolve_target"],
    "osmosis_client.errors": ["OsmosisError", "MissingAPIKeyError", "ModelNotFoundError"],
}


def test_the_root_exports_exactly_the_public_names() -> None:
    assert sorted(osmosis_client.__all__) == sorted(ROOT_NAMES)


@pytest.mark.parametrize("name", ROOT_NAMES)
def test_every_root_name_imports(name: str) -> None:
    assert getattr(osmosis_client, name) is not None


@pytest.mark.parametrize(("module", "names"), MODULE_NAMES.items())
def test_public_modules_keep_their_names(module: str, names: list[str]) -> None:
    loaded = importlib.import_module(module)
    for name in names:
        assert getattr(loaded, name) is not None, f"{module}.{name}"


def test_errors_keep_their_published_hierarchy() -> None:
    from osmosis_client import InvalidInputError, ModelNotFoundError, ProviderRequestError

    assert issubclass(ModelNotFoundError, ProviderRequestError)
    assert issubclass(ModelNotFoundError, InvalidInputError)
    assert ProviderRequestError("boom").detail == "boom"


def test_import_osmosis_client_is_cheap() -> None:
    code = (
        "import sys, osmosis_client\n"
        "print(sorted(m for m in ('httpx', 'pydantic', 'aiohttp', 'keyring', 'rich') "
        "if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_unknown_names_raise_attribute_error() -> None:
    with pytest.raises(AttributeError):
        osmosis_client.NoSuchThing  # type: ignore[attr-defined]  # noqa: B018
