"""The run's model clients, and what a rollout kind gets for each model (a ``RunEnv``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from osmosis_client._redact import redact_url
from osmosis_client.errors import OsmosisError
from osmosis_client.llm.client import ModelClient
from osmosis_client.llm.providers import ModelSpec, ModelTarget
from osmosis_local_runner.run.kinds import RunEnv
from osmosis_local_runner.run.request.spec import RunSpec


def model_client(spec: RunSpec, target: ModelTarget) -> ModelClient:
    return ModelClient(
        target,
        concurrency=spec.batch_size + 1,  # + the probe's own connection
        default_params=spec.sampling,
        ca_bundle=spec.ca_bundle,
    )


def run_env(
    spec: RunSpec,
    target: ModelTarget,
    client: ModelClient,
    tag: str | None,
    *,
    note: Callable[[str], None] | None,
    abort: Callable[[Any], None],
) -> RunEnv:
    return RunEnv(
        tag=tag,
        note=note,
        abort=abort,
        chat=client.chat,
        complete=client.complete,
        model=target.model,
        model_path=target.model_path,
        base_url=target.base_url,
        api_key=target.api_key.get_secret_value() if target.api_key else None,
        sampling=spec.sampling,
        workflow_config=spec.workflow_config,
        agent_timeout=spec.agent_workflow_timeout_s,
    )


def endpoint_level(exc: OsmosisError) -> bool:
    """A failure of the endpoint or the key, whatever was asked (not of one prompt)."""
    from osmosis_client.errors import EndpointUnreachableError, ModelNotFoundError

    return isinstance(exc, EndpointUnreachableError | ModelNotFoundError) or exc.code in (
        "PROVIDER_AUTH",
        "TLS_CERTIFICATE",
    )


def endpoint(target: ModelTarget) -> str | None:
    """Where a model is called, never with credentials."""
    return redact_url(target.base_url) if target.base_url else None


def resolve(model: ModelTarget | ModelSpec) -> ModelTarget:
    return model.resolve() if isinstance(model, ModelSpec) else model
