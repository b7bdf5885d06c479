"""`osmosis eval download` and hosted runs in the results commands: the samples manifest,
presigned URLs, checked paths, verified files, resumption, and the results document."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import httpx
import pytest
import respx

from tests.conftest import PLATFORM
from tests.osmosis_cli.conftest import Invoke

RUN = {"id": "run-1", "name": "brave-otter-7", "status": "finished", "created_at": "2026-11-20"}


def trajectory(prompt: str, answer: str) -> bytes:
    steps = [
        {"step_id": 1, "source": "user", "message": prompt},
        {"step_id": 2, "source": "agent", "message": answer},
    ]
    return json.dumps({"schema_version": "ATIF-v1.4", "steps": steps}).encode()


SUMMARY = b"".join(
    json.dumps(line).encode() + b"\n"
    for line in [
        {"row_index": 0, "run_index": 0, "status": "success", "reward": 1.0, "tokens": 5},
        {"row_index": 1, "run_index": 0, "status": "success", "reward": 0.0, "tokens": 7},
        {"row_index": 2, "run_index": 0, "status": "failed", "error_type": "timeout"},
    ]
)
FILES: dict[str, bytes] = {
    "metrics.json": json.dumps({"summary": {"pass_threshold": 0.5}}).encode(),
    "summary.jsonl": SUMMARY,
    "trajectories/row_0_run_0.json": trajectory("q0", "a0"),
    "trajectories/row_1_run_0.json": trajectory("q1", "a1"),
}


class Storage:
    """The platform's samples routes and a storage behind presigned URLs."""

    def __init__(self, router: respx.MockRouter, files: dict[str, bytes], **extra: Any) -> None:
        self.files = dict(files)
        self.listed = [
            {"path": p, "size": len(b), "sha256": hashlib.sha256(b).hexdigest()}
            for p, b in self.files.items()
        ] + extra.get("more", [])
        self.fetched: list[str] = []
        self.url_requests = 0
        detail = {"eval_run": RUN, "dataset": {"name": "qa"}}
        router.get("/api/cli/eval-runs/brave-otter-7").respond(200, json=detail)
        router.get("/api/cli/eval-runs/run-1").respond(200, json=detail)
        self.manifest = router.get("/api/cli/eval-runs/run-1/samples/manifest").mock(
            side_effect=lambda r: httpx.Response(200, json={"files": self.listed, "totals": {}})
        )
        router.post("/api/cli/eval-runs/run-1/samples/download-urls").mock(side_effect=self.urls)
        router.get(url__startswith=f"{PLATFORM}/storage/").mock(side_effect=self.serve)

    def urls(self, request: httpx.Request) -> httpx.Response:
        self.url_requests += 1
        items = json.loads(request.content)["items"]
        return httpx.Response(
            200,
            json={
                "items": [
                    {"path": i["path"], "url": f"{PLATFORM}/storage/{i['path']}"} for i in items
                ]
            },
        )

    def serve(self, request: httpx.Request) -> httpx.Response:
        assert "authorization" not in request.headers
        path = request.url.path.removeprefix("/storage/")
        self.fetched.append(path)
        return httpx.Response(200, content=self.files[path])


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / ".git").mkdir()
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "qa.jsonl").write_text(
        "".join(
            json.dumps({"user_prompt": f"q{i}", "ground_truth": str(i)}) + "\n" for i in range(3)
        )
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OSMOSIS_TOKEN", "tok")
    monkeypatch.setenv("OSMOSIS_WORKSPACE", "acme")
    return tmp_path


def test_download_fetches_verifies_and_resumes(
    invoke: Invoke, workspace: Path, router: respx.MockRouter
) -> None:
    storage = Storage(router, FILES)
    result = invoke("--json", "eval", "download", "brave-otter-7")
    assert result.exit_code == 0, result.stderr
    root = workspace / ".osmosis" / "evals" / "brave-otter-7"
    for path, body in FILES.items():
        assert (root / path).read_bytes() == body
    resource = result.json()["resource"]
    assert resource["files_downloaded"] == 4 and resource["files_failed"] == []
    assert resource["selected_types"] == ["metrics", "trajectories"]
    query = storage.manifest.calls.last.request.url.params
    assert query["types"] == "metrics,trajectories"
    assert (root / "results.json").is_file()
    again = invoke("--json", "eval", "download", "brave-otter-7")
    assert again.json()["resource"]["files_skipped"] == 4
    assert len(storage.fetched) == 4  # nothing fetched twice
    (root / "summary.jsonl").unlink()
    invoke("eval", "download", "brave-otter-7")
    assert storage.fetched[-1] == "summary.jsonl" and len(storage.fetched) == 5


def test_unsafe_or_mismatched_files_are_failures_never_written(
    invoke: Invoke, workspace: Path, router: respx.MockRouter
) -> None:
    bad = {
        "more": [
            {"path": "../escape.txt", "size": 1},
            {"path": "/etc/passwd", "size": 1},
            {"path": "trajectories/../../x.json", "size": 1},
            {"path": "artifacts/row_0_run_0/manifest.json", "size": 3},  # reserved: left out
        ]
    }
    storage = Storage(router, FILES, **bad)
    storage.listed[0]["sha256"] = "0" * 64  # metrics.json: the hash will not match
    result = invoke("--json", "eval", "download", "brave-otter-7", "-o", "out")
    assert result.exit_code == 1
    document = result.json()
    assert document["status"] == "partial"
    failed = {f["path"]: f["error"] for f in document["resource"]["files_failed"]}
    assert set(failed) == {
        "../escape.txt",
        "/etc/passwd",
        "trajectories/../../x.json",
        "metrics.json",
    }
    assert "SHA-256" in failed["metrics.json"]
    assert not (workspace / "escape.txt").exists() and not (workspace / "x.json").exists()
    assert not (workspace / "out" / "metrics.json").exists()
    assert not list((workspace / "out").rglob("*.partial"))  # a bad hash keeps nothing


def test_type_and_rows_are_checked_before_any_call(
    invoke: Invoke, workspace: Path, router: respx.MockRouter
) -> None:
    route = router.get("/api/cli/eval-runs/brave-otter-7").respond(200, json={"eval_run": RUN})
    for args, message in [
        (["--type", "all,logs"], "--type all cannot be combined"),
        (["--type", "metrics,videos"], "Unknown --type value(s): videos"),
        (["--rows", "3-1"], '--rows must use syntax like "3,7,10-20".'),
        (["--rows", "a"], "--rows must use syntax"),
    ]:
        result = invoke("eval", "download", "brave-otter-7", *args)
        assert result.exit_code == 2 and message in result.stderr, (args, result.stderr)
    assert not route.called


def test_a_pending_run_has_no_outputs(
    invoke: Invoke, workspace: Path, router: respx.MockRouter
) -> None:
    router.get("/api/cli/eval-runs/brave-otter-7").respond(
        200, json={"eval_run": {**RUN, "status": "pending"}}
    )
    result = invoke("eval", "download", "brave-otter-7")
    assert result.exit_code == 2
    assert "not yet available for pending" in result.stderr


def test_a_401_while_getting_urls_stops_cleanly(
    invoke: Invoke, workspace: Path, router: respx.MockRouter
) -> None:
    Storage(router, FILES)
    router.post("/api/cli/eval-runs/run-1/samples/download-urls").respond(
        401, json={"error": "token expired"}
    )
    result = invoke("eval", "download", "brave-otter-7")
    assert result.exit_code == 3, result.stderr
    assert "Traceback" not in result.stderr and "osmosis login" in result.stderr


def test_compare_takes_a_hosted_run_name_and_pairs_rows_by_prompt(
    invoke: Invoke, workspace: Path, router: respx.MockRouter
) -> None:
    storage = Storage(router, FILES)
    local = workspace / "local.json"
    rows = [
        {
            "row_index": i,
            "row_digest": "",
            "runs": [
                {
                    "run_index": 0,
                    "success": True,
                    "scores": {"grader": s},
                    "duration_ms": 1,
                    "tokens": 1,
                    "error": None,
                }
            ],
        }
        for i, s in enumerate([1.0, 1.0, 1.0])
    ]
    document = {
        "config": {"model": "m", "n_runs": 1, "pass_threshold": 0.5, "eval_fns": ["grader"]},
        "summary": {"total_rows": 3, "total_runs": 3},
        "rows": rows,
    }
    local.write_text(json.dumps(document))
    result = invoke("--json", "eval", "compare", "brave-otter-7", str(local))
    assert result.exit_code == 0, result.stderr
    data = result.data()
    assert data["eval_fns"]["grader"]["mean_a"] == pytest.approx(1 / 3)  # the failed row is 0
    assert len(storage.fetched) == 4
    results = json.loads(
        (workspace / ".osmosis" / "evals" / "brave-otter-7" / "results.json").read_text()
    )
    assert results["config"]["hosted_run"]["name"] == "brave-otter-7"
    first = results["rows"][0]["runs"][0]
    assert first["answer"] == "a0" and first["messages"][0] == {"role": "user", "content": "q0"}
    assert results["rows"][0]["row_digest"]  # matched to data/qa.jsonl by its prompt
    invoke("--json", "eval", "compare", "brave-otter-7", str(local))
    assert len(storage.fetched) == 4  # a finished run's document is reused


def test_info_o_saves_the_platforms_metrics_and_never_overwrites_silently(
    invoke: Invoke, workspace: Path, router: respx.MockRouter
) -> None:
    storage = Storage(router, FILES)
    result = invoke("--json", "eval", "info", "brave-otter-7", "-o", "saved")
    assert result.exit_code == 0, result.stderr
    assert (workspace / "saved" / "metrics.json").read_bytes() == FILES["metrics.json"]
    assert result.data()["output_path"] == str(Path("saved") / "metrics.json")
    assert storage.manifest.calls.last.request.url.params["types"] == "metrics"
    refused = invoke("eval", "info", "brave-otter-7", "-o", "saved")
    assert refused.exit_code == 2 and "--overwrite" in refused.stderr
    assert invoke("eval", "info", "brave-otter-7", "-o", "saved", "--overwrite").exit_code == 0


RETRIED = {"id": "run-1", "name": "brave-otter-7", "status": "pending", "workflow_id": "wf"}


def test_retry_confirms_then_posts(
    invoke: Invoke, workspace: Path, router: respx.MockRouter
) -> None:
    route = router.post("/api/cli/eval-runs/brave-otter-7/retry").respond(
        200, json={**RETRIED, "retryable_samples": 3}
    )
    unconfirmed = invoke("--json", "eval", "retry", "brave-otter-7")
    assert unconfirmed.error()["code"] == "INTERACTIVE_REQUIRED" and not route.called
    done = invoke("--json", "eval", "retry", "brave-otter-7", "-y")
    assert done.exit_code == 0, done.stderr
    assert json.loads(route.calls.last.request.content) == {}
    document = done.json()
    assert document["operation"] == "eval.retry"
    assert document["message"] == "Retrying 3 failed and skipped sample(s) in brave-otter-7"
    assert document["resource"]["workflow_id"] == "wf"


def test_retry_resends_with_the_run_secrets_the_platform_asks_for(
    invoke: Invoke, workspace: Path, router: respx.MockRouter, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("RUN_KEY", raising=False)
    answers = iter(
        [
            httpx.Response(422, json={"error": "secrets needed", "run_secret_names": ["RUN_KEY"]}),
            httpx.Response(200, json={**RETRIED, "retryable_samples": None}),
            httpx.Response(422, json={"error": "secrets needed", "run_secret_names": ["RUN_KEY"]}),
        ]
    )
    route = router.post("/api/cli/eval-runs/brave-otter-7/retry").mock(
        side_effect=lambda request: next(answers)
    )
    (workspace / "s.env").write_text("RUN_KEY=rk-123\n")
    done = invoke("--json", "eval", "retry", "brave-otter-7", "-y", "--secrets-file", "s.env")
    assert done.exit_code == 0, done.stderr
    assert json.loads(route.calls.last.request.content) == {"secrets": {"RUN_KEY": "rk-123"}}
    assert done.json()["message"] == "Retrying brave-otter-7 from the start"
    missing = invoke("--json", "eval", "retry", "brave-otter-7", "-y")
    error = missing.error()
    assert error["code"] == "INTERACTIVE_REQUIRED" and error["details"]["missing"] == ["RUN_KEY"]


def test_a_local_runs_retry_names_the_command_that_retries_it(
    invoke: Invoke, workspace: Path, router: respx.MockRouter
) -> None:
    local = {"config_path": "configs/eval/qa.toml", "eval_run_name": "calm-fox-2"}
    router.post("/api/cli/eval-runs/calm-fox-2/retry").respond(
        409, json={"error": "local run", "local_run": local}
    )
    result = invoke("eval", "retry", "calm-fox-2", "-y")
    assert result.exit_code == 2
    assert (
        "osmosis eval run configs/eval/qa.toml --name calm-fox-2 --retry-failed --upload"
        in result.stderr
    )


def test_a_planted_osmosis_symlink_is_never_written_through(
    invoke: Invoke, workspace: Path, router: respx.MockRouter
) -> None:
    storage = Storage(router, FILES)
    outside = workspace / "elsewhere"
    outside.mkdir()
    (workspace / ".osmosis").symlink_to(outside)  # committed as a link to somewhere else
    result = invoke("eval", "download", "brave-otter-7")
    assert result.exit_code == 2 and "is a symbolic link" in result.stderr
    assert list(outside.iterdir()) == [] and storage.fetched == []
    given = invoke("eval", "download", "brave-otter-7", "-o", str(workspace / "mine"))
    assert given.exit_code == 0  # a directory the user names is theirs
