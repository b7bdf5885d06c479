"""`osmosis secret list / set / delete`: values never from argv, never shown; the
published wire (scope personal is "user"; DELETE carries a JSON body)."""

from __future__ import annotations

import json

import pytest
import respx

from tests.osmosis_cli.conftest import Invoke

PATH = "/api/cli/environment-secrets"
RECORDS = [
    {"id": "s1", "name": "OPENAI_API_KEY", "scope": "user", "updated_at": "2026-11-20"},
    {"id": "s2", "name": "OPENAI_API_KEY", "scope": "workspace"},
    {"id": "s3", "name": "HF_TOKEN", "scope": "workspace"},
]


@pytest.fixture(autouse=True)
def logged_in(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OSMOSIS_TOKEN", "tok")
    monkeypatch.setenv("OSMOSIS_WORKSPACE", "acme")


def test_list_reads_scopes_as_personal_and_workspace(
    invoke: Invoke, router: respx.MockRouter
) -> None:
    route = router.get(PATH).respond(
        200,
        json={
            "environment_secrets": RECORDS,
            "total_count": 3,
            "has_more": False,
            "platform_url": "https://platform.test/acme/secrets",
        },
    )
    listed = invoke("--json", "secret", "list")
    assert listed.exit_code == 0, listed.stderr
    assert [(i["name"], i["scope"]) for i in listed.items()] == [
        ("OPENAI_API_KEY", "personal"),
        ("OPENAI_API_KEY", "workspace"),
        ("HF_TOKEN", "workspace"),
    ]
    assert listed.json()["platform_url"] == "https://platform.test/acme/secrets"
    assert route.calls.last.request.url.params["scope"] == "all"
    invoke("--json", "secret", "list", "--scope", "personal")
    assert route.calls.last.request.url.params["scope"] == "user"
    bad = invoke("secret", "list", "--scope", "team")
    assert bad.exit_code == 2 and "unknown --scope 'team'" in bad.stderr


def test_set_takes_the_value_from_env_or_stdin_never_argv(
    invoke: Invoke, router: respx.MockRouter, monkeypatch: pytest.MonkeyPatch
) -> None:
    route = router.post(PATH).respond(200, json={"id": "s9", "name": "HF_TOKEN", "scope": "user"})
    monkeypatch.setenv("MY_HF", "hf-secret-value")
    result = invoke("--json", "secret", "set", "HF_TOKEN", "--env", "MY_HF")
    assert result.exit_code == 0, result.stderr
    assert json.loads(route.calls.last.request.content) == {
        "name": "HF_TOKEN",
        "value": "hf-secret-value",
        "scope": "user",
    }
    document = result.json()
    assert document["operation"] == "secret.set"
    assert document["message"] == 'Secret "HF_TOKEN" saved in personal scope.'
    assert document["resource"]["scope"] == "personal"
    assert "hf-secret-value" not in result.stdout + result.stderr
    piped = invoke("secret", "set", "HF_TOKEN", "--scope", "workspace", input="from-stdin\n")
    assert piped.exit_code == 0, piped.stderr
    assert json.loads(route.calls.last.request.content)["value"] == "from-stdin"
    assert json.loads(route.calls.last.request.content)["scope"] == "workspace"


def test_set_without_a_value_fails_before_any_call(
    invoke: Invoke, router: respx.MockRouter, monkeypatch: pytest.MonkeyPatch
) -> None:
    route = router.post(PATH).respond(200, json={})
    error = invoke("--json", "secret", "set", "HF_TOKEN", input="").error()
    assert error["code"] == "INTERACTIVE_REQUIRED" and error["details"]["flags"] == ["--env"]
    monkeypatch.delenv("UNSET_VAR", raising=False)
    unset = invoke("secret", "set", "HF_TOKEN", "--env", "UNSET_VAR")
    assert unset.exit_code == 2 and "UNSET_VAR is not set or empty" in unset.stderr
    bad_name = invoke("secret", "set", "lower_case", input="x")
    assert bad_name.exit_code == 2 and "invalid secret name" in bad_name.stderr
    assert not route.called


def test_a_platform_error_echoing_the_value_is_redacted(
    invoke: Invoke, router: respx.MockRouter
) -> None:
    router.post(PATH).respond(
        422,
        json={"error": "value sk-LEAKED-123 is not allowed", "details": {"value": "sk-LEAKED-123"}},
    )
    result = invoke("--json", "secret", "set", "HF_TOKEN", input="sk-LEAKED-123")
    assert result.exit_code != 0
    assert "sk-LEAKED-123" not in result.stdout + result.stderr
    assert "[REDACTED]" in result.stderr


def test_delete_checks_existence_confirms_and_sends_a_json_body(
    invoke: Invoke, router: respx.MockRouter
) -> None:
    router.get(PATH).respond(200, json={"environment_secrets": RECORDS, "has_more": False})
    delete = router.delete(PATH).respond(200, json={})
    wrong_scope = invoke("secret", "delete", "HF_TOKEN")
    assert wrong_scope.exit_code == 1
    assert "osmosis secret delete HF_TOKEN --scope workspace" in wrong_scope.stderr
    absent = invoke("--json", "secret", "delete", "NOPE")
    assert absent.error()["code"] == "NOT_FOUND"
    unconfirmed = invoke("--json", "secret", "delete", "HF_TOKEN", "--scope", "workspace")
    assert unconfirmed.error()["code"] == "INTERACTIVE_REQUIRED"
    assert not delete.called
    done = invoke("--json", "secret", "delete", "HF_TOKEN", "--scope", "workspace", "-y")
    assert done.exit_code == 0, done.stderr
    assert json.loads(delete.calls.last.request.content) == {
        "name": "HF_TOKEN",
        "scope": "workspace",
    }
    assert done.json()["resource"] == {"name": "HF_TOKEN", "scope": "workspace"}


def test_a_value_that_is_not_utf8_is_one_line_exit_2(
    invoke: Invoke, router: respx.MockRouter
) -> None:
    """Issue 33: bytes that are not UTF-8 on stdin were an internal error."""
    route = router.post(PATH).respond(200, json={})
    result = invoke("secret", "set", "HF_TOKEN", input=b"\xff\xfe-binary\n")  # type: ignore[arg-type]
    assert result.exit_code == 2, result.stderr
    assert "not UTF-8 text; nothing saved" in result.stderr
    assert len(result.stderr.strip().splitlines()) <= 2 and "Traceback" not in result.stderr
    assert not route.called
