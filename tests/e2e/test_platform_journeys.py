"""The installed `osmosis` against the loopback platform: full journeys and every fault.

Every run is a subprocess with an isolated config dir, the file token store and
stdin not a TTY; each is bounded in time. Outputs are scanned for secrets.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests import envelopes
from tests.e2e.conftest import Run
from tests.e2e.platform_double import PlatformDouble
from tests.gitrepo import git, make_project

pytestmark = pytest.mark.slow


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return make_project(tmp_path / "repo")


def config(project: Path) -> str:
    return str(project / "configs" / "eval" / "demo.toml")


def secret_free(platform: PlatformDouble, *results: subprocess.CompletedProcess[str]) -> None:
    for result in results:
        assert platform.state.token not in result.stdout + result.stderr
        assert "Traceback" not in result.stderr


def one_json_error(result: subprocess.CompletedProcess[str]) -> dict[str, object]:
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert result.stdout == ""
    return envelopes.error_of(result.stderr)


def test_full_journey(
    run_osmosis: Run, platform: PlatformDouble, project: Path, tmp_path: Path
) -> None:
    outputs = []
    login = run_osmosis("login", "--workspace", "acme")
    outputs.append(login)
    assert login.returncode == 0, login.stderr
    assert platform.state.polls == 3

    who = run_osmosis("whoami", "--json")
    assert envelopes.data(who.stdout)["workspace"]["name"] == "acme"
    assert run_osmosis("workspace", "switch", "beta").returncode == 0
    assert envelopes.data(run_osmosis("workspace", "current", "--json").stdout)["name"] == "beta"
    assert run_osmosis("workspace", "switch", "acme").returncode == 0
    stored = run_osmosis(
        "secret", "set", "OPENAI_API_KEY", "--scope", "workspace", input="sk-e2e-workspace-key\n"
    )
    assert stored.returncode == 0, stored.stderr
    assert "sk-e2e-workspace-key" not in stored.stdout + stored.stderr

    submit = run_osmosis(
        "eval",
        "submit",
        config(project),
        "--yes",
        "--wait",
        "--min-pass-rate",
        "0.8",
        "--json",
        timeout=60,
    )
    outputs.append(submit)
    assert submit.returncode == 0, submit.stderr
    final = envelopes.resource(submit.stdout)
    assert final["status"] == "finished" and final["results"]["pass_rate"] == 0.85
    (create,) = platform.requests("POST", "/api/cli/eval-runs")
    assert create.headers["X-Osmosis-Workspace"] == "acme"
    assert "X-Osmosis-Git" not in create.headers
    assert create.body["experiment_config"]["commit_sha"] == git(project, "rev-parse", "HEAD")
    assert len(create.headers["Idempotency-Key"]) == 36
    assert create.headers["User-Agent"].startswith("osmosis-client/")
    assert create.headers["X-Osmosis-CLI-Version"]

    platform.state.running_s = 600  # the next runs stay running: something to stop
    for _ in range(2):
        more = run_osmosis("eval", "submit", config(project), "--yes", "--json")
        assert more.returncode == 0, more.stderr
    latest = envelopes.resource(more.stdout)["name"]

    listed = run_osmosis("eval", "list", "--all", "--json")
    doc = envelopes.stdout_document(listed.stdout)
    assert len(doc["items"]) == 3 and doc["has_more"] is False
    assert len(platform.requests("GET", "/api/cli/eval-runs?")) == 2  # two pages of two

    info = run_osmosis("eval", "info", final["name"], "--json")
    assert envelopes.data(info.stdout)["results"]["reward_stats"]["pass_at_k"]["3"] == 0.97

    stop = run_osmosis("eval", "stop", latest, "--yes", "--json")
    assert stop.returncode == 0, stop.stderr
    assert envelopes.resource(stop.stdout)["status"] == "stopped"
    again = run_osmosis("eval", "stop", latest, "--yes")
    assert again.returncode == 1 and "already stopped" in again.stderr

    out = run_osmosis("logout")  # acme; beta still uses the user-scoped token
    assert out.returncode == 0
    assert platform.state.token not in platform.state.revoked
    assert envelopes.data(run_osmosis("workspace", "current", "--json").stdout)["name"] == "beta"
    out = run_osmosis("logout", "--all", "--yes")
    assert out.returncode == 0
    assert platform.state.token in platform.state.revoked
    assert run_osmosis("eval", "list").returncode == 3
    secret_free(platform, *outputs, who, listed, info, stop, again, out)
    cfg = tmp_path / "cfg"
    for path in cfg.rglob("*"):
        if path.is_file():
            assert platform.state.token not in path.read_text(errors="replace")


def test_ci_journey_with_token_only(
    run_osmosis: Run, platform: PlatformDouble, project: Path, tmp_path: Path
) -> None:
    env = {"OSMOSIS_TOKEN": platform.state.token}
    gated = run_osmosis(
        "eval",
        "submit",
        config(project),
        "--yes",
        "--min-pass-rate",
        "0.9",
        "--json",
        extra_env={**env, "OSMOSIS_WORKSPACE": "acme"},
        timeout=60,
    )
    assert gated.returncode == 4, gated.stderr
    assert envelopes.resource(gated.stdout)["results"]["pass_rate"] == 0.85

    by_repo = run_osmosis("eval", "submit", config(project), "--yes", "--json", extra_env=env)
    assert by_repo.returncode == 0, by_repo.stderr
    create = platform.requests("POST", "/api/cli/eval-runs")[-1]
    assert create.headers["X-Osmosis-Git"] == "org/demo"
    assert "X-Osmosis-Workspace" not in create.headers
    assert not (tmp_path / "cfg").exists()  # OSMOSIS_TOKEN is never written anywhere
    secret_free(platform, gated, by_repo)


@pytest.fixture
def ci_env(platform: PlatformDouble) -> dict[str, str]:
    return {"OSMOSIS_TOKEN": platform.state.token, "OSMOSIS_WORKSPACE": "acme"}


@pytest.mark.parametrize(
    ("method", "path", "kind", "kw"),
    [
        ("POST", "/api/cli/eval-runs", "drop_after_create", {}),
        ("POST", "/api/cli/eval-runs", "drop", {}),
        ("POST", "/api/cli/eval-runs", "reset", {}),
        ("POST", "/api/cli/eval-runs", "status", {"status": 503, "count": 2}),
        ("POST", "/api/cli/eval-runs", "status", {"status": 429, "headers": {"Retry-After": "1"}}),
        ("GET", "/api/cli/workspaces", "reset", {}),
    ],
    ids=["drop-after-create", "drop", "reset", "503-burst", "429-retry-after", "reset-workspaces"],
)
def test_submit_survives_fault_with_exactly_one_run(
    run_osmosis: Run,
    platform: PlatformDouble,
    project: Path,
    ci_env: dict[str, str],
    method: str,
    path: str,
    kind: str,
    kw: dict[str, object],
) -> None:
    platform.inject(method, path, kind, **kw)
    result = run_osmosis(
        "eval", "submit", config(project), "--yes", "--json", extra_env=ci_env, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert len(platform.state.runs) == 1
    keys = {r.headers["Idempotency-Key"] for r in platform.requests("POST", "/api/cli/eval-runs")}
    assert len(keys) == 1
    assert envelopes.resource(result.stdout)["id"] in platform.state.runs
    secret_free(platform, result)


def test_submit_gives_up_on_a_5xx_storm_with_one_line(
    run_osmosis: Run, platform: PlatformDouble, project: Path, ci_env: dict[str, str]
) -> None:
    platform.inject(
        "POST",
        "/api/cli/eval-runs",
        "status",
        status=500,
        count=10,
        body={"message": "database on fire"},
    )
    result = run_osmosis(
        "eval", "submit", config(project), "--yes", "--json", extra_env=ci_env, timeout=60
    )
    assert result.returncode == 1
    error = one_json_error(result)
    assert (error["code"], error["reason"]) == ("PLATFORM_ERROR", "SERVER_ERROR")
    assert "may have been created" in str(error["hint"])
    assert len(platform.requests("POST", "/api/cli/eval-runs")) == 5
    assert len(platform.state.runs) == 0


@pytest.mark.parametrize(
    ("kind", "kw", "code", "fragment"),
    [
        ("invalid_json", {}, "PLATFORM_ERROR", "not JSON"),
        (
            "status",
            {"status": 426, "body": {"status": "unsupported", "message": "need >= 1.0"}},
            "UPGRADE_REQUIRED",
            "too old",
        ),
        ("status", {"status": 502, "count": 10}, "PLATFORM_ERROR", "HTTP 502"),
    ],
)
def test_list_faults_end_in_one_clear_line(
    run_osmosis: Run,
    platform: PlatformDouble,
    ci_env: dict[str, str],
    kind: str,
    kw: dict[str, object],
    code: str,
    fragment: str,
) -> None:
    platform.inject("GET", "/api/cli/eval-runs", kind, **kw)
    result = run_osmosis("eval", "list", "--json", extra_env=ci_env, timeout=60)
    assert result.returncode == 1
    error = one_json_error(result)
    assert error["code"] == code and fragment in str(error["message"])


def test_list_retries_429_and_succeeds(
    run_osmosis: Run, platform: PlatformDouble, ci_env: dict[str, str]
) -> None:
    platform.inject(
        "GET", "/api/cli/eval-runs", "status", status=429, headers={"Retry-After": "1"}, count=2
    )
    result = run_osmosis("eval", "list", "--json", extra_env=ci_env, timeout=60)
    assert result.returncode == 0, result.stderr
    assert len(platform.requests("GET", "/api/cli/eval-runs")) == 3


def test_slow_platform_times_out_then_recovers(platform: PlatformDouble) -> None:
    from osmosis_client import Client
    from osmosis_client.errors import APITimeoutError

    platform.inject("GET", "/api/cli/workspaces", "slow", seconds=1.0, count=1)
    with Client(
        base_url=platform.url, token=platform.state.token, timeout=0.3, sleep=lambda s: None
    ) as client:
        assert [w.name for w in client.workspaces.list()] == ["acme", "beta"]
        # more slow answers than any retry budget (older httpcore re-sends once more)
        platform.inject("GET", "/api/cli/workspaces", "slow", seconds=1.0, count=20)
        with pytest.raises(APITimeoutError):
            client.workspaces.list()


def test_version_warning_printed_once(
    run_osmosis: Run, platform: PlatformDouble, ci_env: dict[str, str]
) -> None:
    platform.state.version_status = "deprecated"
    result = run_osmosis("eval", "list", "--all", extra_env=ci_env)
    assert result.returncode == 0
    assert result.stderr.count("warning: osmosis-client 9.9 is available") == 1


def test_scope_errors_are_explained(run_osmosis: Run, platform: PlatformDouble) -> None:
    result = run_osmosis(
        "eval",
        "list",
        extra_env={"OSMOSIS_TOKEN": platform.state.token, "OSMOSIS_WORKSPACE": "gamma"},
    )
    assert result.returncode == 3
    assert "not a member of the selected workspace" in result.stderr


def test_login_denied_and_submit_never_imports_rollout_code(
    run_osmosis: Run, platform: PlatformDouble, project: Path, ci_env: dict[str, str]
) -> None:
    platform.state.deny = True
    denied = run_osmosis("login")
    assert denied.returncode == 3 and "denied" in denied.stderr

    marker = project / "imported.marker"
    (project / "rollouts" / "demo" / "main.py").write_text(
        f"open({str(marker)!r}, 'w').write('x')\nraise SystemExit('rollout code ran')\n"
    )
    git(project, "commit", "-qam", "side effects")
    git(project, "update-ref", "refs/remotes/origin/main", "HEAD")  # as if pushed
    result = run_osmosis("eval", "submit", config(project), "--yes", "--json", extra_env=ci_env)
    assert result.returncode == 0, result.stderr
    assert not marker.exists()


def test_with_token_login_never_echoes(
    run_osmosis: Run, platform: PlatformDouble, tmp_path: Path
) -> None:
    result = run_osmosis("login", "--with-token", input=platform.state.token + "\n")
    assert result.returncode == 0, result.stderr
    secret_free(platform, result)
    assert platform.state.token not in (tmp_path / "cfg" / "credentials.json").read_text()


def test_logs_follow_a_live_run_through_a_fault(
    run_osmosis: Run, platform: PlatformDouble, project: Path, ci_env: dict[str, str]
) -> None:
    platform.state.running_s = 1.0
    platform.state.log_interval_s = 0.1
    submit = run_osmosis("eval", "submit", config(project), "--yes", "--json", extra_env=ci_env)
    assert submit.returncode == 0, submit.stderr
    name = envelopes.resource(submit.stdout)["name"]
    run_id = envelopes.resource(submit.stdout)["id"]
    platform.inject("GET", f"/api/cli/eval-runs/{name}/logs", "status", status=503, count=1)
    follow = run_osmosis("eval", "logs", name, "--follow", "--json", extra_env=ci_env, timeout=60)
    assert follow.returncode == 0, follow.stderr
    records = [json.loads(line) for line in follow.stdout.splitlines()]
    messages = [r["message"] for r in records]
    # every entry once, in order: queued, started, each rollout, the end
    assert messages[0] == "run queued" and messages[-1] == "run finished"
    assert messages[2:-1] == [f"rollout {k} finished" for k in range(1, len(messages) - 2)]
    assert len(messages) >= 10 and len(set(messages)) == len(messages)
    tail = run_osmosis("eval", "logs", run_id, "--limit", "2", extra_env=ci_env)
    assert tail.returncode == 0, tail.stderr
    lines = tail.stdout.splitlines()
    assert len(lines) == 2 and lines[1].endswith("run finished")
    secret_free(platform, follow, tail)


def test_rollout_list_follows_pages_scoped_by_workspace_or_repo(
    run_osmosis: Run, platform: PlatformDouble, project: Path, ci_env: dict[str, str]
) -> None:
    every = run_osmosis("--json", "rollout", "list", "--all", extra_env=ci_env)
    assert every.returncode == 0, every.stderr
    document = envelopes.stdout_document(every.stdout)
    names = [r["name"] for r in document["items"]]
    assert names == ["calculator", "multiply-local-openai", "triage"]  # two pages of 2
    assert (document["total_count"], document["has_more"]) == (3, False)
    first = run_osmosis("--plain", "rollout", "list", extra_env=ci_env)
    assert first.stdout.splitlines()[0].split("\t")[:2] == ["calculator", f"{1:040x}"[:8]]
    pages = platform.requests("GET", "/api/cli/rollouts")
    assert all(p.headers["X-Osmosis-Workspace"] == "acme" for p in pages)
    token_only = {"OSMOSIS_TOKEN": platform.state.token}
    by_repo = run_osmosis("--json", "rollout", "list", extra_env=token_only, cwd=project)
    assert by_repo.returncode == 0, by_repo.stderr
    assert platform.requests("GET", "/api/cli/rollouts")[-1].headers["X-Osmosis-Git"] == "org/demo"
