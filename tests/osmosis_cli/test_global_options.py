"""The root options and output modes the published CLI's users type: ``--json`` /
``--plain`` anywhere, ``--workspace``, ``--platform`` (``--platform-url``),
``--env-file`` and ``.env``, ``-V``; and the envelopes on both streams."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
import respx

from osmosis_cli import globals as globals_
from osmosis_cli.terminal.errors import handle_errors
from osmosis_cli.terminal.output import Output
from osmosis_client._version import __version__
from tests import envelopes
from tests.gitrepo import git
from tests.osmosis_cli.conftest import USER, Invoke

VERIFY = {"expires_at": "2030-01-01T00:00:00Z", "user": USER}
RUNS = {"eval_runs": [], "total_count": 0, "has_more": False, "next_offset": None}


@pytest.mark.parametrize(
    "args",
    [
        ["--json", "whoami"],
        ["whoami", "--json"],
        ["auth", "--json", "whoami"],
        ["auth", "whoami", "--json"],
    ],
)
def test_json_is_accepted_anywhere_on_the_line(
    invoke: Invoke, router: respx.MockRouter, monkeypatch: pytest.MonkeyPatch, args: list[str]
) -> None:
    monkeypatch.setenv("OSMOSIS_TOKEN", "ci-token")
    router.get("/api/cli/verify").respond(200, json=VERIFY)
    result = invoke(*args)
    assert result.exit_code == 0, result.stderr
    assert result.data()["email"] == USER["email"]


def test_a_literal_double_dash_ends_the_hoisting() -> None:
    rest, state, _ = globals_.parse(["eval", "rubric", "--", "--json"])
    assert rest == ["eval", "rubric", "--", "--json"] and state.output == "rich"
    rest, state, _ = globals_.parse(["--plain", "eval", "list"])
    assert rest == ["eval", "list"] and state.output == "plain"


def test_json_and_plain_together_are_a_usage_error(invoke: Invoke) -> None:
    result = invoke("--json", "eval", "list", "--plain")
    assert result.exit_code == 2
    assert "--json and --plain" in result.stderr and result.stdout == ""


def test_root_workspace_scopes_this_invocation(
    invoke: Invoke, router: respx.MockRouter, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OSMOSIS_TOKEN", "ci-token")
    monkeypatch.setenv("OSMOSIS_WORKSPACE", "acme")
    route = router.get("/api/cli/eval-runs").respond(200, json=RUNS)
    assert invoke("--workspace", "beta", "--json", "eval", "list").exit_code == 0
    assert route.calls.last.request.headers["X-Osmosis-Workspace"] == "beta"  # beats the env
    empty = invoke("--workspace", " ", "eval", "list")
    assert empty.exit_code == 2 and "non-empty" in empty.stderr


@pytest.mark.parametrize("flag", ["--platform", "--platform-url"])
def test_platform_and_its_alias(invoke: Invoke, monkeypatch: pytest.MonkeyPatch, flag: str) -> None:
    monkeypatch.setenv("OSMOSIS_TOKEN", "ci-token")
    monkeypatch.setenv("OSMOSIS_TOKEN_PLATFORM_URL", "https://other.test")
    with respx.mock(base_url="https://other.test", assert_all_called=True) as other:
        other.get("/api/cli/verify").respond(200, json=VERIFY)
        result = invoke(flag, "https://other.test", "--json", "whoami")
        assert result.exit_code == 0, result.stderr
        assert result.data()["platform_url"] == "https://other.test"
    inline = invoke(f"{flag}=https://other.test", "eval", "bogus")
    assert inline.exit_code == 2 and "No such command" in inline.stderr


def test_version_short_and_long(invoke: Invoke) -> None:
    for flag in ("-V", "--version"):
        result = invoke(flag)
        assert result.exit_code == 0 and result.stdout == f"osmosis-client {__version__}\n"
    assert invoke("--json", "-V").stdout.startswith("osmosis-client ")  # as published: text


# ------------------------------------------------------------------ environment files


def test_env_file_supplies_variables_the_environment_lacks(
    invoke: Invoke, router: respx.MockRouter, tmp_path: Path
) -> None:
    env = tmp_path / "ci.env"
    env.write_text('# CI\nexport OSMOSIS_TOKEN="from-file"\nOSMOSIS_WORKSPACE=acme # a comment\n')
    route = router.get("/api/cli/verify").respond(200, json=VERIFY)
    result = invoke("--env-file", str(env), "--json", "whoami")
    assert result.exit_code == 0, result.stderr
    assert route.calls.last.request.headers["Authorization"] == "Bearer from-file"
    data = result.data()
    assert data["token_source"] == "env" and data["workspace"]["name"] == "acme"
    assert "from-file" not in result.stdout + result.stderr


def test_env_file_never_overrides_and_never_silently_disagrees_on_a_login(
    invoke: Invoke, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    env = tmp_path / "x.env"
    env.write_text("OSMOSIS_TOKEN=from-file\n")
    monkeypatch.setenv("OSMOSIS_TOKEN", "ambient")
    result = invoke("--env-file", str(env), "--json", "whoami")
    assert result.exit_code == 2
    error = result.error()
    assert error["code"] == "CONFLICT" and "OSMOSIS_TOKEN" in error["message"]
    assert "from-file" not in result.stderr and "ambient" not in result.stderr


def test_env_file_problems_are_one_line_without_the_content(invoke: Invoke, tmp_path: Path) -> None:
    missing = invoke("--env-file", str(tmp_path / "nope.env"), "eval", "list")
    assert missing.exit_code == 2 and "does not exist" in missing.stderr
    bad = tmp_path / "bad.env"
    bad.write_text("GOOD=1\nthis is sk-secret-value\n")
    result = invoke("--env-file", str(bad), "eval", "list")
    assert result.exit_code == 2
    assert "line 2" in result.stderr and "sk-secret-value" not in result.stderr
    assert result.stderr.count("\n") == 1


def test_dot_env_is_found_up_to_the_checkout_top_and_never_above(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / ".env").write_text("ABOVE=1\n")
    repo = tmp_path / "repo"
    (repo / "configs" / "eval").mkdir(parents=True)
    git(repo, "init", "-q")
    environ: dict[str, str] = {}
    assert globals_.load_env_file(None, environ, repo / "configs" / "eval") is None
    assert environ == {}  # the unrelated .env above the checkout is not read
    (repo / ".env").write_text("INSIDE='quoted # kept'\n")
    found = globals_.load_env_file(None, environ, repo / "configs" / "eval")
    assert found == repo / ".env" and environ == {"INSIDE": "quoted # kept"}
    outside = tmp_path / "plain"
    outside.mkdir()
    monkeypatch.setenv("OSMOSIS_ENV_FILE", str(repo / ".env"))
    environ = {"OSMOSIS_ENV_FILE": str(repo / ".env")}
    assert globals_.load_env_file(None, environ, outside) == repo / ".env"


# ------------------------------------------------------------------ envelopes


def test_error_envelope_names_the_command_and_version(invoke: Invoke) -> None:
    result = invoke("eval", "info", "x", "--json")  # no login
    assert result.exit_code == 3 and result.stdout == ""
    (document,) = envelopes.stderr_documents(result.stderr)
    assert document["command"] == "eval info" and document["cli_version"] == __version__
    assert document["error"]["code"] == "AUTH_REQUIRED"


def test_usage_error_envelope_at_the_root(invoke: Invoke) -> None:
    result = invoke("--json", "nope")
    (document,) = envelopes.stderr_documents(result.stderr)
    assert result.exit_code == 2
    assert document["command"] == "<root>" and document["error"]["code"] == "VALIDATION"


def test_warnings_are_json_lines_in_json_mode() -> None:
    err = io.StringIO()
    out = Output(json_mode=True, stdout=io.StringIO(), stderr=err)
    out.warn("keyring unavailable", code="KEYRING_UNAVAILABLE")
    out.note("a note")
    first, second = (json.loads(line) for line in err.getvalue().splitlines())
    assert first == {
        "schema_version": 1,
        "cli_version": __version__,
        "warning": {"code": "KEYRING_UNAVAILABLE", "message": "keyring unavailable"},
    }
    assert second["warning"]["message"] == "a note"


def test_plain_mode_lists_rows_details_lines_and_operations_their_message() -> None:
    stdout = io.StringIO()
    out = Output(plain=True, stdout=stdout, stderr=io.StringIO())
    out.list_result([{}], rows=[["a\tb", "line\nbreak"]])
    out.detail_result({"name": "x", "nested": {"k": 1}, "gone": None})
    out.operation_result("thing.do", message="Done.")
    out.operation_result("thing.other")
    assert stdout.getvalue().splitlines() == [
        "a b\tline break",
        "name: x",
        "nested:",
        "  k: 1",
        "Done.",
        "thing.other: success",
    ]


def test_a_json_command_that_writes_nothing_is_an_internal_error(
    capsys: pytest.CaptureFixture[str],
) -> None:
    class Root:
        obj = type("State", (), {"output": "json", "verbose": False})()

    class Ctx:
        command_path = "osmosis thing"

        def find_root(self) -> Any:
            return Root()

    @handle_errors
    def silent(ctx: Any) -> None:
        return None

    import typer

    with pytest.raises(typer.Exit) as exited:
        silent(Ctx())
    assert exited.value.exit_code == 1
    error = envelopes.error_of(capsys.readouterr().err)
    assert error["code"] == "INTERNAL" and "without its result" in error["message"]


def test_verbose_is_accepted_anywhere_but_validate_keeps_its_own() -> None:
    for argv, level in (
        (["eval", "list", "-v"], 1),
        (["--workspace", "w", "eval", "--verbose", "list"], 1),
        (["-v", "eval", "list"], 1),
        (["-vv", "eval", "list"], 2),  # -vv: every model call too (issue 34)
        (["-v", "eval", "list", "-v"], 2),
    ):
        rest, state, _ = globals_.parse(argv)
        assert rest[-2:] == ["eval", "list"] and "-v" not in rest and "--verbose" not in rest
        assert state.verbose == level, argv
    rest, state, _ = globals_.parse(["-v"])
    assert rest == [] and state.verbose == 1
    rest, state, _ = globals_.parse(["validate", "-m", "server:agent_loop", "-v"])
    assert rest == ["validate", "-m", "server:agent_loop", "-v"]  # 0.2's longer report
    assert state.verbose == 0
    rest, _, _ = globals_.parse(["eval", "run", "x.toml", "--", "-v"])
    assert rest == ["eval", "run", "x.toml", "--", "-v"]


def test_verbose_after_the_command_logs_every_http_call(
    invoke: Invoke, router: respx.MockRouter, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OSMOSIS_TOKEN", "ci-token")
    monkeypatch.setenv("OSMOSIS_WORKSPACE", "acme")
    router.get("/api/cli/eval-runs").respond(200, json=RUNS)
    result = invoke("eval", "list", "-v")
    assert result.exit_code == 0, result.stderr
    assert "GET " in result.stderr and "/api/cli/eval-runs -> 200" in result.stderr
    assert "ci-token" not in result.stderr
