from __future__ import annotations

from pathlib import Path

import pytest

from osmosis_client.errors import InsecureURLError, InvalidInputError
from osmosis_client.platform.settings import (
    config_dir,
    normalize_platform_url,
    resolve_platform_url,
)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("https://Platform.Osmosis.AI/", "https://platform.osmosis.ai"),
        ("HTTPS://platform.osmosis.ai:443", "https://platform.osmosis.ai"),
        ("https://platform.osmosis.ai:8443/", "https://platform.osmosis.ai:8443"),
        ("http://localhost:80", "http://localhost"),
        ("http://127.0.0.5:9000/base/", "http://127.0.0.5:9000/base"),
        ("http://[::1]:9000", "http://[::1]:9000"),
    ],
)
def test_platform_url_is_normalised(raw: str, expected: str) -> None:
    assert normalize_platform_url(raw) == expected


def test_plain_http_to_remote_host_is_refused() -> None:
    with pytest.raises(InsecureURLError) as info:
        normalize_platform_url("http://platform.example.com")
    assert "OSMOSIS_ALLOW_INSECURE" in (info.value.hint or "")


def test_allow_insecure_env_lets_plain_http_through() -> None:
    url = resolve_platform_url(
        "http://platform.example.com",
        env={"OSMOSIS_ALLOW_INSECURE": "1"},
    )
    assert url == "http://platform.example.com"


@pytest.mark.parametrize("raw", ["ftp://x", "not a url", "https://", "https://u:p@host"])
def test_invalid_platform_urls_are_input_errors(raw: str) -> None:
    with pytest.raises(InvalidInputError):
        normalize_platform_url(raw)


def test_flag_beats_env_beats_default() -> None:
    env = {"OSMOSIS_PLATFORM_URL": "https://env.example"}
    assert resolve_platform_url("https://flag.example", env=env) == "https://flag.example"
    assert resolve_platform_url(None, env=env) == "https://env.example"
    assert resolve_platform_url(None, env={}) == "https://platform.osmosis.ai"


def test_config_dir_precedence(tmp_path: Path) -> None:
    assert config_dir({"OSMOSIS_CONFIG_DIR": str(tmp_path / "a")}) == tmp_path / "a"
    assert config_dir({"XDG_CONFIG_HOME": str(tmp_path)}) == tmp_path / "osmosis"
