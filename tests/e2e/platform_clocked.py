"""What the loopback platform's training and benchmark runs share: runs that are pending,
then running, then finished on a clock (stopped when asked), one run per
Idempotency-Key, found by id or name. Imports nothing of ours."""

from __future__ import annotations

import time
import uuid
from typing import Any


class ClockedRuns:
    def __init__(self, pending_s: float, running_s: float) -> None:
        self.pending_s, self.running_s = pending_s, running_s
        self.runs: dict[str, dict[str, Any]] = {}
        self.keys: dict[str, str] = {}

    def _status(self, run: dict[str, Any]) -> str:
        if run.get("stopped"):
            return "stopped"
        age = time.monotonic() - run["created"]
        if age < self.pending_s:
            return "pending"
        return "running" if age < self.pending_s + self.running_s else "finished"

    def _create(self, prefix: str, name: str, body: Any, key: str | None) -> tuple[int, Any]:
        """A new run (201), or the one this Idempotency-Key already made (200)."""
        if key and key in self.keys:
            return 200, self._created(self.runs[self.keys[key]])
        run_id = f"{prefix}_{uuid.uuid4().hex[:10]}"
        self.runs[run_id] = {"id": run_id, "name": name, "body": body, "created": time.monotonic()}
        if key:
            self.keys[key] = run_id
        return 201, self._created(self.runs[run_id])

    def _created(self, run: dict[str, Any]) -> dict[str, Any]:
        raise NotImplementedError

    def _find(self, name_or_id: str) -> dict[str, Any] | None:
        return next((r for r in self.runs.values() if name_or_id in (r["id"], r["name"])), None)

    def _stop(self, run: dict[str, Any], answer: Any) -> tuple[int, Any]:
        status = self._status(run)
        if status in ("finished", "stopped"):
            return 409, {"code": "CONFLICT", "message": f"run is already {status}"}
        run["stopped"] = True
        return 200, answer
