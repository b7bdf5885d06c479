"""Calling OpenAI-compatible model endpoints: the provider table, the client, the mock."""

from osmosis_client.llm.providers import PROVIDERS, ModelSpec, ModelTarget, Provider, resolve_target

__all__ = ["PROVIDERS", "ModelSpec", "ModelTarget", "Provider", "resolve_target"]
