"""``client.benchmarks`` / ``client.benchmark_runs`` and ``osmosis benchmark …`` (issue
37): every route on respx (sync and async), the published items, rows and operations,
stop by id with the platform's answer reported, downloads through the checked engine,
submits checked against the catalog and the stored secrets before anything is created."""

from __future__ import annotations

import asyncio
import hashlib
import json
from pathlib import Path
from typing import Any

import httpx
import pytest
import respx

from osmosis_client import AsyncClient, Client
from osmosis_client.errors import NotFoundError
from osmosis_client.platform.eval.sample_models import SampleFile
from tests.conftest import PLATFORM
from tests.osmosis_cli.conftest import Invoke

BENCH = {
    "id": "bm_tb",
    "name": "Terminal-Bench 2.1",
    "source_type": "registry",
    "source_ref": "terminal-bench-2-1",
    "task_count": 89,
    "category_count": 2,
    "task_sets": [{"name": "parity", "task_count": 20, "recommended": True}],
    "last_run_name": "tb21-run-002",
    "last_run_status": "running",
    "last_run_at": "2026-11-27T08:00:00Z",
    "run_count": 2,
}
SYNCING = {
    **BENCH,
    "id": "bm_swe",
    "name": "SWE-bench Verified",
    "source_ref": "swe-bench-verified",
    "task_count": 500,
    "sync_status": "syncing",
    "synced_task_count": 120,
}
DETAIL = {
    "benchmark": {
        **BENCH,
        "runner_family": "harbor",
        "supports_harness": True,
        "requires_harness": True,
        "default_harness": "terminus-2",
        "requires_judge_model": False,
        "pass_threshold": 1.0,
        "categories": [
            {"name": "software-engineering", "task_count": 60},
            {"name": "security", "task_count": 29},
        ],
        "tasks": [
            {
                "name": "terminal-bench/git-multibranch",
                "category": "software-engineering",
                "difficulty": "weird",
            }
        ],
    },
    "leaderboard": [
        {
            "rank": 1,
            "model": "openai/gpt-5.2",
            "harness": "codex",
            "pass_at_1": {"value": 0.62, "ci_low": 0.55, "ci_high": 0.69, "n": 178},
            "pass_at_k": [{"k": 1, "value": 0.62}],
            "cost_per_task": 0.43,
            "mean_duration_seconds": 312,
            "tokens_per_task": 182000,
        }
    ],
}
RUN = {
    "id": "br_1",
    "name": "tb21-run-001",
    "status": "finished",
    "benchmark": {"id": "bm_tb", "name": "Terminal-Bench 2.1"},
    "agent_count": 1,
    "best_pass_at_1": 0.62,
    "ingested_results": 178,
    "expected_results": 178,
    "created_at": "2026-11-26T14:07:00Z",
    "started_at": "2026-11-26T14:08:00Z",
    "completed_at": "2026-11-26T15:07:30Z",
    "creator_name": "Dev Example",
}
RUN_DETAIL = {
    "benchmark_run": {**RUN, "best_pass_at_1": None, "agent_count": None},
    "configuration": {
        "source": "registry: terminal-bench-2-1",
        "task_filters": {"task_set": "parity"},
    },
    "agents": [{"harness": "codex", "model": "openai/gpt-5.2", "status": "finished"}],
    "progress": {"ingested": 178, "expected": 178},
    "totals": {"passed": 110},
    "agent_metrics": [{"pass_at_1": {"value": 0.62}}],
}
FILES = {
    "summary.csv": b"task,passed\na,1\n",
    "results.csv": b"task,attempt,passed\na,1,1\n",
    "artifacts/a/1/out.txt": b"artifact",
}


def page(key: str, items: list[dict[str, Any]]) -> dict[str, Any]:
    return {key: items, "total_count": len(items), "has_more": False, "next_offset": None}


@pytest.fixture
def platform(
    router: respx.MockRouter, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> respx.MockRouter:
    monkeypatch.setenv("OSMOSIS_TOKEN", "t")
    monkeypatch.setenv("OSMOSIS_WORKSPACE", "acme")
    monkeypatch.chdir(tmp_path)
    router.get("/api/cli/benchmarks").respond(200, json=page("benchmarks", [BENCH, SYNCING]))
    router.get("/api/cli/benchmarks/terminal-bench-2-1").respond(200, json=DETAIL)
    router.get("/api/cli/benchmarks/nope").respond(404, json={"error": "not found"})
    router.get("/api/cli/benchmark-runs").respond(200, json=page("benchmark_runs", [RUN]))
    for name in ("tb21-run-001", "br_1"):
        router.get(f"/api/cli/benchmark-runs/{name}").respond(200, json=RUN_DETAIL)
    router.get("/api/cli/benchmark-runs/ghost").respond(404, json={"error": "not found"})
    router.get("/api/cli/benchmark-runs/tb21-run-001/logs").respond(
        200,
        json={
            "logs": [
                {"timestamp": "2026-11-26T14:09:00Z", "level": "info", "message": "task a passed"}
            ],
            "next_cursor": None,
        },
    )
    listed = [
        {"path": p, "size": len(b), "sha256": hashlib.sha256(b).hexdigest()}
        for p, b in FILES.items()
    ] + [{"path": "metrics.json", "size": 2}, {"path": "../escape.txt", "size": 2}]
    router.get("/api/cli/benchmark-runs/br_1/outputs/manifest").respond(
        200, json={"files": listed, "totals": {"files": 5}}
    )

    def urls(request: httpx.Request) -> httpx.Response:
        items = json.loads(request.content)["items"]
        return httpx.Response(
            200,
            json={
                "urls": [
                    {"path": i["path"], "presigned_url": f"{PLATFORM}/storage/{i['path']}"}
                    for i in items
                ]
            },
        )

    router.post("/api/cli/benchmark-runs/br_1/outputs/download-urls").mock(side_effect=urls)
    router.get(url__startswith=f"{PLATFORM}/storage/").mock(
        side_effect=lambda r: httpx.Response(200, content=FILES[r.url.path[len("/storage/") :]])
    )
    return router


@pytest.mark.parametrize("face", ["sync", "async"])
def test_every_benchmark_route(platform: respx.MockRouter, face: str) -> None:
    def calls(c: Any) -> list[Any]:
        runs = c.benchmark_runs
        return [
            list(c.benchmarks.pages()),
            c.benchmarks.get("terminal-bench-2-1"),
            list(runs.pages(benchmark="bm_tb")),
            runs.get("tb21-run-001"),
            runs.logs("tb21-run-001"),
            runs.outputs_manifest("br_1", ["summary"]),
        ]

    async def acalls(c: Any) -> list[Any]:
        runs = c.benchmark_runs
        return [
            [p async for p in c.benchmarks.pages()],
            await c.benchmarks.get("terminal-bench-2-1"),
            [p async for p in runs.pages(benchmark="bm_tb")],
            await runs.get("tb21-run-001"),
            await runs.logs("tb21-run-001"),
            await runs.outputs_manifest("br_1", ["summary"]),
        ]

    options = {"base_url": PLATFORM, "token": "t", "workspace": "acme", "max_retries": 0}
    if face == "sync":
        with Client(**options) as client:
            found = calls(client)
    else:

        async def go() -> list[Any]:
            async with AsyncClient(**options) as client:
                return await acalls(client)

        found = asyncio.run(go())
    benchmarks, detail, runs, run, logs, manifest = found
    assert [b.key for b in benchmarks[0].benchmarks] == ["terminal-bench-2-1", "swe-bench-verified"]
    assert detail.benchmark.tasks[0].difficulty is None  # outside easy|medium|hard
    assert runs[0].benchmark_runs[0].benchmark_name == "Terminal-Bench 2.1"  # from benchmark{}
    assert (run.benchmark_run.agent_count, run.benchmark_run.best_pass_at_1) == (1, 0.62)
    assert logs.logs[0].message == "task a passed"
    assert len(manifest.files) == 5
    listed = platform.calls  # the runs of one benchmark: by its id
    assert any(c.request.url.params.get("benchmark") == "bm_tb" for c in listed)


def test_list_item_and_plain_rows(invoke: Invoke, platform: respx.MockRouter) -> None:
    item = invoke("benchmark", "list", "--json").json()["items"][0]
    assert (item["key"], item["source_ref"], item["sync_status"]) == (
        "terminal-bench-2-1",
        "terminal-bench-2-1",
        "ready",
    )
    plain = invoke("benchmark", "list", "--plain").stdout.splitlines()
    assert plain[0].split("\t")[0:2] == ["Terminal-Bench 2.1", "terminal-bench-2-1"]
    assert plain[0].split("\t")[2].startswith("Running · ")
    assert plain[1].split("\t")[2:] == ["Syncing · 120 / 500 tasks", "–"]
    runs = invoke("benchmark", "runs", "list", "--plain").stdout.splitlines()
    assert runs == [
        "tb21-run-001\t[finished]\t178 / 178 results\tTerminal-Bench 2.1\t1\t62.0%"
        "\t2026-11-26 2:07 PM UTC\tDev Example"
    ]
    assert invoke("benchmark", "list", "--all", "--limit", "3").exit_code == 2


def test_info_lines_and_document(invoke: Invoke, platform: respx.MockRouter) -> None:
    lines = invoke("benchmark", "info", "terminal-bench-2-1", "--plain").stdout.splitlines()
    assert "Named Task Sets: parity (20, recommended)" in lines
    assert "Harness: Required (default: terminus-2)" in lines
    assert "Pass Threshold: 1" in lines
    assert (
        "#1 · openai/gpt-5.2 (codex) · pass@1 62.0% (55.0–69.0) · $0.43/task · 312s/task · "
        "182.0k tokens/task"
    ) in lines  # pass@1 said once (0.3.8 says it twice)
    data = invoke("benchmark", "info", "terminal-bench-2-1", "--json").json()["data"]
    assert data["benchmark"]["runner_family"] == "harbor" and "run_count" not in data["benchmark"]
    assert data["runs"][0]["progress"] == {"completed": 178, "total": 178, "unit": "results"}
    assert data["workspace"] == {"name": "acme"}


def test_run_info(invoke: Invoke, platform: respx.MockRouter) -> None:
    lines = invoke("benchmark", "runs", "info", "tb21-run-001", "--plain").stdout.splitlines()
    assert {
        "Status: Finished",
        "Progress: 178 / 178 results",
        "Duration: 59m 30s",
        "Best Pass@1: 62.0%",
        "Agents: 1",
    } <= set(lines)
    assert "  Agent 1: codex · openai/gpt-5.2 · finished" in lines
    data = invoke("benchmark", "runs", "info", "tb21-run-001", "--json").json()["data"]
    assert data["configuration"]["task_filters"] == {"task_set": "parity"}
    assert "progress" not in data["benchmark_run"] and data["progress"]["total"] == 178


def test_stop_by_id_reporting_the_platforms_answer(
    invoke: Invoke, platform: respx.MockRouter
) -> None:
    stop = platform.post("/api/cli/benchmark-runs/br_1/stop").respond(200, json={})
    missing = invoke("benchmark", "runs", "stop", "ghost", "--yes", "--json")
    assert missing.exit_code == 1 and missing.error()["code"] == "NOT_FOUND"
    assert not stop.called
    refused = invoke("benchmark", "runs", "stop", "tb21-run-001")
    assert refused.exit_code == 2 and not stop.called
    done = invoke("benchmark", "runs", "stop", "tb21-run-001", "--yes", "--json").json()
    assert done["operation"] == "benchmark.stop"
    assert (done["resource"]["id"], done["resource"]["status"]) == ("br_1", "finished")
    assert "stop requested; it is finished" in done["message"]
    assert json.loads(stop.calls.last.request.content) == {}


def test_download_into_the_run_directory_refusing_what_is_outside(
    invoke: Invoke, platform: respx.MockRouter, tmp_path: Path
) -> None:
    result = invoke("benchmark", "runs", "download", "tb21-run-001", "--type", "all", "--json")
    assert result.exit_code == 1  # partial: two manifest paths are outside the layout
    document = result.json()
    assert (document["status"], document["operation"]) == ("partial", "benchmark.download")
    resource = document["resource"]
    root = tmp_path / ".osmosis" / "benchmarks" / "tb21-run-001"
    assert resource["output_path"] == str(root) and "rows" not in resource
    assert resource["benchmark_run"] == {"id": "br_1", "name": "tb21-run-001"}
    assert {f["path"] for f in resource["files_failed"]} == {"metrics.json", "../escape.txt"}
    assert (root / "summary.csv").read_bytes() == FILES["summary.csv"]
    assert (root / "artifacts" / "a" / "1" / "out.txt").read_bytes() == b"artifact"
    assert not (tmp_path / ".osmosis" / "benchmarks" / "escape.txt").exists()
    again = invoke("benchmark", "runs", "download", "tb21-run-001", "--plain")
    assert "Downloaded 0 files (0 B)" in again.stdout and "(2 already up to date)" in again.stdout
    assert "Failed: metrics.json" in again.stdout


@pytest.mark.parametrize(
    ("types", "message"),
    [
        ("summary,", "--type must be a comma-separated list of output types."),
        ("all,logs", "--type all cannot be combined"),
        (
            "metrics",
            "Unknown --type value(s): metrics. Choose from: summary, results, artifacts, logs, all.",
        ),
    ],
)
def test_download_types_are_checked_before_any_request(
    invoke: Invoke, platform: respx.MockRouter, types: str, message: str
) -> None:
    result = invoke("benchmark", "runs", "download", "tb21-run-001", "--type", types)
    assert result.exit_code == 2 and message in result.stderr
    assert not platform.calls


@pytest.mark.parametrize("face", ["sync", "async"])
def test_submit_stop_and_urls_routes(platform: respx.MockRouter, face: str) -> None:
    created = {
        "id": "br_2",
        "name": "tb21-run-002",
        "status": "pending",
        "workflow_id": "w",
        "task_count": 89,
        "created_at": "2026-11-27T10:00:00Z",
    }
    submit = platform.post("/api/cli/benchmark-runs").respond(201, json=created)
    stop = platform.post("/api/cli/benchmark-runs/br_1/stop").respond(200, json={})
    platform.get("/api/cli/benchmark-runs/nope/outputs/manifest").respond(404, json={})
    payload = {"experiment_config": {"benchmark": "terminal-bench-2-1"}, "agents": []}
    files = [SampleFile(path="summary.csv", size=1, token="t1")]
    options = {"base_url": PLATFORM, "token": "t", "workspace": "acme", "max_retries": 0}

    def calls(c: Any) -> list[Any]:
        runs = c.benchmark_runs
        with pytest.raises(NotFoundError, match="output route was not found"):
            runs.outputs_manifest("nope", ["summary"])
        return [
            runs.submit(payload, "k1", secrets={"S": "v"}),
            runs.stop("tb21-run-001"),
            runs.download_urls("br_1", files),
        ]

    async def acalls(c: Any) -> list[Any]:
        runs = c.benchmark_runs
        with pytest.raises(NotFoundError, match="output route was not found"):
            await runs.outputs_manifest("nope", ["summary"])
        return [
            await runs.submit(payload, "k1", secrets={"S": "v"}),
            await runs.stop("tb21-run-001"),
            await runs.download_urls("br_1", files),
        ]

    if face == "sync":
        with Client(**options) as client:
            made, after, urls = calls(client)
    else:

        async def go() -> list[Any]:
            async with AsyncClient(**options) as client:
                return await acalls(client)

        made, after, urls = asyncio.run(go())
    assert made.workflow_id == "w" and after.benchmark_run.status == "finished"
    assert urls[0].url == f"{PLATFORM}/storage/summary.csv"
    sent = json.loads(submit.calls.last.request.content)
    assert sent["secrets"] == {"required": ["S"], "provided": {"S": "v"}}
    assert submit.calls.last.request.headers["Idempotency-Key"] == "k1"
    assert stop.call_count == 1 and json.loads(stop.calls.last.request.content) == {}


def test_a_symlink_planted_in_the_run_directory_is_never_written_through(
    invoke: Invoke, platform: respx.MockRouter, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    root = tmp_path / ".osmosis" / "benchmarks" / "tb21-run-001"
    root.mkdir(parents=True)
    (root / "artifacts").symlink_to(outside)
    (root / ".results.csv.partial").symlink_to(outside / "appended.csv")
    result = invoke("benchmark", "runs", "download", "tb21-run-001", "--type", "all", "--json")
    assert result.exit_code == 1
    failed = {f["path"]: f["error"] for f in result.json()["resource"]["files_failed"]}
    assert "leaves the run directory" in failed["artifacts/a/1/out.txt"]
    assert list(outside.iterdir()) == []  # nothing appended or written outside
    assert (root / "results.csv").read_bytes() == FILES["results.csv"]
    assert not (root / ".results.csv.partial").exists()


@pytest.mark.parametrize(
    "planted", [".osmosis", ".osmosis/benchmarks", ".osmosis/benchmarks/tb21-run-001"]
)
def test_a_default_root_through_a_planted_symlink_is_refused(
    invoke: Invoke, platform: respx.MockRouter, tmp_path: Path, planted: str
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    link = tmp_path / planted
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(outside)
    result = invoke("benchmark", "runs", "download", "tb21-run-001")
    assert result.exit_code == 2
    assert "is a symbolic link: downloads are never written through one" in result.stderr
    assert "-o DIR" in result.stderr
    assert list(outside.iterdir()) == []


def test_people_get_tables_lines_and_hints(invoke: Invoke, platform: respx.MockRouter) -> None:
    listed = invoke("benchmark", "list")
    assert listed.exit_code == 0, listed.stderr
    assert "terminal-bench-2-1" in listed.stdout
    assert "SWE-bench Verified is still syncing its task list (120 of 500 tasks)" in listed.stderr
    shown = invoke("benchmark", "info", "terminal-bench-2-1")
    assert shown.exit_code == 0 and "Leaderboard:" in shown.stdout
    assert 'we recommend [tasks] task_set = "parity" (20 tasks)' in shown.stderr
    runs = invoke("benchmark", "runs", "list")
    assert runs.exit_code == 0 and "tb21-run-001" in runs.stdout
    run = invoke("benchmark", "runs", "info", "tb21-run-001")
    assert run.exit_code == 0 and "Configuration:" in run.stdout
    assert "Download outputs with: osmosis benchmark runs download tb21-run-001" in run.stderr
    logs = invoke("benchmark", "runs", "logs", "tb21-run-001")
    assert logs.exit_code == 0 and "task a passed" in logs.stdout
    for result in (listed, shown, runs, run, logs):
        assert "Traceback" not in result.stderr
