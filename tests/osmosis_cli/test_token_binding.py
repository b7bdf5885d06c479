"""A token goes only to the platform it was issued for: ``OSMOSIS_TOKEN`` is bound by
``OSMOSIS_TOKEN_PLATFORM_URL`` (else to the default platform), as the published CLI
binds it, and refused before any request; a stored token is kept per platform."""

from __future__ import annotations

from pathlib import Path

import pytest
import respx

from tests import envelopes
from tests.conftest import PLATFORM
from tests.osmosis_cli.conftest import ACME, USER, Invoke
from tests.osmosis_cli.test_auth import device_routes

VERIFY = {"expires_at": "2030-01-01T00:00:00Z", "user": USER}
EVIL = "https://collector.example"
SECRET = "ci-token-s3cret"


@pytest.fixture
def nowhere() -> respx.MockRouter:
    """Every request anywhere is recorded and answered 200: none may be made."""
    with respx.mock(assert_all_called=False) as mock:
        mock.route().respond(200, json=VERIFY)
        yield mock


def _refused(result: object, code: str, nowhere: respx.MockRouter) -> dict[str, object]:
    assert result.exit_code == 3, result.stderr  # type: ignore[attr-defined]
    assert not nowhere.calls, [str(c.request.url) for c in nowhere.calls]
    assert SECRET not in result.stdout + result.stderr  # type: ignore[attr-defined]
    error = envelopes.error_of(result.stderr)  # type: ignore[attr-defined]
    assert error["code"] == code
    return error


def test_an_env_token_without_its_platform_goes_only_to_the_default_one(
    invoke: Invoke, monkeypatch: pytest.MonkeyPatch, nowhere: respx.MockRouter
) -> None:
    monkeypatch.setenv("OSMOSIS_TOKEN", SECRET)
    monkeypatch.delenv("OSMOSIS_TOKEN_PLATFORM_URL")
    error = _refused(
        invoke("--platform", EVIL, "--json", "whoami"), "ENV_TOKEN_PLATFORM_REQUIRED", nowhere
    )
    assert "OSMOSIS_TOKEN_PLATFORM_URL=https://collector.example" in str(error["hint"])
    monkeypatch.delenv("OSMOSIS_PLATFORM_URL")  # the default platform: the token may go
    result = invoke("--json", "whoami")
    assert result.exit_code == 0, result.stderr
    assert [str(c.request.url) for c in nowhere.calls] == [
        "https://platform.osmosis.ai/api/cli/verify"
    ]


def test_an_env_token_bound_elsewhere_is_not_sent_and_says_where_it_belongs(
    invoke: Invoke, monkeypatch: pytest.MonkeyPatch, nowhere: respx.MockRouter
) -> None:
    monkeypatch.setenv("OSMOSIS_TOKEN", SECRET)
    error = _refused(
        invoke("--platform", EVIL, "--json", "eval", "list"),
        "ENV_TOKEN_PLATFORM_MISMATCH",
        nowhere,
    )
    assert PLATFORM in str(error["message"]) and EVIL in str(error["message"])
    plain = invoke("--platform", EVIL, "whoami")  # a person reads one line
    assert (
        plain.exit_code == 3 and plain.stderr.count("\n") <= 2 and "Traceback" not in plain.stderr
    )


def test_a_planted_env_file_cannot_redirect_the_token(
    invoke: Invoke, monkeypatch: pytest.MonkeyPatch, nowhere: respx.MockRouter, tmp_path: Path
) -> None:
    """A `.env` in a cloned repository naming another platform: the ambient token stays."""
    monkeypatch.setenv("OSMOSIS_TOKEN", SECRET)
    monkeypatch.delenv("OSMOSIS_PLATFORM_URL")
    monkeypatch.delenv("OSMOSIS_TOKEN_PLATFORM_URL")
    repo = tmp_path / "cloned"
    repo.mkdir()
    (repo / ".env").write_text(f"OSMOSIS_PLATFORM_URL={EVIL}\n")
    monkeypatch.chdir(repo)
    _refused(invoke("--json", "whoami"), "ENV_TOKEN_PLATFORM_REQUIRED", nowhere)


def test_the_binding_compares_normalized_urls_and_a_bad_one_is_named(
    invoke: Invoke, monkeypatch: pytest.MonkeyPatch, router: respx.MockRouter
) -> None:
    monkeypatch.setenv("OSMOSIS_TOKEN", SECRET)
    monkeypatch.setenv("OSMOSIS_TOKEN_PLATFORM_URL", "HTTPS://Platform.Test:443/")
    router.get("/api/cli/verify").respond(200, json=VERIFY)
    assert invoke("--json", "whoami").exit_code == 0
    assert router.calls.last.request.headers["Authorization"] == f"Bearer {SECRET}"
    monkeypatch.setenv("OSMOSIS_TOKEN_PLATFORM_URL", "ftp://x")
    bad = invoke("whoami")
    assert bad.exit_code == 2 and "OSMOSIS_TOKEN_PLATFORM_URL" in bad.stderr


def test_a_stored_token_never_leaves_for_a_platform_it_was_not_issued_for(
    invoke: Invoke, router: respx.MockRouter, nowhere: respx.MockRouter
) -> None:
    device_routes(router, [ACME])
    assert invoke("login").exit_code == 0  # a token for platform.test, in the keyring
    nowhere.calls.reset()
    result = invoke("--platform", EVIL, "--json", "eval", "list")
    assert result.exit_code == 3
    assert envelopes.error_of(result.stderr)["code"] == "AUTH_REQUIRED"
    assert not nowhere.calls
