"""Calling OpenAI-compatible model endpoints: the provider table, the client, the mock."""

from .providers import PROVIDERS, ModelTarget, Provider, resolve_target

__all__ = ["PROVIDERS", "ModelTarget", "Provider", "resolve_target"]
