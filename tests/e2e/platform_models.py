"""The loopback platform's models (published-cli-0.3.8-train.md §3): two base models, two
LoRA adapters, an inference quota of one deployment (imports nothing of ours)."""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote


class Models:
    def __init__(self, quota: int = 1) -> None:
        self.quota = quota
        self.base = [
            {
                "id": "bm_1",
                "model_name": "Qwen3.6-35B",
                "base_model": "Qwen/Qwen3.6-35B-A3B",
                "creator_name": "Osmosis",
                "created_at": "2026-11-01T10:00:00Z",
                "parameters": 35_000_000_000,
                "context_window": 262_144,
            },
            {
                "id": "bm_2",
                "model_name": "Llama-4-8B",
                "base_model": "meta/Llama-4-8B",
                "creator_name": "Osmosis",
                "created_at": "2026-11-02T10:00:00Z",
            },
        ]
        self.lora = [
            {
                "id": f"lm_{i}",
                "model_name": name,
                "base_model": "Qwen/Qwen3.6-35B-A3B",
                "training_run_name": "qwen-multiply-001",
                "checkpoint_step": step,
                "reward": 0.7,
                "deployment_status": "inactive",
                "created_at": "2026-11-19T09:00:00Z",
            }
            for i, (name, step) in enumerate((("step-40", 40), ("step-80", 80)), 1)
        ]

    def _page(self, items: list[dict[str, Any]], query: dict[str, list[str]]) -> dict[str, Any]:
        limit, offset = int(query.get("limit", ["50"])[0]), int(query.get("offset", ["0"])[0])
        chunk = items[offset : offset + limit]
        more = offset + limit < len(items)
        return {
            "models": chunk,
            "total_count": len(items),
            "has_more": more,
            "next_offset": offset + limit if more else None,
        }

    def route(self, method: str, path: str, query: dict[str, list[str]]) -> tuple[int, Any]:
        parts = [unquote(p) for p in path.split("/")[4:]]  # after /api/cli/models
        active = sum(1 for m in self.lora if m["deployment_status"] == "active")
        if method == "GET" and parts == ["base"]:
            return 200, self._page(self.base, query)
        if method == "GET" and parts == ["lora"]:
            return 200, self._page(self.lora, query) | {
                "active_deployments": active,
                "max_active_deployments": self.quota,
            }
        if method == "GET" and len(parts) == 2 and parts[0] == "base":
            found = [m for m in self.base if parts[1] in (m["model_name"], m["base_model"])]
            return (200, found[0]) if found else (404, {"error": "Base model not found"})
        lora = [m for m in self.lora if parts and m["model_name"] == parts[0]]
        if method == "GET" and len(parts) == 1:
            return (200, lora[0]) if lora else (404, {"error": "LoRA model not found"})
        if method == "POST" and len(parts) == 2 and parts[1] in ("deploy", "undeploy"):
            if not lora:
                return 404, {"error": "LoRA model not found"}
            model = lora[0]
            if parts[1] == "deploy" and model["deployment_status"] != "active":
                if active >= self.quota:
                    return 409, {
                        "code": "DEPLOYMENT_LIMIT_REACHED",
                        "message": "deployment limit reached",
                    }
                model["deployment_status"] = "active"
            elif parts[1] == "undeploy":
                model["deployment_status"] = "inactive"
            return 200, {
                "id": model["id"],
                "model_name": model["model_name"],
                "status": model["deployment_status"],
            }
        return 404, {"code": "NOT_FOUND", "message": f"no route {method} {path}"}
