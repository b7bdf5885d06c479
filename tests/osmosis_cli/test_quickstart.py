"""``osmosis quickstart``: a plan a person or an agent can follow — each step done or
not and the command that does it; on a terminal it asks what to do first and records
the completion, with --json it asks nothing and changes nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import respx

from osmosis_cli.terminal.output import Output
from tests.gitrepo import make_project
from tests.osmosis_cli.conftest import Invoke

ACME = {"id": "w1", "name": "acme", "connected_repo": {"repo_full_name": "org/demo"}}
BETA = {"id": "w2", "name": "beta", "connected_repo": None}
STATUS = {
    "repo": {"connected": True, "full_name": "org/demo"},
    "billing_ready": False,
    "completed": False,
}


@pytest.fixture
def checkout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    project = make_project(tmp_path)  # origin github.com/org/demo, no data/ nor AGENTS.md
    monkeypatch.chdir(project)
    return project


@pytest.fixture
def platform(router: respx.MockRouter, monkeypatch: pytest.MonkeyPatch) -> respx.MockRouter:
    monkeypatch.setenv("OSMOSIS_TOKEN", "ci-token")
    router.get("/api/cli/workspaces").respond(200, json={"workspaces": [ACME, BETA]})
    router.get("/api/cli/quickstart", params={"organizationId": "w1"}).respond(200, json=STATUS)
    router.post("/api/cli/quickstart").respond(200, json={"ok": True})
    return router


def test_without_a_login_the_plan_starts_there_and_asks_nothing(
    invoke: Invoke, checkout: Path
) -> None:
    with respx.mock(assert_all_called=False) as anywhere:
        result = invoke("--json", "quickstart")
        assert not anywhere.calls
    assert result.exit_code == 0, result.stderr
    resource = result.json()["resource"]
    assert resource["ready"] is False
    assert resource["steps"] == [
        {
            "id": "login",
            "done": False,
            "what": "log in to the platform",
            "command": "osmosis login",
            "url": None,
        }
    ]


def test_json_is_a_plan_for_an_agent_and_records_nothing(
    invoke: Invoke, checkout: Path, platform: respx.MockRouter
) -> None:
    result = invoke("--json", "quickstart", "--intent", "train")
    assert result.exit_code == 0, result.stderr
    document = result.json()
    resource = document["resource"]
    assert resource["workspace"] == {"id": "w1", "name": "acme"}  # the one this clone is of
    steps = {s["id"]: s for s in resource["steps"]}
    assert [s["id"] for s in resource["steps"]] == [
        "login",
        "workspace",
        "repository",
        "clone",
        "scaffold",
        "billing",
    ]
    assert steps["clone"]["done"] and resource["workspace_directory"] == str(checkout)
    assert not steps["scaffold"]["done"] and steps["scaffold"]["command"] == "osmosis doctor --fix"
    assert not steps["billing"]["done"] and resource["ready"] is False
    assert "plan-training" in resource["agent_prompt"]
    assert any(
        s["command"] == "osmosis template apply multiply-local-openai"
        for s in document["next_steps_structured"]
    )
    assert not platform.routes[2].called  # POST: nothing recorded for a plan


def test_elsewhere_the_clone_step_names_the_repository(
    invoke: Invoke, platform: respx.MockRouter, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    result = invoke("--json", "quickstart", "-w", "ACME")  # case-insensitive, as published
    steps = {s["id"]: s for s in result.json()["resource"]["steps"]}
    assert steps["clone"]["command"] == "git clone https://github.com/org/demo.git && cd demo"
    unknown = invoke("quickstart", "-w", "gamma")
    assert unknown.exit_code == 2 and "acme, beta" in unknown.stderr


def test_several_workspaces_and_none_fits_is_a_choice_left_to_the_person(
    invoke: Invoke, platform: respx.MockRouter, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    result = invoke("--plain", "quickstart")
    assert result.exit_code == 0, result.stderr
    assert "• choose a workspace: osmosis workspace switch NAME" in result.stderr
    assert "your workspaces: acme, beta" in result.stderr


def test_on_a_terminal_it_asks_what_to_do_and_records_it_when_ready(
    invoke: Invoke, checkout: Path, platform: respx.MockRouter, monkeypatch: pytest.MonkeyPatch
) -> None:
    (checkout / "data").mkdir()
    for name in ("AGENTS.md", "CLAUDE.md", "configs/AGENTS.md"):
        (checkout / name).write_text("x")
    (checkout / "configs" / "training").mkdir()
    monkeypatch.setattr(Output, "interactive", property(lambda self: not self.json_mode))
    monkeypatch.setattr(Output, "choose", lambda self, question, options: "eval")
    result = invoke("quickstart")
    assert result.exit_code == 0, result.stderr
    assert platform.routes[0].call_count == 1  # the intent chosen: nothing read again
    posted = platform.routes[2].calls.last.request
    assert json.loads(posted.content) == {"organizationId": "w1", "intent": "eval"}
    assert "✓ repository org/demo" in result.stderr
    assert "• set up billing" in result.stderr  # not needed for the rest: still ready
    assert "  osmosis eval init my-eval" in result.stderr
    assert "Use the plan-eval skill." in result.stdout
