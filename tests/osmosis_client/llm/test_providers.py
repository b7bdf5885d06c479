from __future__ import annotations

import pytest

from osmosis_client.errors import InvalidInputError, MissingAPIKeyError
from osmosis_client.llm.providers import PROVIDERS, resolve_target


def test_every_provider_in_the_table_resolves() -> None:
    for name, provider in PROVIDERS.items():
        target = resolve_target(f"{name}/some-model", env={provider.key_env: "k"})
        assert target.base_url == provider.base_url
        assert target.model == "some-model"
        assert target.api_key is not None and target.api_key.get_secret_value() == "k"
    assert len(PROVIDERS) == 11


def test_missing_key_names_the_variable() -> None:
    with pytest.raises(MissingAPIKeyError, match="OPENAI_API_KEY"):
        resolve_target("openai/gpt-5-mini", env={})


def test_custom_base_url_sends_no_key_unless_named() -> None:
    target = resolve_target(
        "Qwen/Qwen3-8B", base_url="http://localhost:8000/v1/", env={"OPENAI_API_KEY": "k"}
    )
    assert (target.model, target.base_url, target.api_key) == (
        "Qwen/Qwen3-8B",
        "http://localhost:8000/v1",
        None,
    )
    # a provider prefix with a foreign base URL: the provider's key is not sent there
    proxied = resolve_target(
        "openai/gpt-4o", base_url="http://proxy:1/v1", env={"OPENAI_API_KEY": "k"}
    )
    assert proxied.model == "gpt-4o" and proxied.api_key is None
    named = resolve_target("m", base_url="http://x/v1", api_key_env="MY_KEY", env={"MY_KEY": "v"})
    assert named.api_key is not None and named.api_key.get_secret_value() == "v"
    with pytest.raises(MissingAPIKeyError, match="MY_KEY"):
        resolve_target("m", base_url="http://x/v1", api_key_env="MY_KEY", env={})


def test_api_key_env_must_be_a_name_not_a_key() -> None:
    with pytest.raises(InvalidInputError) as info:
        resolve_target("m", base_url="http://x/v1", api_key_env="sk-live-123456", env={})
    assert "sk-live-123456" not in info.value.message


def test_a_bare_name_is_an_openai_model_as_in_0_2() -> None:
    target = resolve_target("gpt-5-mini", env={"OPENAI_API_KEY": "sk-test-123456"})
    assert (target.provider, target.model) == ("openai", "gpt-5-mini")
    assert target.base_url == "https://api.openai.com/v1"
    assert "read as openai/gpt-5-mini, as 0.2 did" in target.describe()
    with pytest.raises(InvalidInputError) as info:
        resolve_target("gpt-5-mini", env={})
    assert info.value.code == "MISSING_API_KEY"


def test_openai_base_url_points_openai_models_elsewhere_with_the_openai_key() -> None:
    env = {"OPENAI_API_KEY": "sk-test-123456", "OPENAI_BASE_URL": "http://127.0.0.1:9/v1/"}
    target = resolve_target("openai/gpt-5-mini", env=env)
    assert target.base_url == "http://127.0.0.1:9/v1"
    assert target.api_key is not None and target.api_key.get_secret_value() == "sk-test-123456"
    explicit = resolve_target("openai/gpt-5-mini", base_url="http://h:1/v1", env=env)
    assert explicit.base_url == "http://h:1/v1"  # --base-url wins
    other = resolve_target("xai/grok", env={**env, "XAI_API_KEY": "k-123456"})
    assert other.base_url == "https://api.x.ai/v1"  # only openai/ models
    with pytest.raises(InvalidInputError):
        resolve_target("openai/m", env={**env, "OPENAI_BASE_URL": "ftp://x"})


def test_unknown_model_without_base_url_and_mock() -> None:
    with pytest.raises(InvalidInputError) as info:
        resolve_target("meta/llama3", env={})
    assert info.value.code == "UNKNOWN_MODEL_ROUTE"
    assert "base URL" in (info.value.hint or "") and "--" not in (info.value.hint or "")
    mock = resolve_target("mock/echo", env={})
    assert mock.is_mock and mock.base_url is None
