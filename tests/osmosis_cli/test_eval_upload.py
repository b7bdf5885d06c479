"""`osmosis eval upload` and `eval run --upload`: a finished local run, checked here,
then declared, sent (only what the platform lacks) and finalized — as §5.3 says."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

import httpx
import pytest
import respx

from tests.conftest import PLATFORM
from tests.osmosis_cli.conftest import Invoke

QUICKSTART = Path(__file__).resolve().parents[2] / "examples" / "quickstart"


class Imports:
    """The platform's import routes: one session, files stored as they arrive."""

    def __init__(self, router: respx.MockRouter, *, conflict: bool = False) -> None:
        self.declared: dict[str, Any] = {}
        self.stored: dict[str, bytes] = {}
        self.asked: list[list[str]] = []
        self.conflict = conflict
        router.post("/api/cli/eval-runs/imports").mock(side_effect=self.create)
        router.post("/api/cli/eval-runs/imports/s1/uploads").mock(side_effect=self.uploads)
        router.post("/api/cli/eval-runs/imports/s1/uploads/complete").respond(200, json={})
        router.post("/api/cli/eval-runs/imports/s1/finalize").mock(side_effect=self.finalize)
        router.put(url__startswith=f"{PLATFORM}/storage/").mock(side_effect=self.put)

    def session(self, status: str) -> dict[str, Any]:
        files = [
            {**f, "state": "uploaded" if f["path"] in self.stored else "pending"}
            for f in self.declared["files"]
        ]
        return {
            "session_id": "s1",
            "status": status,
            "expected_files": len(files),
            "uploaded_files": len(self.stored),
            "files": files,
            "eval_run_id": "r9",
            "eval_run_name": "imported-run",
            "platform_url": "https://platform.test/runs/r9",
        }

    def create(self, request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        if self.conflict and not body["reimport"]:
            return httpx.Response(409, json={"error": "already imported", "code": "CONFLICT"})
        self.declared = body
        return httpx.Response(200, json=self.session("uploading"))

    def uploads(self, request: httpx.Request) -> httpx.Response:
        paths = json.loads(request.content)["paths"]
        self.asked.append(paths)
        missing = [p for p in paths if p not in self.stored]
        files = [
            {"path": p, "upload": {"method": "simple", "presigned_url": f"{PLATFORM}/storage/{p}"}}
            for p in missing
        ]
        return httpx.Response(200, json={"files": files})

    def put(self, request: httpx.Request) -> httpx.Response:
        self.stored[request.url.path.removeprefix("/storage/")] = request.content
        return httpx.Response(200, headers={"ETag": '"e"'})

    def finalize(self, request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json=self.session("finalized"))


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "qs"
    shutil.copytree(QUICKSTART, root, ignore=shutil.ignore_patterns(".osmosis"))
    (root / ".git").mkdir()
    monkeypatch.chdir(root)
    monkeypatch.setenv("OSMOSIS_TOKEN", "tok")
    monkeypatch.setenv("OSMOSIS_WORKSPACE", "acme")
    return root


def local_run(invoke: Invoke, name: str, *extra: str) -> Any:
    args = ["--json", "eval", "run", "configs/eval/quickstart.toml", "--name", name, "--limit", "3"]
    return invoke(*args, *extra)


def test_upload_declares_every_file_with_its_hash_then_sends_them(
    invoke: Invoke, workspace: Path, router: respx.MockRouter
) -> None:
    assert local_run(invoke, "nat").exit_code in (0, 1)
    imports = Imports(router)
    result = invoke("--json", "eval", "upload", "nat")
    assert result.exit_code == 0, result.stderr
    run_dir = workspace / ".osmosis" / "evals" / "nat"
    body = imports.declared
    manifest = (run_dir / "manifest.json").read_bytes()
    assert body["manifest_digest"] == hashlib.sha256(manifest).hexdigest()
    assert body["run"]["name"] == "nat" and body["reimport"] is False
    assert body["run"]["evaluation_config"]["n"] == 3
    paths = [f["path"] for f in body["files"]]
    assert paths == sorted(paths) and {"index.jsonl", "progress.json"} <= set(paths)
    assert "manifest.json" not in paths and "results.json" not in paths
    for entry in body["files"]:
        local = (run_dir / entry["path"]).read_bytes()
        assert entry["size"] == len(local) and entry["sha256"] == hashlib.sha256(local).hexdigest()
        assert imports.stored[entry["path"]] == local
    document = result.json()
    assert document["operation"] == "eval.upload"
    assert document["resource"]["eval_run_name"] == "imported-run"
    again = invoke("--json", "eval", "upload", str(run_dir))  # resumes: nothing left to send
    assert again.exit_code == 0 and len(imports.asked) == 2


def test_an_unfinished_or_foreign_directory_is_refused_before_any_call(
    invoke: Invoke, workspace: Path, router: respx.MockRouter, tmp_path: Path
) -> None:
    imports = Imports(router)
    assert local_run(invoke, "nat").exit_code in (0, 1)
    progress = workspace / ".osmosis" / "evals" / "nat" / "progress.json"
    data = json.loads(progress.read_text())
    progress.write_text(json.dumps({**data, "total_runs": data["total_runs"] + 3}))
    result = invoke("eval", "upload", "nat")
    assert result.exit_code == 2 and "local evaluation is incomplete" in result.stderr
    (tmp_path / "empty").mkdir()
    assert invoke("eval", "upload", str(tmp_path / "empty")).exit_code == 2
    assert imports.declared == {}


def test_a_taken_import_says_replace_and_run_upload_goes_up_at_the_end(
    invoke: Invoke, workspace: Path, router: respx.MockRouter
) -> None:
    imports = Imports(router, conflict=True)
    ran = local_run(invoke, "nat", "--upload")
    assert "osmosis eval upload nat --replace" in ran.stderr  # a warning: the run is kept
    assert ran.json()["resource"]["upload"]["status"] == "failed"
    replaced = invoke("--json", "eval", "upload", "nat", "--replace")
    assert replaced.exit_code == 0, replaced.stderr
    assert imports.declared["reimport"] is True
    assert imports.declared["provenance"]["config_path"] == "configs/eval/quickstart.toml"


def test_secrets_in_the_log_are_scrubbed_before_it_is_sent(
    invoke: Invoke, workspace: Path, router: respx.MockRouter, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert local_run(invoke, "nat").exit_code in (0, 1)
    log = workspace / ".osmosis" / "evals" / "nat" / "logs.txt"
    log.write_text(log.read_text() + "ERROR [rollout] auth failed with sk-live-abcdef123456\n")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-live-abcdef123456")
    imports = Imports(router)
    assert invoke("eval", "upload", "nat").exit_code == 0
    assert b"sk-live-abcdef123456" not in imports.stored["logs.txt"]
    assert b"auth failed with ***" in imports.stored["logs.txt"]
