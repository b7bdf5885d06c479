"""The loopback platform's benchmarks (published-cli-0.3.8-train.md §4): a catalog of
one ready benchmark, runs pending → running → finished on a clock, stop by id, logs,
and outputs behind presigned URLs in the double's storage (where a GET can be cut short
once). Imports nothing of ours."""

from __future__ import annotations

import hashlib
from typing import Any
from urllib.parse import unquote

from tests.e2e.platform_clocked import ClockedRuns

BENCH = {
    "id": "bm_tb",
    "name": "Terminal-Bench 2.1",
    "source_type": "registry",
    "source_ref": "terminal-bench-2-1",
    "task_count": 2,
    "category_count": 1,
    "task_sets": [{"name": "parity", "task_count": 1, "recommended": True}],
    "sync_status": "ready",
    "synced_task_count": 2,
}
INFO = {
    **BENCH,
    "runner_family": "harbor",
    "supports_harness": True,
    "requires_harness": False,
    "requires_judge_model": False,
    "pass_threshold": 1.0,
    "categories": [{"name": "software-engineering", "task_count": 2}],
    "tasks": [
        {"name": "terminal-bench/git-multibranch", "category": "software-engineering"},
        {"name": "terminal-bench/fix-permissions", "category": "software-engineering"},
    ],
}


def outputs(run_id: str) -> dict[str, bytes]:
    rows = "".join(f"terminal-bench/task-{i},{i % 2}\n" for i in range(4000))
    return {
        "summary.csv": b"agent,pass_at_1\ncodex,0.5\n",
        "results.csv": ("task,passed\n" + rows).encode(),
        "logs.txt": f"run {run_id} finished\n".encode(),
        f"artifacts/{run_id}/1/trace.txt": b"trace",
    }


class Benchmarks(ClockedRuns):
    def __init__(
        self,
        storage: dict[str, Any],
        stored: type,
        url: str,
        pending_s: float = 0.2,
        running_s: float = 0.4,
    ) -> None:
        super().__init__(pending_s, running_s)
        self.storage, self.stored, self.url = storage, stored, url

    def _run(self, run: dict[str, Any]) -> dict[str, Any]:
        status = self._status(run)
        done = 2 if status == "finished" else 0
        return {
            "id": run["id"],
            "name": run["name"],
            "status": status,
            "benchmark": {"id": "bm_tb", "name": BENCH["name"]},
            "agent_count": 1,
            "ingested_results": done,
            "expected_results": 2,
            "best_pass_at_1": 0.5 if done else None,
            "created_at": "2026-11-27T10:00:00Z",
            "creator_name": "Ada",
            "platform_url": f"{self.url}/benchmarks/{run['id']}",
        }

    def _submit(self, body: Any, key: str | None) -> tuple[int, Any]:
        if not isinstance(body, dict) or body.get("experiment_config", {}).get("benchmark") not in (
            "terminal-bench-2-1",
            "Terminal-Bench 2.1",
            "bm_tb",
        ):
            return 404, {"code": "NOT_FOUND", "message": "Benchmark not found"}
        return self._create("br", f"tb21-run-{len(self.runs) + 1:03d}", body, key)

    def _created(self, run: dict[str, Any]) -> dict[str, Any]:
        return {
            "id": run["id"],
            "name": run["name"],
            "status": self._status(run),
            "created_at": "2026-11-27T10:00:00Z",
            "workflow_id": f"wf_{run['id']}",
            "task_count": 2,
        }

    def catalog(self, method: str, path: str) -> tuple[int, Any]:
        parts = [unquote(p) for p in path.split("/")[4:]]
        if method == "GET" and not parts:
            return 200, {
                "benchmarks": [BENCH],
                "total_count": 1,
                "has_more": False,
                "next_offset": None,
            }
        if (
            method == "GET"
            and len(parts) == 1
            and parts[0] in ("terminal-bench-2-1", "bm_tb", BENCH["name"])
        ):
            return 200, {"benchmark": INFO, "leaderboard": []}
        return 404, {"code": "NOT_FOUND", "message": "Benchmark not found"}

    def route(
        self, method: str, path: str, query: dict[str, list[str]], body: Any, key: str | None
    ) -> tuple[int, Any]:
        parts = [unquote(p) for p in path.split("/")[4:]]  # after /api/cli/benchmark-runs
        if not parts and method == "POST":
            return self._submit(body, key)
        if not parts and method == "GET":
            runs = [self._run(r) for r in reversed(self.runs.values())]
            return 200, {
                "benchmark_runs": runs,
                "total_count": len(runs),
                "has_more": False,
                "next_offset": None,
            }
        run = self._find(parts[0])
        if run is None:
            return 404, {"code": "NOT_FOUND", "message": "Benchmark run not found"}
        tail, status = parts[1:], self._status(run)
        if method == "GET" and not tail:
            return 200, {
                "benchmark_run": self._run(run),
                "configuration": {
                    "benchmark_name": BENCH["name"],
                    "config": run["body"].get("execution_config"),
                },
                "agents": run["body"]["agents"],
                "totals": {"passed": 1, "failed": 1},
            }
        if method == "GET" and tail == ["logs"]:
            return 200, {
                "logs": [
                    {
                        "timestamp": "2026-11-27T10:00:01Z",
                        "level": "info",
                        "message": f"status {status}",
                    }
                ],
                "next_cursor": None,
            }
        if method == "POST" and tail == ["stop"] and parts[0] == run["id"]:
            return self._stop(run, {})
        if tail[:1] == ["outputs"] and parts[0] == run["id"]:
            return self._outputs(run, method, tail[1:], query, body)
        return 404, {"code": "NOT_FOUND", "message": f"no route {method} {path}"}

    def _outputs(
        self, run: dict[str, Any], method: str, tail: list[str], query: Any, body: Any
    ) -> tuple[int, Any]:
        files = outputs(run["id"])
        for path, data in files.items():
            self.storage[f"bench/{run['id']}/{path}"] = self.stored(data)
        if method == "GET" and tail == ["manifest"]:
            types = set(query.get("types", ["summary,results"])[0].split(","))
            kind = {"summary.csv": "summary", "results.csv": "results", "logs.txt": "logs"}
            listed = [
                {"path": p, "size": len(d), "sha256": hashlib.sha256(d).hexdigest()}
                for p, d in files.items()
                if kind.get(p, "artifacts") in types
            ]
            return 200, {"files": listed, "totals": {"files": len(listed)}}
        if method == "POST" and tail == ["download-urls"]:
            return 200, {
                "items": [
                    {
                        "path": i["path"],
                        "presignedUrl": f"{self.url}/storage/bench/{run['id']}/{i['path']}",
                    }
                    for i in body.get("items", [])
                ]
            }
        return 404, {"code": "NOT_FOUND", "message": "no such outputs route"}
