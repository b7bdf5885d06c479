"""The provider table: ``provider/model`` → OpenAI-compatible base URL and key variable.

One table, documented in docs/models.md. ``--base-url`` reaches any other
server (vLLM, SGLang, Ollama, a proxy); a provider's key is only ever sent to
that provider's own URL.
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from pydantic import SecretStr

from osmosis_client._redact import redact_url
from osmosis_client.errors import InvalidInputError, MissingAPIKeyError
from osmosis_client.llm.endpoints import Endpoint, Registry

_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@dataclass(frozen=True)
class Provider:
    name: str
    base_url: str
    key_env: str


PROVIDERS: dict[str, Provider] = {
    p.name: p
    for p in (
        Provider("openai", "https://api.openai.com/v1", "OPENAI_API_KEY"),
        Provider("anthropic", "https://api.anthropic.com/v1", "ANTHROPIC_API_KEY"),
        Provider(
            "gemini", "https://generativelanguage.googleapis.com/v1beta/openai", "GEMINI_API_KEY"
        ),
        Provider("xai", "https://api.x.ai/v1", "XAI_API_KEY"),
        Provider("openrouter", "https://openrouter.ai/api/v1", "OPENROUTER_API_KEY"),
        Provider("cerebras", "https://api.cerebras.ai/v1", "CEREBRAS_API_KEY"),
        Provider("together", "https://api.together.xyz/v1", "TOGETHER_API_KEY"),
        Provider("groq", "https://api.groq.com/openai/v1", "GROQ_API_KEY"),
        Provider("fireworks", "https://api.fireworks.ai/inference/v1", "FIREWORKS_API_KEY"),
        Provider("deepseek", "https://api.deepseek.com/v1", "DEEPSEEK_API_KEY"),
        Provider("mistral", "https://api.mistral.ai/v1", "MISTRAL_API_KEY"),
    )
}

MOCK_PROVIDER = "mock"
#: where openai/ models are called instead of api.openai.com (the OpenAI SDK's variable)
OPENAI_BASE_URL_ENV = "OPENAI_BASE_URL"


@dataclass(frozen=True)
class Replica:
    """One endpoint serving the model (a registry row, or the single ``base_url``)."""

    base_url: str
    model: str  # as sent in the request body
    api_key: SecretStr | None = None
    key_env: str | None = None
    api_client_type: str = "openai_chat_completions"
    headers: Mapping[str, str] = field(default_factory=dict)  # the registry row's
    think_tags: bool = True  # split ``<think>…</think>`` out of the answer


@dataclass(frozen=True)
class ModelTarget:
    """Where and how to call a model. ``base_url`` is None for the offline mock."""

    model_path: str  # as the user wrote it, e.g. "openai/gpt-5-mini"
    model: str  # as sent in the request body
    provider: str | None
    base_url: str | None
    api_key: SecretStr | None
    key_env: str | None
    #: replicas of a registry endpoint (requests spread round-robin); () = base_url only
    replicas: tuple[Replica, ...] = ()
    #: the run's headers (``headers`` table, ``header`` lines, ``--header``), over a row's
    headers: Mapping[str, str] = field(default_factory=dict)
    api_client_type: str = "openai_chat_completions"
    endpoint_id: str | None = None
    #: how a bare model name was read (0.2's rule: ``gpt-5-mini`` → ``openai/gpt-5-mini``)
    assumed: str | None = None
    #: split ``<think>…</think>`` out of answers (a server without a reasoning parser)
    think_tags: bool = True

    @property
    def is_mock(self) -> bool:
        return self.provider == MOCK_PROVIDER

    def endpoints(self) -> tuple[Replica, ...]:
        """Every replica to call (one for a plain base URL)."""
        if self.replicas:
            return self.replicas
        return (
            Replica(
                base_url=self.base_url or "",
                model=self.model,
                api_key=self.api_key,
                key_env=self.key_env,
                api_client_type=self.api_client_type,
                think_tags=self.think_tags,
            ),
        )

    def describe(self) -> str:
        if self.is_mock:
            return f"{self.model_path} (offline mock)"
        if len(self.replicas) > 1:
            return (
                f"{self.model} at {len(self.replicas)} replicas of {self.endpoint_id} "
                f"({redact_url(self.replicas[0].base_url)}, …)"
            )
        where = f"{self.model} at {redact_url(self.base_url or '')}"
        return f"{where} ({self.assumed})" if self.assumed else where


@dataclass(frozen=True)
class ModelSpec:
    """A model as the user named it; :meth:`resolve` checks keys, so call it late
    (after the cheaper checks of a run)."""

    model_path: str
    base_url: str | None = None
    api_key_env: str | None = None
    api_key: SecretStr | None = None
    #: the endpoint registry to look ``endpoint_id`` (else ``model_path``) up in
    registry: Registry | None = None
    endpoint_id: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    #: split ``<think>…</think>`` out of answers (None: the registry row's, else yes)
    think_tags: bool | None = None

    def resolve(self, env: Mapping[str, str] | None = None) -> ModelTarget:
        return resolve_target(
            self.model_path,
            base_url=self.base_url,
            api_key_env=self.api_key_env,
            api_key=self.api_key.get_secret_value() if self.api_key else None,
            env=env,
            registry=self.registry,
            endpoint_id=self.endpoint_id,
            headers=self.headers,
            think_tags=self.think_tags,
        )


def split_model_path(model_path: str) -> tuple[str | None, str]:
    """``"openai/gpt-5-mini"`` → ``("openai", "gpt-5-mini")``; others keep their name."""
    prefix, sep, rest = model_path.partition("/")
    if sep and rest and (prefix in PROVIDERS or prefix == MOCK_PROVIDER):
        return prefix, rest
    return None, model_path


def resolve_target(
    model_path: str,
    *,
    base_url: str | None = None,
    api_key_env: str | None = None,
    api_key: str | None = None,
    env: Mapping[str, str] | None = None,
    registry: Registry | None = None,
    endpoint_id: str | None = None,
    headers: Mapping[str, str] | None = None,
    think_tags: bool | None = None,
) -> ModelTarget:
    """Decide the endpoint, request model name, wire and key for ``model_path``.

    Key precedence: ``api_key`` > the variable named by ``api_key_env`` (named but
    unset is an error) > the provider's variable, only when calling the provider's
    own URL. With a custom ``base_url`` and no key variable, no key is sent.

    The wire: an ``openai/`` model on OpenAI's own API speaks the Responses API (as the
    published CLI does); ``anthropic/`` models the Messages API; a registry row names
    its own; everything else chat completions.
    """
    model_path = model_path.strip()
    if not model_path and not endpoint_id:
        raise InvalidInputError(
            "no model given", hint="name a model as provider/model", code="NO_MODEL"
        )
    env = os.environ if env is None else env
    rows = _rows(registry, endpoint_id, model_path)
    if rows:
        found = _from_registry(
            endpoint_id or model_path, rows, base_url, api_key_env, api_key, env, headers
        )
        return found if think_tags is None else _think_tags(found, think_tags)
    provider_name, model, assumed = _provider_of(model_path, base_url)
    if provider_name == MOCK_PROVIDER and not base_url:
        from osmosis_client.llm.mock import parse_mock_model

        parse_mock_model(model)  # an unknown behaviour fails before the run starts
        return ModelTarget(model_path, model, MOCK_PROVIDER, None, None, None)
    url, default_key_env = _endpoint(model_path, PROVIDERS.get(provider_name or ""), base_url)
    if provider_name == "openai" and not base_url and env.get(OPENAI_BASE_URL_ENV):
        # as the OpenAI SDK (and so 0.2): a proxy or local server for openai/ models
        url, _ = _endpoint(model_path, None, env[OPENAI_BASE_URL_ENV])
    key_env = api_key_env if api_key else api_key_env or default_key_env
    key = SecretStr(api_key) if api_key else _key_from_env(key_env, api_key_env, model_path, env)
    return ModelTarget(
        model_path,
        model,
        provider_name,
        url,
        key,
        key_env,
        headers=dict(headers or {}),
        api_client_type=_wire(provider_name, url),
        assumed=assumed,
        think_tags=True if think_tags is None else think_tags,
    )


def _rows(
    registry: Registry | None, endpoint_id: str | None, model_path: str
) -> tuple[Endpoint, ...]:
    """The registry's rows for the model (none: it is not registered); an ``endpoint_id``
    that is not there is an error."""
    rows = registry.get(endpoint_id or model_path) if registry is not None else ()
    if endpoint_id and not rows:
        where = registry.path if registry is not None and registry.path else "no registry"
        raise InvalidInputError(
            f"endpoint_id {endpoint_id!r} is not in the endpoint registry ({where})",
            hint="add an [[endpoint]] row for it, or name the model with model_path",
            code="UNKNOWN_ENDPOINT",
        )
    return rows


def _think_tags(target: ModelTarget, split: bool) -> ModelTarget:
    """A registry target whose rows' ``think_tags`` a run's setting overrides."""
    replicas = tuple(dataclasses.replace(r, think_tags=split) for r in target.replicas)
    return dataclasses.replace(target, replicas=replicas, think_tags=split)


def _wire(provider: str | None, url: str) -> str:
    """The API a provider's model is called with (see :func:`resolve_target`)."""
    from osmosis_client.llm.responses import is_official

    if provider == "openai" and is_official(url):
        return "openai_responses"
    if provider == "anthropic" and url == PROVIDERS["anthropic"].base_url:
        return "anthropic_messages"
    return "openai_chat_completions"


def _provider_of(model_path: str, base_url: str | None) -> tuple[str | None, str, str | None]:
    """(provider, model, how a bare name was read): 0.2 read ``gpt-5-mini`` with no base
    URL as ``openai/gpt-5-mini``."""
    provider_name, model = split_model_path(model_path)
    if provider_name is None and not base_url and "/" not in model_path:
        return "openai", model, f"read as openai/{model_path}, as 0.2 did"
    return provider_name, model, None


def _from_registry(
    name: str,
    rows: tuple[Endpoint, ...],
    base_url: str | None,
    api_key_env: str | None,
    api_key: str | None,
    env: Mapping[str, str],
    headers: Mapping[str, str] | None,
) -> ModelTarget:
    """A registry endpoint (its replicas); ``base_url``/``api_key_env`` override the rows."""
    if base_url:
        rows = rows[:1]  # one explicit URL: the rows only lend their model and type
    replicas = []
    for row in rows:
        url, _ = _endpoint(name, None, base_url or row.url)
        key_env = api_key_env or row.key
        key = SecretStr(api_key) if api_key else _key_from_env(key_env, key_env, name, env)
        replicas.append(
            Replica(
                base_url=url,
                model=row.model,
                api_key=key,
                key_env=key_env,
                api_client_type=row.api_client_type,
                headers=dict(row.headers),
                think_tags=row.think_tags,
            )
        )
    first = replicas[0]
    return ModelTarget(
        model_path=name,
        model=first.model,
        provider=None,
        base_url=first.base_url,
        api_key=first.api_key,
        key_env=first.key_env,
        replicas=tuple(replicas),
        headers=dict(headers or {}),
        api_client_type=first.api_client_type,
        endpoint_id=name,
        think_tags=first.think_tags,
    )


def _endpoint(
    model_path: str, provider: Provider | None, base_url: str | None
) -> tuple[str, str | None]:
    """(base URL, the provider's key variable when calling the provider's own URL)."""
    if base_url:
        url = base_url.rstrip("/")
        if not re.match(r"^https?://[^\s/]+", url):
            raise InvalidInputError(
                f"invalid base URL {redact_url(base_url)!r}",
                hint="use e.g. http://localhost:8000/v1",
                code="INVALID_URL",
            )
        return url, provider.key_env if provider and url == provider.base_url else None
    if provider is not None:
        return provider.base_url, provider.key_env
    known = ", ".join(sorted(PROVIDERS))
    raise InvalidInputError(
        f"don't know where to reach model {model_path!r}",
        hint=f"use provider/model ({known}, mock), or give the base URL of your server",
        code="UNKNOWN_MODEL_ROUTE",
        data={"providers": known},
    )


def _key_from_env(
    key_env: str | None, named: str | None, model_path: str, env: Mapping[str, str]
) -> SecretStr | None:
    if named is not None and not _ENV_NAME.match(named):
        raise InvalidInputError(
            f"the key variable must name an environment variable, got {named[:4]}…",
            hint="give the variable's NAME (e.g. OPENAI_API_KEY), never the key itself",
            code="INVALID_KEY_ENV",
        )
    if not key_env:
        return None
    value = env.get(key_env)
    if not value:
        raise MissingAPIKeyError(
            f"the API key variable {key_env} is not set",
            hint=f"export {key_env}=…",
            data={"env_var": key_env, "model": model_path},
        )
    return SecretStr(value)
