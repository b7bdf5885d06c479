"""The published CLI's workspace commands: ``doctor``, ``template``, ``rollout`` —
their files, conflicts, envelopes and exit codes."""

from __future__ import annotations

import io
import os
import shutil
import tarfile
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest
import respx

from osmosis_local_runner.server import environment
from tests import envelopes
from tests.gitrepo import git
from tests.loopback_http import SerialHTTPServer
from tests.osmosis_cli.conftest import ACME, USER, Invoke

SCAFFOLD = ("rollouts", "configs/training", "configs/eval", "data")


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "ws"
    for folder in SCAFFOLD:
        (root / folder).mkdir(parents=True)
    git(root, "init", "-q")
    monkeypatch.chdir(root)
    monkeypatch.delenv("OSMOSIS_WORKSPACE_TEMPLATE_PATH", raising=False)
    return root


# ------------------------------------------------------------------ doctor


def test_doctor_reports_missing_scaffold_as_the_published_error(
    invoke: Invoke, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "bare"
    root.mkdir()
    git(root, "init", "-q")
    monkeypatch.chdir(root)
    result = invoke("--json", "doctor")
    assert result.exit_code == 1 and result.stdout == ""
    error = result.error()
    assert error["code"] == "VALIDATION"
    assert error["message"].startswith("Workspace doctor found missing scaffold paths.")
    details = error["details"]
    assert details["missing"][:4] == ["rollouts/", "configs/training/", "configs/eval/", "data/"]
    assert details["valid"] is False and details["workspace_directory"] == str(root.resolve())
    fixed = invoke("--json", "doctor", "--fix")
    assert fixed.exit_code == 0, fixed.stderr
    resource = fixed.resource()
    assert resource["valid"] and resource["fixed"] and resource["missing"] == []
    assert (root / "rollouts" / ".gitkeep").is_file() and (root / "AGENTS.md").is_file()
    assert "osmosis eval run" in (root / "AGENTS.md").read_text()


def test_doctor_fix_never_overwrites_nor_writes_through_a_symlink(
    invoke: Invoke, workspace: Path, tmp_path: Path
) -> None:
    (workspace / "AGENTS.md").write_text("mine\n")
    assert invoke("doctor", "--fix").exit_code == 0
    assert (workspace / "AGENTS.md").read_text() == "mine\n"
    outside = tmp_path / "outside"
    outside.mkdir()
    (workspace / "configs" / "AGENTS.md").unlink()
    shutil.rmtree(workspace / "configs" / "eval")
    (workspace / "configs" / "eval").symlink_to(outside)
    result = invoke("doctor", "--fix")
    assert result.exit_code == 2 and "is a symlink" in result.stderr
    assert list(outside.iterdir()) == []


def test_doctor_checks_what_users_trip_on(
    invoke: Invoke, workspace: Path, router: respx.MockRouter, monkeypatch: pytest.MonkeyPatch
) -> None:
    from osmosis_cli.commands.doctor import checks

    (workspace / "rollouts" / "ok").mkdir()
    (workspace / "rollouts" / "ok" / "main.py").write_text("x = 1\n")
    good = '[experiment]\nrollout = "ok"\nentrypoint = "main.py"\nmodel_path = "mock/echo"\n'
    (workspace / "configs" / "eval" / "good.toml").write_text(good + 'dataset = "d"\n')
    (workspace / "configs" / "eval" / "gone.toml").write_text(
        good.replace('"ok"', '"gone"') + 'dataset = "d"\n'
    )
    (workspace / "configs" / "eval" / "bad.toml").write_text("[experiment]\nrollout = 3\n")
    monkeypatch.setenv("OSMOSIS_TOKEN", "t")
    monkeypatch.setenv("OSMOSIS_WORKSPACE", "acme")
    router.get("/api/cli/verify").respond(
        200, json={"user": USER, "expires_at": "2030-01-01T00:00:00Z"}
    )
    router.get("/api/cli/workspaces").respond(200, json={"workspaces": [ACME]})
    git(workspace, "remote", "add", "origin", "git@github.com:someone/else.git")
    monkeypatch.setattr(
        checks,
        "which_osmosis",
        lambda: ({"path": None, "ours": False}, checks.warn("osmosis", "none")),
    )
    result = invoke("--json", "doctor")
    assert result.exit_code == 1
    found = {c["name"]: c for c in result.error()["details"]["checks"]}
    assert found["configs/eval/good.toml"]["status"] == "ok"
    assert found["configs/eval/bad.toml"]["status"] == "error"
    assert found["configs/eval/bad.toml"]["message"].startswith(
        "line 2: experiment.rollout: must be a string"
    )
    assert "rollouts/gone/ does not exist" in found["configs/eval/gone.toml"]["message"]
    assert found["rollouts/ok/main.py"]["status"] == "ok"
    assert found["scaffold"]["status"] == "error"  # the agent files, as published
    assert found["workspace"]["status"] == "error"  # acme is connected to org/repo
    assert "connected to org/repo, but origin is someone/else" in found["workspace"]["message"]
    assert found["model mock/echo"]["status"] == "ok"
    assert found["git"]["message"] == "origin is someone/else"


def test_doctor_says_which_osmosis_is_on_path(
    invoke: Invoke, workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    published = bin_dir / "osmosis"
    published.write_text("#!/usr/bin/python3\nfrom osmosis_ai.cli.main import main\nmain()\n")
    published.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    result = invoke("--json", "doctor", "--fix")
    resource = result.resource()
    assert resource["osmosis"] == {"path": str(published), "ours": False}
    check = next(c for c in resource["checks"] if c["name"] == "osmosis")
    assert check["status"] == "warning" and "osmosis-client" in check["fix"]


def test_doctor_outside_a_checkout_and_on_a_missing_path(invoke: Invoke, tmp_path: Path) -> None:
    outside = invoke("doctor", str(tmp_path))
    assert outside.exit_code == 2 and "is not inside a git checkout" in outside.stderr
    assert invoke("--json", "doctor", str(tmp_path / "nope")).error()["code"] == "VALIDATION"


# ------------------------------------------------------------------ templates


def test_template_list_is_the_published_envelope(invoke: Invoke) -> None:
    items = invoke("--json", "template", "list").items()
    names = [i["name"] for i in items]
    assert {"multiply-local-openai", "multiply-local-strands", "multiply-harbor-strands"} <= set(
        names
    )
    assert names == sorted(names)
    plain = invoke("--plain", "template", "list").stdout.splitlines()
    assert plain == names  # one name per line, as published


@pytest.mark.parametrize(
    "name", ["multiply-local-openai", "multiply-local-strands", "calculator", "agents-calculator"]
)
def test_template_apply_writes_a_runnable_rollout(
    invoke: Invoke, workspace: Path, name: str
) -> None:
    result = invoke("--json", "template", "apply", name)
    assert result.exit_code == 0, result.stderr
    resource = result.resource()
    rollout = {"calculator": "calculator"}.get(name, name)
    assert resource["destinations"][0] == str((workspace / "rollouts" / rollout).resolve())
    for path in resource["files"]:
        assert (workspace / path).is_file(), path
    assert resource["files"] == sorted(resource["files"])
    assert not list(workspace.rglob("__pycache__"))


def test_template_conflicts_force_and_shared_data(invoke: Invoke, workspace: Path) -> None:
    assert invoke("template", "apply", "multiply-local-openai").exit_code == 0
    again = invoke("--json", "template", "apply", "multiply-local-openai")
    assert again.exit_code == 2 and again.error()["code"] == "CONFLICT"
    assert "rollouts/multiply-local-openai/" in again.error()["message"]
    # the shared dataset, byte-identical, is no conflict for the other multiply template
    assert invoke("template", "apply", "multiply-local-strands").exit_code == 0
    (workspace / "rollouts" / "multiply-local-openai" / "mine.py").write_text("x = 1\n")
    assert invoke("template", "apply", "multiply-local-openai", "--force").exit_code == 0
    assert not (workspace / "rollouts" / "multiply-local-openai" / "mine.py").exists()
    unknown = invoke("template", "apply", "nope")
    assert unknown.exit_code == 2 and "multiply-local-openai" in unknown.stderr


def test_other_templates_come_from_the_workspace_template(
    invoke: Invoke, workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    checkout = tmp_path / "template"
    (checkout / "rollouts" / "multiply-harbor-strands" / "task").mkdir(parents=True)
    (checkout / "rollouts" / "multiply-harbor-strands" / "main.py").write_text("# harbor\n")
    (checkout / "rollouts" / "multiply-harbor-strands" / "task" / "task.toml").write_text("")
    (checkout / "configs" / "eval").mkdir(parents=True)
    (checkout / "configs" / "eval" / "multiply-harbor-strands.toml").write_text("# c\n")
    (checkout / "data").mkdir()
    (checkout / "data" / "multiply.jsonl").write_text("{}\n")
    monkeypatch.setenv("OSMOSIS_WORKSPACE_TEMPLATE_PATH", str(checkout))
    result = invoke("--json", "template", "apply", "multiply-harbor-strands")
    assert result.exit_code == 0, result.stderr
    assert result.resource()["files"] == [
        "configs/eval/multiply-harbor-strands.toml",
        "data/multiply.jsonl",
        "rollouts/multiply-harbor-strands/main.py",
        "rollouts/multiply-harbor-strands/task/task.toml",
    ]


class _Archive(BaseHTTPRequestHandler):
    body = b""

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", str(len(self.body)))
        self.end_headers()
        for start in range(0, len(self.body), 512):  # small pieces, as networks deliver
            self.wfile.write(self.body[start : start + 512])

    def log_message(self, *args: object) -> None:
        return None


@pytest.fixture
def archive_server() -> Iterator[tuple[str, type[_Archive]]]:
    server = SerialHTTPServer(("127.0.0.1", 0), _Archive)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}/archive.tar.gz", _Archive
    finally:
        server.shutdown()
        server.server_close()


def _tarball(files: dict[str, bytes], links: dict[str, str] | None = None) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(f"workspace-template-main/{name}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
        for name, target in (links or {}).items():
            info = tarfile.TarInfo(f"workspace-template-main/{name}")
            info.type, info.linkname = tarfile.SYMTYPE, target
            tar.addfile(info)
    return buffer.getvalue()


def test_the_workspace_template_archive_is_fetched_and_extracted_safely(
    invoke: Invoke,
    workspace: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    archive_server: tuple[str, type[_Archive]],
) -> None:
    url, handler = archive_server
    monkeypatch.setenv("OSMOSIS_WORKSPACE_TEMPLATE_URL", url)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    handler.body = _tarball({"rollouts/multiply-harbor-strands/main.py": b"# fetched\n"})
    result = invoke("template", "apply", "multiply-harbor-strands")
    assert result.exit_code == 0, result.stderr
    main = workspace / "rollouts" / "multiply-harbor-strands" / "main.py"
    assert main.read_text() == "# fetched\n"
    handler.body = _tarball(
        {"rollouts/evil/main.py": b""}, links={"rollouts/evil/escape": "/etc/passwd"}
    )
    monkeypatch.setenv("OSMOSIS_WORKSPACE_TEMPLATE_PATH", "")
    bad = invoke("template", "apply", "multiply-harbor-strands", "--force")
    assert bad.exit_code == 2 and "not a usable tar.gz" in bad.stderr


# ------------------------------------------------------------------ rollouts


def test_rollout_init_writes_a_rollout_its_configs_and_data(
    invoke: Invoke, workspace: Path
) -> None:
    result = invoke("--json", "rollout", "init", "support-bot")
    assert result.exit_code == 0, result.stderr
    resource = result.resource()
    assert resource["configs"] == {
        "eval": "configs/eval/support-bot.toml",
        "training": "configs/training/support-bot.toml",
    }
    main = (workspace / "rollouts" / "support-bot" / "main.py").read_text()
    assert "class SupportBotWorkflow(AgentWorkflow)" in main and "create_rollout_server" in main
    pyproject = (workspace / "rollouts" / "support-bot" / "pyproject.toml").read_text()
    assert 'name = "support-bot"' in pyproject and "osmosis-ai[server]" in pyproject
    config = (workspace / "configs" / "eval" / "support-bot.toml").read_text()
    assert 'dataset = "support-bot"' in config
    assert len((workspace / "data" / "support-bot.jsonl").read_text().splitlines()) == 10
    again = invoke("rollout", "init", "support-bot")
    assert again.exit_code == 2 and "--force" in again.stderr
    (workspace / "data" / "support-bot.jsonl").write_text("{}\n")  # the user's data
    assert invoke("rollout", "init", "support-bot", "-f").exit_code == 0
    assert (workspace / "data" / "support-bot.jsonl").read_text() == "{}\n"  # never replaced


@pytest.mark.parametrize("name", ["Bad", "1x", "default", "a_b", "a/b"])
def test_rollout_names_follow_the_published_rule(
    invoke: Invoke, workspace: Path, name: str
) -> None:
    result = invoke("rollout", "init", name)
    assert result.exit_code == 2 and "is not a rollout name" in result.stderr
    assert list((workspace / "rollouts").iterdir()) == []


def test_rollout_init_needs_the_scaffold(invoke: Invoke, workspace: Path) -> None:
    (workspace / "data").rmdir()
    result = invoke("rollout", "init", "x")
    assert result.exit_code == 2 and "osmosis doctor --fix" in result.stderr


def test_rollout_list_is_scoped_by_origin_and_pages(
    invoke: Invoke, workspace: Path, router: respx.MockRouter, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OSMOSIS_TOKEN", "t")
    git(workspace, "remote", "add", "origin", "https://github.com/Org/Repo.git")
    row = {
        "id": "r1",
        "name": "calc",
        "description": None,
        "last_synced_at": "2026-11-20T10:00:00Z",
        "last_synced_commit_sha": "0123456789abcdef",
        "repo_full_name": "org/repo",
        "created_at": "2026-11-01T10:00:00Z",
    }
    route = router.get("/api/cli/rollouts").mock(
        side_effect=[
            respx.MockResponse(
                200, json={"rollouts": [row], "total_count": 2, "has_more": True, "next_offset": 1}
            ),
            respx.MockResponse(
                200,
                json={
                    "rollouts": [row | {"id": "r2", "name": "other"}],
                    "total_count": 2,
                    "has_more": False,
                    "next_offset": None,
                },
            ),
        ]
    )
    result = invoke("--json", "rollout", "list", "--all", "--branch", "dev")
    assert result.exit_code == 0, result.stderr
    document = result.json()
    assert [i["name"] for i in document["items"]] == ["calc", "other"]
    assert document["has_more"] is False and document["branch"] == "dev"
    request = route.calls[0].request
    assert request.headers["X-Osmosis-Git"] == "org/repo"
    assert request.url.params["branch"] == "dev"
    assert route.calls[1].request.url.params["offset"] == "1"


FAKE_SDK = {
    "osmosis_ai/__init__.py": "",
    "osmosis_ai/rollout/__init__.py": "",
    "osmosis_ai/rollout/agent_workflow.py": "class AgentWorkflow: pass\n",
    "osmosis_ai/rollout/grader.py": "class Grader: pass\n",
}


def test_rollout_validate_finds_workflow_and_grader_or_says_what_is_wrong(
    invoke: Invoke, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(environment, "MIN_PYTHON", (3, 10))
    import sys

    for name, body in {
        "good": "from osmosis_ai.rollout.agent_workflow import AgentWorkflow\n"
        "from osmosis_ai.rollout.grader import Grader\n"
        "def create_rollout_server(**k): pass\n"
        "class W(AgentWorkflow): pass\nclass G(Grader): pass\n"
        "print('noise at import')\n",
        "broken": "import osmosis_ai\nimport not_installed_anywhere\n",
        "nograder": "import osmosis_ai\nfrom osmosis_ai.rollout.agent_workflow import "
        "AgentWorkflow\nclass W(AgentWorkflow): pass\n",
    }.items():
        folder = workspace / "rollouts" / name
        for path, text in FAKE_SDK.items():
            (folder / path).parent.mkdir(parents=True, exist_ok=True)
            (folder / path).write_text(text)
        (folder / "main.py").write_text(body)
    args = ["rollout", "validate", "--rollout-python", sys.executable]
    good = invoke("--json", *args[:2], "good", *args[2:])
    assert good.exit_code == 0, good.stderr
    (report,) = good.items()
    assert report["valid"] and report["workflows"] == ["main.W"] and report["graders"] == ["main.G"]
    every = invoke("--json", *args)
    assert every.exit_code == 1  # the document still comes, with each verdict
    reports = {r["name"]: r for r in envelopes.items(every.stdout)}
    assert "ModuleNotFoundError" in reports["broken"]["problems"][0]
    assert "no Grader subclass" in " ".join(reports["nograder"]["problems"])
    missing = invoke("rollout", "validate", "nope")
    assert missing.exit_code == 2 and "no rollout 'nope'" in missing.stderr


def test_rollout_validate_a_native_rollout_in_process(invoke: Invoke, workspace: Path) -> None:
    folder = workspace / "rollouts" / "native"
    folder.mkdir()
    (folder / "main.py").write_text(
        "from osmosis_client.rollout import AgentWorkflow, Grader\n"
        "class W(AgentWorkflow):\n    async def run(self, ctx):\n        return []\n"
        "class G(Grader):\n    async def grade(self, ctx):\n        return 1.0\n"
    )
    result = invoke("rollout", "validate", "native")
    assert result.exit_code == 0, result.stderr
    assert "(native mode): valid" in result.stdout
