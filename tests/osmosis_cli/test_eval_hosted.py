"""eval submit / list / info / stop / init through the CLI, --json and human."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
import respx
import tomllib

from tests.gitrepo import git, make_project
from tests.osmosis_cli.conftest import Invoke
from tests.osmosis_client.platform.test_eval_runs import CREATED, detail, pages, row

CONFIG = "configs/eval/demo.toml"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = make_project(tmp_path)
    monkeypatch.chdir(path)
    monkeypatch.setenv("OSMOSIS_TOKEN", "ci-token-secret")
    monkeypatch.setenv("OSMOSIS_WORKSPACE", "acme")
    return path


@pytest.fixture
def api(router: respx.MockRouter) -> respx.MockRouter:
    router.get("/api/cli/workspaces").respond(
        200,
        json={
            "workspaces": [
                {"id": "w1", "name": "acme", "connected_repo": {"repo_full_name": "Org/Demo"}}
            ]
        },
    )
    router.get("/api/cli/environment-secrets").respond(200, json=STORED)
    return router


STORED = {
    "environment_secrets": [{"id": "s1", "name": "OPENAI_API_KEY", "scope": "workspace"}],
    "total_count": 1,
    "has_more": False,
}


def test_submit_json_pins_head_once(invoke: Invoke, project: Path, api: respx.MockRouter) -> None:
    create = api.post("/api/cli/eval-runs").respond(201, json=CREATED)
    result = invoke("eval", "submit", CONFIG, "--yes", "--json")
    assert result.exit_code == 0, result.stderr
    head = git(project, "rev-parse", "HEAD")
    document = result.json()
    assert (document["operation"], document["status"]) == ("eval.submit", "success")
    resource = document["resource"]
    assert {k: resource[k] for k in ("id", "name", "status", "platform_url")} == {
        "id": "r1",
        "name": "demo-abc",
        "status": "pending",
        "platform_url": "https://platform.test/runs/r1",
    }
    assert (resource["commit_sha"], resource["workspace"]) == (head, "acme")
    assert resource["config"]["commit_sha"] == head  # the published CLI's keys too
    assert {"action": "eval_info", "name": "demo-abc"} in document["next_steps_structured"]
    body = json.loads(create.calls.last.request.read())
    assert body["experiment_config"]["commit_sha"] == head
    assert body["evaluation_config"] == {"limit": 10, "n": 2}
    assert body["secrets"] == {"required": ["OPENAI_API_KEY"]}
    assert create.call_count == 1
    assert "ci-token-secret" not in result.stdout + result.stderr


def test_submit_without_yes_and_no_tty_exits_2_before_any_request(
    invoke: Invoke, project: Path, api: respx.MockRouter
) -> None:
    create = api.post("/api/cli/eval-runs")
    result = invoke("eval", "submit", CONFIG)
    assert result.exit_code == 2
    assert "--yes" in result.stderr
    assert not create.called and not api.routes[0].called


def test_submit_broken_config_lists_problems(invoke: Invoke, project: Path) -> None:
    (project / CONFIG).write_text('[experiment]\nrollout = "../x"\n[evaluation]\nn = 0\n')
    result = invoke("eval", "submit", CONFIG, "--yes")
    assert result.exit_code == 2
    lines = result.stderr.splitlines()
    assert lines[0].startswith("error: configs/eval/demo.toml has ")
    assert any("configs/eval/demo.toml:2:1: experiment.rollout:" in line for line in lines)
    assert any("configs/eval/demo.toml:4:1: evaluation.n: must be >= 1" in line for line in lines)
    assert "Traceback" not in result.stderr


def test_submit_broken_config_json_error(invoke: Invoke, project: Path) -> None:
    (project / CONFIG).write_text("[experiment\n")
    result = invoke("eval", "submit", CONFIG, "--yes", "--json")
    assert result.exit_code == 2
    assert result.stdout == ""
    error = result.error()
    assert (error["code"], error["reason"]) == ("VALIDATION", "INVALID_CONFIG")
    assert error["problems"][0].startswith("configs/eval/demo.toml:1:")


def test_missing_config_file(invoke: Invoke, project: Path) -> None:
    result = invoke("eval", "submit", "configs/eval/nope.toml", "--yes")
    assert result.exit_code == 2
    assert "does not exist" in result.stderr


def test_submit_unpushed_and_dirty(invoke: Invoke, project: Path, api: respx.MockRouter) -> None:
    api.post("/api/cli/eval-runs").respond(201, json=CREATED)
    (project / "rollouts" / "demo" / "main.py").write_text("# dirty\n")
    dirty = invoke("eval", "submit", CONFIG, "--yes")
    assert dirty.exit_code == 2
    assert "--allow-dirty" in dirty.stderr
    ok = invoke("eval", "submit", CONFIG, "--yes", "--allow-dirty")
    assert ok.exit_code == 0
    assert "warning: uncommitted changes" in ok.stderr
    git(project, "commit", "-qam", "local")
    unpushed = invoke("eval", "submit", CONFIG, "--yes")
    assert unpushed.exit_code == 2
    assert "push first" in unpushed.stderr


def test_submit_refuses_other_repository(
    invoke: Invoke, project: Path, router: respx.MockRouter
) -> None:
    router.get("/api/cli/workspaces").respond(
        200,
        json={
            "workspaces": [
                {"id": "w1", "name": "acme", "connected_repo": {"repo_full_name": "someone/else"}}
            ]
        },
    )
    create = router.post("/api/cli/eval-runs")
    result = invoke("eval", "submit", CONFIG, "--yes")
    assert result.exit_code == 2
    assert "someone/else" in result.stderr and "org/demo" in result.stderr
    assert not create.called


def test_submit_with_git_scope_when_no_workspace(
    invoke: Invoke, project: Path, router: respx.MockRouter, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OSMOSIS_WORKSPACE")
    create = router.post("/api/cli/eval-runs").respond(201, json=CREATED)
    stored = router.get("/api/cli/environment-secrets").respond(200, json=STORED)
    result = invoke("eval", "submit", CONFIG, "--yes", "--json")
    assert result.exit_code == 0, result.stderr
    for route in (create, stored):
        headers = route.calls.last.request.headers
        assert headers["X-Osmosis-Git"] == "org/demo"
        assert "X-Osmosis-Workspace" not in headers


def test_submit_sends_secrets_found_here_as_the_runs_own(
    invoke: Invoke, project: Path, api: respx.MockRouter, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    create = api.post("/api/cli/eval-runs").respond(201, json=CREATED)
    (project / "run.env").write_text("OPENAI_API_KEY='sk-run-value'\nUNASKED=x\n")
    result = invoke("eval", "submit", CONFIG, "--yes", "--json", "--secrets-file", "run.env")
    assert result.exit_code == 0, result.stderr
    body = json.loads(create.calls.last.request.content)
    assert body["secrets"] == {
        "required": ["OPENAI_API_KEY"],
        "provided": {"OPENAI_API_KEY": "sk-run-value"},
    }
    assert "sk-run-value" not in result.stdout + result.stderr
    stored_only = invoke("eval", "submit", CONFIG, "--yes", "--json")
    assert stored_only.exit_code == 0, stored_only.stderr
    assert json.loads(create.calls.last.request.content)["secrets"] == {
        "required": ["OPENAI_API_KEY"]
    }


def test_submit_refuses_a_secret_neither_stored_nor_provided(
    invoke: Invoke, project: Path, api: respx.MockRouter, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    api.get("/api/cli/environment-secrets").respond(
        200, json={"environment_secrets": [], "has_more": False}
    )
    create = api.post("/api/cli/eval-runs").respond(201, json=CREATED)
    result = invoke("eval", "submit", CONFIG, "--yes")
    assert result.exit_code == 2 and not create.called
    assert "Could not find secret(s): OPENAI_API_KEY" in result.stderr
    assert "osmosis secret set OPENAI_API_KEY" in result.stderr
    error = invoke("eval", "submit", CONFIG, "--yes", "--json").error()
    assert error["code"] == "VALIDATION" and error["details"]["missing"] == ["OPENAI_API_KEY"]


def test_submit_goes_on_when_stored_secrets_cannot_be_listed(
    invoke: Invoke, project: Path, api: respx.MockRouter, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    api.get("/api/cli/environment-secrets").respond(404, json={"error": "no such route"})
    create = api.post("/api/cli/eval-runs").respond(201, json=CREATED)
    result = invoke("eval", "submit", CONFIG, "--yes")
    assert result.exit_code == 0, result.stderr
    assert "could not list the stored secrets" in result.stderr and create.called


@pytest.mark.parametrize(
    ("final", "gate", "code"),
    [
        ("finished", "0.8", 0),
        ("finished", "0.9", 0),
        ("finished", "0.95", 4),
        ("failed", None, 4),
        ("stopped", None, 4),
    ],
)
def test_submit_wait_gates_exit_code(
    invoke: Invoke, project: Path, api: respx.MockRouter, final: str, gate: str | None, code: int
) -> None:
    api.post("/api/cli/eval-runs").respond(201, json=CREATED)
    api.get("/api/cli/eval-runs/demo-abc").mock(
        side_effect=[
            httpx.Response(200, json=detail("running", None)),
            httpx.Response(200, json=detail(final, 0.9)),
        ]
    )
    api.get("/api/cli/eval-runs/demo-abc/metrics").respond(
        200, json={"overview": {"total_samples": 20, "completed_samples": 5, "pass_rate": 0.8}}
    )
    args = ["eval", "submit", CONFIG, "--yes", "--json"]
    args += ["--min-pass-rate", gate] if gate else ["--wait"]
    result = invoke(*args)
    assert result.exit_code == code, result.stderr
    doc = result.resource()  # the final <run> is printed even on exit 4
    assert doc["status"] == final
    assert doc["results"]["pass_rate"] == 0.9


def test_submit_wait_timeout_exits_1_naming_run(
    invoke: Invoke, project: Path, api: respx.MockRouter
) -> None:
    api.post("/api/cli/eval-runs").respond(201, json=CREATED)
    api.get("/api/cli/eval-runs/demo-abc").respond(200, json=detail("pending", None))
    # --timeout 0 gives up right after the first poll; the run is left running
    result = invoke("eval", "submit", CONFIG, "--yes", "--wait", "--timeout", "0")
    assert result.exit_code == 1
    assert "demo-abc" in result.stderr and "still pending" in result.stderr
    assert "osmosis eval info demo-abc --watch" in result.stderr


def test_submit_human_output(invoke: Invoke, project: Path, api: respx.MockRouter) -> None:
    api.post("/api/cli/eval-runs").respond(201, json=CREATED)
    result = invoke("eval", "submit", CONFIG, "--yes")
    assert result.exit_code == 0
    assert result.stdout.strip() == "demo-abc"
    assert "Workspace:  acme" in result.stderr
    assert "Secrets:    OPENAI_API_KEY" in result.stderr
    assert "Submitted demo-abc (r1)" in result.stderr
    assert (
        "Rollout:    rollouts/demo/main.py — native mode (rollouts/demo does not use osmosis-ai)"
    ) in result.stderr


def test_submit_names_server_mode_like_eval_run(
    invoke: Invoke, project: Path, api: respx.MockRouter
) -> None:
    (project / "rollouts" / "demo" / "main.py").write_text("import osmosis_ai\n")
    git(project, "commit", "-qam", "a published-SDK rollout")
    api.post("/api/cli/eval-runs").respond(201, json=CREATED)
    result = invoke("eval", "submit", CONFIG, "--yes", "--allow-unpushed")
    assert result.exit_code == 0, result.stderr
    line = "rollouts/demo/main.py — server mode (rollouts/demo/main.py imports osmosis_ai)"
    assert f"Rollout:    {line}" in result.stderr


def test_list_json_all_pages(invoke: Invoke, project: Path, router: respx.MockRouter) -> None:
    router.get("/api/cli/eval-runs").mock(side_effect=pages([row(1), row(2)], [row(3)]))
    doc = invoke("eval", "list", "--all", "--json").json()
    assert [r["name"] for r in doc["items"]] == ["run-1", "run-2", "run-3"]
    assert doc["has_more"] is False and doc["total_count"] == 3
    assert doc["items"][0]["model"] == "openai/gpt-5-mini"
    assert doc["items"][0]["summary"]["avg_reward"] == 0.6  # the published list-item keys


def test_list_limit_and_human_table(
    invoke: Invoke, project: Path, router: respx.MockRouter
) -> None:
    route = router.get("/api/cli/eval-runs").respond(
        200,
        json={"eval_runs": [row(1), row(2)], "total_count": 9, "has_more": True, "next_offset": 2},
    )
    doc = invoke("eval", "list", "--limit", "2", "--json").json()
    assert doc["has_more"] is True and doc["next_offset"] == 2
    assert route.calls.last.request.url.params["limit"] == "2"
    human = invoke("eval", "list", "--limit", "2", "--status", "finished")
    lines = human.stdout.splitlines()
    assert lines[0] == "NAME\tSTATUS\tMODEL\tDATASET\tSCORE\tPASS RATE\tCREATED"
    assert lines[1].split("\t")[:6] == [
        "run-1",
        "finished",
        "openai/gpt-5-mini",
        "d",
        "0.600",
        "50.0%",
    ]
    assert route.calls.last.request.url.params["status"] == "finished"


def test_info_json_and_human(invoke: Invoke, project: Path, router: respx.MockRouter) -> None:
    router.get("/api/cli/eval-runs/demo-abc").respond(200, json=detail("finished"))
    doc = invoke("eval", "info", "demo-abc", "--json").data()
    assert doc["eval_run"]["name"] == "demo-abc"  # the published detail's object
    assert doc["results"]["reward_stats"]["pass_at_k"]["3"] == 0.99
    human = invoke("eval", "info", "demo-abc").stdout
    assert "pass@k:" in human and "@1=0.900" in human and "@3=0.990" in human
    assert not list(project.glob("*.json"))  # read-only: writes no files


def test_info_missing_run_exits_1(invoke: Invoke, project: Path, router: respx.MockRouter) -> None:
    router.get("/api/cli/eval-runs/ghost").respond(
        404, json={"code": "NOT_FOUND", "message": "no such run"}
    )
    result = invoke("eval", "info", "ghost")
    assert result.exit_code == 1
    assert result.stderr.startswith("error: no such run")


def test_stop_json_and_conflict(invoke: Invoke, project: Path, router: respx.MockRouter) -> None:
    router.post("/api/cli/eval-runs/demo-abc/stop").respond(200, json={})
    router.get("/api/cli/eval-runs/demo-abc").respond(200, json=detail("stopped", None))
    assert invoke("eval", "stop", "demo-abc", "--json").exit_code == 2  # needs --yes without TTY
    doc = invoke("eval", "stop", "demo-abc", "--yes", "--json").json()
    assert (doc["operation"], doc["resource"]["status"]) == ("eval.stop", "stopped")
    router.post("/api/cli/eval-runs/demo-abc/stop").respond(409, json={"code": "CONFLICT"})
    router.get("/api/cli/eval-runs/demo-abc").respond(200, json=detail("finished"))
    conflict = invoke("eval", "stop", "demo-abc", "--yes")
    assert conflict.exit_code == 1
    assert "already finished" in conflict.stderr


def test_declining_a_confirmation_changes_nothing_and_exits_0(
    invoke: Invoke, project: Path, router: respx.MockRouter, monkeypatch: pytest.MonkeyPatch
) -> None:
    from osmosis_cli.terminal.output import Output

    stop = router.post("/api/cli/eval-runs/demo-abc/stop").respond(200, json={})
    monkeypatch.setattr(Output, "interactive", property(lambda self: not self.json_mode))
    declined = invoke("eval", "stop", "demo-abc", input="n\n")
    assert declined.exit_code == 0, declined.stderr
    assert "Stop eval run demo-abc? [y/N]" in declined.stderr and "Cancelled." in declined.stderr
    assert not stop.called


def test_init_scaffolds_a_runnable_evaluation_once(
    invoke: Invoke, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    result = invoke("eval", "init", "my-eval")
    assert result.exit_code == 0, result.stderr
    for path in ("configs/eval/my-eval.toml", "rollouts/my-eval/main.py", "data/my-eval.jsonl"):
        assert (tmp_path / path).is_file(), path
    assert 'model_path = "mock/calculator"' in (tmp_path / "configs/eval/my-eval.toml").read_text()
    first = invoke("eval", "run", "configs/eval/my-eval.toml", "--json")
    assert first.exit_code == 0, first.stderr  # runs at the first try, offline
    summary = first.resource()["summary"]
    assert summary["total_runs"] == 5 and summary["errored_runs"] == 0
    assert summary["eval_fns"]["grader"]["mean"] == 1.0
    again = invoke("eval", "init", "my-eval")
    assert again.exit_code == 2 and "already exist" in again.stderr
    assert invoke("eval", "init", "../evil").exit_code == 2


@pytest.mark.parametrize("name", ["ab", "demo", "a-much-longer-eval-name"])
def test_init_config_comments_line_up_whatever_the_name(
    invoke: Invoke, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    monkeypatch.chdir(tmp_path)
    assert invoke("eval", "init", name).exit_code == 0
    text = (tmp_path / "configs" / "eval" / f"{name}.toml").read_text()
    block = text.split("[experiment]\n")[1].split("\n\n")[0].splitlines()
    columns = {line.index("  # ") + 2 for line in block if "  # " in line}
    assert len(columns) == 1 and len(block) == 6  # one column for the whole block
    tomllib.loads(text)  # still a valid config


def test_init_example_copies_a_bundled_workspace(
    invoke: Invoke, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    result = invoke("eval", "init", "demo", "--example", "quickstart")
    assert result.exit_code == 0, result.stderr
    assert "cd demo && osmosis eval run configs/eval/quickstart.toml" in result.stderr
    monkeypatch.chdir(tmp_path / "demo")
    run = invoke("eval", "run", "configs/eval/quickstart.toml", "--json")
    assert run.exit_code == 0, run.stderr
    assert run.resource()["summary"]["total_runs"] == 60
    unknown = invoke("eval", "init", "x", "--example", "nope")
    assert unknown.exit_code == 2 and "quickstart" in unknown.stderr


def test_info_watch_follows_until_terminal(
    invoke: Invoke, project: Path, router: respx.MockRouter
) -> None:
    router.get("/api/cli/eval-runs/demo-abc").mock(
        side_effect=[
            httpx.Response(200, json=detail("pending", None)),
            httpx.Response(200, json=detail("running", None)),
            httpx.Response(200, json=detail("finished")),
        ]
    )
    router.get("/api/cli/eval-runs/demo-abc/metrics").respond(
        200, json={"overview": {"total_samples": 20, "completed_samples": 7, "pass_rate": 0.5}}
    )
    result = invoke("eval", "info", "demo-abc", "--watch")
    assert result.exit_code == 0, result.stderr
    assert result.stderr.splitlines() == [
        "demo-abc: pending",
        "demo-abc: running 7/20 pass rate 50.0%",
        "demo-abc: finished pass rate 90.0%",
    ]
    lines = result.stdout.splitlines()
    assert "Status:     finished" in lines
    assert "Reward:     mean 0.800" in lines
    assert not any("None" in line for line in lines)


def test_list_rejects_an_unknown_status(
    invoke: Invoke, project: Path, router: respx.MockRouter
) -> None:
    route = router.get("/api/cli/eval-runs").respond(200, json={"eval_runs": [row(1)]})
    result = invoke("eval", "list", "--status", "bogus")
    assert result.exit_code == 2
    assert "unknown status 'bogus'" in result.stderr and "pending, running" in result.stderr
    assert not route.called


def test_list_limit_spanning_pages_keeps_an_exact_next_offset(
    invoke: Invoke, project: Path, router: respx.MockRouter
) -> None:
    first = [row(i) for i in range(50)]
    second = [row(i) for i in range(50, 100)]
    route = router.get("/api/cli/eval-runs").mock(side_effect=pages(first, second, [row(100)]))
    doc = invoke("eval", "list", "--limit", "70", "--json").json()
    assert len(doc["items"]) == 70 and doc["items"][-1]["name"] == "run-69"
    assert doc["has_more"] is True and doc["next_offset"] == 70
    assert route.call_count == 2


def test_list_never_truncates_names_on_a_narrow_terminal(
    project: Path, router: respx.MockRouter
) -> None:
    import io

    from osmosis_cli.commands.eval.hosted.runs import _render_list
    from osmosis_cli.terminal.output import Output
    from osmosis_client.platform.models import run_from_row

    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    long = {**row(1), "name": "calculator-qwen3-8b-ablation-temperature-0-7-20261123-abcdef"}
    long["model"] = {"name": "openrouter/qwen/qwen3-8b-instruct-with-a-long-name"}
    out = Output(stdout=Tty(), stderr=io.StringIO())
    out.console.width = 80
    _render_list(out, [run_from_row(long)], None)
    from osmosis_client._redact import safe_text

    text = safe_text(out.stdout.getvalue())  # type: ignore[attr-defined]  # no colour codes
    assert long["name"] in text
    assert max(len(line) for line in text.splitlines()) <= 80


def test_pin_policy_is_the_clis() -> None:
    from osmosis_client.platform.eval.submission import PinRules, pin_problems
    from osmosis_client.platform.git import Pin

    unpushed = Pin(commit_sha="a" * 40, branch=None, unpushed=True)
    refusal, _ = pin_problems(
        unpushed, PinRules(unattended=True, allow_dirty=False, allow_unpushed=False)
    )
    assert refusal is not None and refusal.code == "UNPUSHED"
    assert pin_problems(
        unpushed, PinRules(unattended=True, allow_dirty=False, allow_unpushed=True)
    ) == (None, [])
    dirty = Pin(commit_sha="b" * 40, branch=None, dirty_files=("rollouts/x.py",))
    refusal, warnings = pin_problems(
        dirty, PinRules(unattended=False, allow_dirty=False, allow_unpushed=False)
    )
    assert refusal is None and "rollouts/x.py" in warnings[0]
    refusal, _ = pin_problems(
        dirty, PinRules(unattended=True, allow_dirty=False, allow_unpushed=False)
    )
    assert refusal is not None and refusal.code == "DIRTY_TREE"
    untracked = Pin(commit_sha="c" * 40, branch=None, other_changes=("rollouts/x/uv.lock",))
    refusal, warnings = pin_problems(
        untracked, PinRules(unattended=True, allow_dirty=False, allow_unpushed=False)
    )
    assert refusal is None and "rollouts/x/uv.lock" in warnings[0]  # a warning, even with --yes
