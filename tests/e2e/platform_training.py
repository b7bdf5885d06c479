"""The loopback platform's training runs (published-cli-0.3.8-train.md §2): a submit
checked as a platform would (its own 400 with issues for a value it cannot use), one run
per Idempotency-Key, pending → running → finished on a clock, checkpoints, metrics by
id, logs, stop (409 once ended). Imports nothing of ours."""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote

from tests.e2e.platform_clocked import ClockedRuns

NUMBERS = ("lr", "total_epochs", "n_samples_per_prompt", "rollout_batch_size")


class Training(ClockedRuns):
    def __init__(self, url: str, pending_s: float = 0.2, running_s: float = 0.6) -> None:
        super().__init__(pending_s, running_s)
        self.url = url

    def _core(self, run: dict[str, Any]) -> dict[str, Any]:
        status = self._status(run)
        exp = run["body"]["experiment_config"]
        step = {"pending": 0, "running": 20, "finished": 40}.get(status, 20)
        return {
            "id": run["id"],
            "name": run["name"],
            "status": status,
            "model": {"id": "bm_1", "model_name": exp["model_path"], "name": exp["model_path"]},
            "dataset": {"id": "ds_1", "file_name": exp["dataset"], "name": exp["dataset"]},
            "rollout": {"id": "ro_1", "name": exp["rollout"]},
            "created_at": "2026-11-27T10:00:00Z",
            "creator_name": "Ada",
            "current_step": step,
            "total_steps": 40,
            "reward": 0.1 + step / 100,
            "platform_url": f"{self.url}/training/{run['id']}",
        }

    def _submit(self, body: Any, key: str | None) -> tuple[int, Any]:
        exp = body.get("experiment_config") if isinstance(body, dict) else None
        if not isinstance(exp, dict) or not {
            "rollout",
            "entrypoint",
            "model_path",
            "dataset",
        } <= set(exp):
            return 400, {"code": "VALIDATION", "message": "Invalid training config"}
        issues = [
            {"key": f"training.{k}", "message": f"must be a number, got {v!r}"}
            for k, v in (body.get("training_config") or {}).items()
            if k in NUMBERS and (isinstance(v, bool) or not isinstance(v, int | float))
        ]
        if issues:
            return 400, {
                "code": "VALIDATION",
                "message": "Invalid training config",
                "issues": issues,
            }
        return self._create("tr", f"{exp['rollout']}-{len(self.runs) + 1:03d}", body, key)

    def _created(self, run: dict[str, Any]) -> dict[str, Any]:
        return {
            k: v
            for k, v in self._core(run).items()
            if k in ("id", "name", "status", "created_at", "platform_url")
        }

    def _metrics(self, run: dict[str, Any]) -> dict[str, Any]:
        points = [
            {"step": s, "value": 0.1 + s / 100, "timestamp": 1764237600000 + s * 1000}
            for s in range(0, 41, 10)
        ]
        return {
            "status": self._status(run),
            "overview": {
                "duration_ms": 60_000,
                "latest_step": 40,
                "total_steps": 40,
                "metric_summaries": [
                    {
                        "key": "rollout/raw_reward",
                        "title": "Reward",
                        "initial": 0.1,
                        "latest": 0.5,
                        "delta": 0.4,
                    }
                ],
            },
            "metrics": [
                {"metric_key": "rollout/raw_reward", "title": "Reward", "data_points": points}
            ],
        }

    def route(
        self, method: str, path: str, query: dict[str, list[str]], body: Any, key: str | None
    ) -> tuple[int, Any]:
        parts = [unquote(p) for p in path.split("/")[4:]]  # after /api/cli/training-runs
        if not parts and method == "POST":
            return self._submit(body, key)
        if not parts and method == "GET":
            runs = [self._core(r) for r in reversed(self.runs.values())]
            return 200, {
                "training_runs": runs,
                "total_count": len(runs),
                "has_more": False,
                "next_offset": None,
            }
        run = self._find(parts[0])
        if run is None:
            return 404, {"code": "NOT_FOUND", "message": "Training run not found"}
        tail, status = parts[1:], self._status(run)
        if method == "GET" and not tail:
            exp = run["body"]["experiment_config"]
            return 200, {
                "training_run": {**self._core(run), "examples_processed_count": 1280},
                "config": run["body"].get("training_config") or {},
                "entrypoint": exp["entrypoint"],
                "commit_sha": exp.get("commit_sha"),
                "branch": exp.get("branch"),
            }
        if method == "GET" and tail == ["checkpoints"]:
            done = status == "finished"
            return 200, {
                "training_run_name": run["name"],
                "checkpoints": [
                    {
                        "id": "ck_1",
                        "checkpoint_step": 40,
                        "status": "uploaded",
                        "checkpoint_name": f"{run['name']}-step-40",
                    }
                ]
                if done
                else [],
            }
        if method == "GET" and tail == ["metrics"] and parts[0] == run["id"]:
            return 200, self._metrics(run)
        if method == "GET" and tail == ["logs"]:
            return 200, {
                "logs": [
                    {
                        "timestamp": "2026-11-27T10:00:01Z",
                        "level": "info",
                        "step": "train",
                        "message": f"status {status}",
                    }
                ],
                "next_cursor": None,
            }
        if method == "POST" and tail == ["stop"]:
            return self._stop(run, {"ok": True})
        return 404, {"code": "NOT_FOUND", "message": f"no route {method} {path}"}
