"""A small real HTTP platform on 127.0.0.1 for end-to-end tests (stdlib only).

It speaks every route of platform-api.md, records what it receives, moves eval
runs ``pending → running → finished`` over (short, configurable) time, honours
idempotency keys, and injects faults on demand:

    double.inject("POST", "/api/cli/eval-runs", "drop_after_create")
    double.inject("GET", "/api/cli/eval-runs", "status", status=429, headers={"Retry-After": "1"})

Fault kinds: ``status`` (any status and body), ``drop`` (close without answering,
before acting), ``drop_after_create`` (create the run, then close without
answering), ``reset`` (TCP reset), ``slow`` (sleep ``seconds`` first),
``invalid_json`` (200 with a body that is not JSON).
"""

from __future__ import annotations

import json
import socket
import struct
import threading
import time
import uuid
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from tests.loopback_http import LoopbackHTTPServer


@dataclass
class Received:
    method: str
    path: str
    headers: dict[str, str]
    body: Any


@dataclass
class Fault:
    method: str
    path: str
    kind: str
    count: int = 1
    status: int = 500
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    seconds: float = 0.0


@dataclass
class Run:
    id: str
    name: str
    created: float
    body: dict[str, Any]
    creator: str
    pending_s: float = 0.2
    running_s: float = 0.4
    stopped_at: float | None = None
    wall: float = field(default_factory=time.time)  # the log's clock


@dataclass
class PlatformState:
    token: str = "tok-e2e-secret-7f3a"
    user: dict[str, Any] = field(
        default_factory=lambda: {"id": "u1", "email": "ada@example.com", "name": "Ada"}
    )
    workspaces: list[dict[str, Any]] = field(
        default_factory=lambda: [
            {
                "id": "w1",
                "name": "acme",
                "role": "admin",
                "connected_repo": {"repo_full_name": "org/demo"},
            },
            {"id": "w2", "name": "beta", "role": "member", "connected_repo": None},
        ]
    )
    approve_after_polls: int = 2
    deny: bool = False
    polls: int = 0
    revoked: set[str] = field(default_factory=set)
    received: list[Received] = field(default_factory=list)
    runs: dict[str, Run] = field(default_factory=dict)
    idempotency: dict[str, str] = field(default_factory=dict)
    faults: list[Fault] = field(default_factory=list)
    page_size: int = 2
    pending_s: float = 0.2
    running_s: float = 0.4
    pass_rate: float = 0.85
    version_status: str | None = None
    registered: list[dict[str, Any]] = field(default_factory=list)
    log_interval_s: float = 0.05  # one "rollout finished" log entry per interval while running
    rollouts: list[dict[str, Any]] = field(
        default_factory=lambda: [
            {
                "id": f"r{i}",
                "name": name,
                "description": None,
                "last_synced_at": "2026-11-20T10:00:00Z",
                "last_synced_commit_sha": f"{i:040x}",
                "repo_full_name": "org/demo",
                "created_at": "2026-11-01T10:00:00Z",
            }
            for i, name in enumerate(("calculator", "multiply-local-openai", "triage"), 1)
        ]
    )


TERMINAL = {"finished", "failed", "stopped"}


class PlatformDouble:
    def __init__(self) -> None:
        from tests.e2e.platform_hosted import Hosted
        from tests.e2e.platform_models import Models

        self.state = PlatformState()
        self.hosted = Hosted(self)
        self.models = Models()
        self.lock = threading.Lock()
        double = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                return

            def _body(self) -> Any:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    return json.loads(raw) if raw else None
                except ValueError:
                    return raw.decode(errors="replace")

            def _send(self, status: int, payload: Any, headers: dict[str, str]) -> None:
                if isinstance(payload, bytes):
                    data = payload
                else:
                    data = b"" if payload is None else json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for key, value in headers.items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(data)

            def _drop(self, reset: bool = False) -> None:
                if reset:
                    self.connection.setsockopt(
                        socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0)
                    )
                self.close_connection = True
                self.connection.close()

            def _storage(self) -> None:
                """The storage behind presigned URLs: no credentials, answers chunked in
                small pieces (a cut-short answer when a truncation is armed; injected
                faults by method and path, like the API's)."""
                key = unquote(urlsplit(self.path).path.removeprefix("/storage/"))
                with double.lock:
                    double.state.received.append(
                        Received(self.command, self.path, dict(self.headers), None)
                    )
                if "Authorization" in self.headers:
                    self._send(400, {"error": "presigned URLs take no credentials"}, {})
                    return
                with double.lock:
                    fault = double._take_fault(self.command, urlsplit(self.path).path)
                if fault is not None and fault.kind == "slow":
                    time.sleep(fault.seconds)
                if fault is not None and fault.kind == "status":
                    if self.command == "PUT":  # read the body first, as a server does
                        self.rfile.read(int(self.headers.get("Content-Length") or 0))
                    self._send(fault.status, fault.body or b"", fault.headers)
                    return
                if self.command == "PUT":
                    length = int(self.headers.get("Content-Length") or 0)
                    data = self.rfile.read(length)
                    with double.lock:
                        status, headers = double.hosted.put(key, data)
                    self._send(status, b"", headers)
                    return
                with double.lock:
                    status, data, headers = double.hosted.get(key, self.headers.get("Range"))
                    cut = double.hosted.state.truncate.get(key, 0)
                    if cut:
                        double.hosted.state.truncate[key] = cut - 1
                if cut:  # promise the whole body, send half, hang up
                    self.send_response(status)
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data[: len(data) // 2])
                    self._drop()
                    return
                self.send_response(status)
                self.send_header("Transfer-Encoding", "chunked")
                for name, value in headers.items():
                    self.send_header(name, value)
                self.end_headers()
                for start in range(0, len(data), 700):
                    piece = data[start : start + 700]
                    self.wfile.write(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
                    self.wfile.flush()
                    if start % 7000 == 0:
                        time.sleep(0.001)
                self.wfile.write(b"0\r\n\r\n")

            def _handle(self) -> None:
                if self.path.startswith("/storage/"):
                    self._storage()
                    return
                body = self._body()
                path = urlsplit(self.path).path
                with double.lock:
                    double.state.received.append(
                        Received(self.command, self.path, dict(self.headers), body)
                    )
                    fault = double._take_fault(self.command, path)
                if fault is not None:
                    if fault.kind == "slow":
                        time.sleep(fault.seconds)
                    elif fault.kind in ("drop", "reset"):
                        self._drop(reset=fault.kind == "reset")
                        return
                    elif fault.kind == "status":
                        self._send(fault.status, fault.body, fault.headers)
                        return
                    elif fault.kind == "invalid_json":
                        self._send(200, b"<html>not json</html>", {})
                        return
                with double.lock:
                    status, payload = double.route(self.command, self.path, self.headers, body)
                if fault is not None and fault.kind == "drop_after_create":
                    self._drop()
                    return
                extra = {}
                if double.state.version_status and 200 <= status < 300:
                    extra = {
                        "X-Osmosis-Version-Status": double.state.version_status,
                        "X-Osmosis-Version-Message": "osmosis-client 9.9 is available",
                    }
                self._send(status, payload, extra)

            do_GET = do_POST = do_DELETE = do_PUT = _handle

        self.server = LoopbackHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        from tests.e2e.platform_benchmarks import Benchmarks
        from tests.e2e.platform_hosted import Stored
        from tests.e2e.platform_training import Training

        self.training = Training(self.url)
        self.benchmarks = Benchmarks(self.hosted.state.storage, Stored, self.url)

    # ----------------------------------------------------------------- control

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> PlatformDouble:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    def inject(self, method: str, path: str, kind: str, **kw: Any) -> None:
        with self.lock:
            self.state.faults.append(Fault(method, path, kind, **kw))

    def _take_fault(self, method: str, path: str) -> Fault | None:
        for fault in self.state.faults:
            if fault.count > 0 and fault.method == method and fault.path == path:
                fault.count -= 1
                return fault
        return None

    def requests(self, method: str, prefix: str) -> list[Received]:
        return [r for r in self.state.received if r.method == method and r.path.startswith(prefix)]

    # ------------------------------------------------------------------ routes

    def _authorized(self, headers: Any) -> bool:
        return headers.get("Authorization") == f"Bearer {self.state.token}" and (
            self.state.token not in self.state.revoked
        )

    def _status(self, run: Run) -> str:
        if run.stopped_at is not None:
            return "stopped"
        age = time.monotonic() - run.created
        if age < run.pending_s:
            return "pending"
        if age < run.pending_s + run.running_s:
            return "running"
        return "finished"

    def _results(self, run: Run) -> dict[str, Any] | None:
        if self._status(run) != "finished":
            return None
        rate = self.state.pass_rate
        return {
            "total_runs": 20,
            "sampled_rows": 10,
            "total_dataset_rows": 100,
            "score": rate,
            "pass_rate": rate,
            "graded": 20,
            "passed": int(20 * rate),
            "failed": 20 - int(20 * rate),
            "skipped": 0,
            "pass_threshold": 1.0,
            "total_tokens": 12345,
            "reward_stats": {
                "mean": rate,
                "std": 0.3,
                "min": 0.0,
                "median": 1.0,
                "max": 1.0,
                "pass_at_k": {"1": rate, "3": 0.97},
            },
        }

    def _core(self, run: Run) -> dict[str, Any]:
        status = self._status(run)
        return {
            "id": run.id,
            "name": run.name,
            "status": status,
            "created_at": "2026-11-22T10:00:00Z",
            "started_at": None if status == "pending" else "2026-11-22T10:00:01Z",
            "completed_at": "2026-11-22T10:00:05Z" if status in TERMINAL else None,
            "creator_name": "Ada",
            "creator_email": run.creator,
            "platform_url": f"{self.url}/runs/{run.id}",
        }

    def _row(self, run: Run) -> dict[str, Any]:
        exp = run.body["experiment_config"]
        return {
            **self._core(run),
            "model": {"name": exp["model_path"]},
            "dataset": {"name": exp["dataset"]},
            "rollout": {"name": exp["rollout"]},
            "results": self._results(run),
            "config": None,
        }

    def _detail(self, run: Run) -> dict[str, Any]:
        exp = run.body["experiment_config"]
        ev = run.body.get("evaluation_config", {})
        return {
            "eval_run": self._core(run),
            "config": {
                "model_path": exp["model_path"],
                "limit": ev.get("limit", 200),
                "n": ev.get("n", 1),
                "batch_size": ev.get("batch_size", 1),
                "pass_threshold": ev.get("pass_threshold", 1.0),
                "agent_workflow_timeout_s": 450,
                "grader_timeout_s": 150,
            },
            "results": self._results(run),
            "dataset": {"name": exp["dataset"]},
            "rollout": {"name": exp["rollout"]},
            "entrypoint": exp["entrypoint"],
            "branch": exp.get("branch"),
            "commit_sha": exp.get("commit_sha"),
            "env_config": run.body.get("env_config", {}),
        }

    def _log_entries(self, run: Run) -> list[dict[str, Any]]:
        """The run's log so far, oldest first (a pure function of its age)."""
        age = time.monotonic() - run.created
        if run.stopped_at is not None:
            age = min(age, run.stopped_at - run.created)

        def entry(offset: float, step: str, message: str, **details: Any) -> dict[str, Any]:
            stamp = time.gmtime(run.wall + offset)
            millis = int((run.wall + offset) % 1 * 1000)
            item: dict[str, Any] = {
                "timestamp": time.strftime("%Y-%m-%dT%H:%M:%S", stamp) + f".{millis:03d}Z",
                "level": "info",
                "step": step,
                "message": message,
            }
            if details:
                item["details"] = details
            return item

        entries = [entry(0.0, "queue", "run queued")]
        if age >= run.pending_s:
            entries.append(entry(run.pending_s, "setup", "rollout server started"))
            ran = min(age, run.pending_s + run.running_s) - run.pending_s
            ticks = int(ran / self.state.log_interval_s)
            for k in range(1, ticks + 1):
                entries.append(
                    entry(
                        run.pending_s + k * self.state.log_interval_s,
                        "rollout",
                        f"rollout {k} finished",
                        row=k - 1,
                        reward=1.0 if k % 4 else 0.0,
                    )
                )
        status = self._status(run)
        if status in TERMINAL:
            end = (
                (run.stopped_at - run.created) if run.stopped_at else run.pending_s + run.running_s
            )
            entries.append(entry(end, "finish", f"run {status}"))
        return entries

    def _logs(self, run: Run, query: dict[str, list[str]]) -> tuple[int, Any]:
        try:
            limit = int(query.get("limit", ["50"])[0])
        except ValueError:
            limit = 0
        if not 1 <= limit <= 200 or query.get("direction", ["older"])[0] != "older":
            return 400, {"code": "BAD_REQUEST", "message": "limit must be 1-200, direction older"}
        entries = self._log_entries(run)
        cursor = query.get("cursor", [None])[0]
        end = len(entries) if cursor is None else int(cursor)  # entries before this index
        start = max(0, end - limit)
        return (
            200,
            {  # the newest page first, oldest first within it (as published)
                "logs": entries[start:end],
                "next_cursor": str(start) if start > 0 else None,
            },
        )

    def _find(self, key: str) -> Run | None:
        return self.state.runs.get(key) or next(
            (r for r in self.state.runs.values() if r.name == key), None
        )

    def _scope_error(self, headers: Any) -> tuple[int, Any] | None:
        ws, repo = headers.get("X-Osmosis-Workspace"), headers.get("X-Osmosis-Git")
        if ws and repo:
            return 400, {"code": "WORKSPACE_SCOPE_HEADER_CONFLICT", "message": "both headers"}
        if ws and ws not in {w["name"] for w in self.state.workspaces}:
            return 403, {"code": "WORKSPACE_SCOPE_HEADER_ACCESS_DENIED", "message": "no access"}
        if not ws and not repo:
            return 400, {"code": "GIT_SCOPE_HEADER_REQUIRED", "message": "scope needed"}
        if repo and repo not in {
            (w.get("connected_repo") or {}).get("repo_full_name") for w in self.state.workspaces
        }:
            return 404, {"code": "GIT_REPOSITORY_NOT_CONNECTED", "message": "not connected"}
        return None

    def _register(self, body: dict[str, Any]) -> tuple[int, Any]:
        """Register a rollout server: like the platform, health-check it at once."""
        import urllib.request

        self.state.registered.append(body)
        url = f"http://{body['host']}:{body['port']}/health"
        try:
            with urllib.request.urlopen(url, timeout=5) as response:
                info = json.loads(response.read())
            result: dict[str, Any] = {"server_info": info}
            status = "healthy"
        except OSError as exc:
            result, status = {"error": str(exc)}, "unhealthy"
        return 200, {
            "id": f"rs-{len(self.state.registered)}",
            "status": status,
            "health_check_result": result,
        }

    def _rollouts(self, query: dict[str, list[str]]) -> tuple[int, Any]:
        limit = min(int(query.get("limit", ["50"])[0]), 50, self.state.page_size)
        offset = int(query.get("offset", ["0"])[0])
        rows = self.state.rollouts
        page = rows[offset : offset + limit]
        more = offset + limit < len(rows)
        return 200, {
            "rollouts": page,
            "total_count": len(rows),
            "has_more": more,
            "next_offset": offset + limit if more else None,
        }

    def route(self, method: str, raw_path: str, headers: Any, body: Any) -> tuple[int, Any]:
        s = self.state
        parts = urlsplit(raw_path)
        path, query = parts.path, parse_qs(parts.query)
        if method == "POST" and path == "/api/cli/device/authorize":
            return 200, {
                "device_code": "dc-1",
                "user_code": "ABCD-1234",
                "verification_uri": f"{self.url}/device",
                "verification_uri_complete": f"{self.url}/device?code=ABCD-1234",
                "expires_in": 60,
                "interval": 1,
            }
        if method == "POST" and path == "/api/cli/device/token":
            s.polls += 1
            if s.deny:
                return 400, {"error": "access_denied"}
            if s.polls <= s.approve_after_polls:
                return 400, {"error": "authorization_pending"}
            return 200, {
                "token": s.token,
                "token_id": "tid-e2e",
                "expires_at": "2030-01-01T00:00:00Z",
                "user": s.user,
            }
        if not self._authorized(headers):
            return 401, {"code": "TOKEN_INVALID", "message": "invalid token"}
        if method == "GET" and path == "/api/cli/verify":
            return 200, {
                "token_id": "tid-e2e",
                "expires_at": "2030-01-01T00:00:00Z",
                "user": s.user,
            }
        if method == "GET" and path == "/api/cli/workspaces":
            return 200, {"workspaces": s.workspaces}
        if method == "DELETE" and path.startswith("/api/cli/tokens/"):
            s.revoked.add(s.token)
            return 204, None
        if method == "POST" and path == "/api/cli/rollout-server/register":
            return self._scope_error(headers) or self._register(body)
        if method == "GET" and path == "/api/cli/rollouts":
            return self._scope_error(headers) or self._rollouts(query)
        segments = path.split("/")
        if path.startswith("/api/cli/datasets"):
            return self._scope_error(headers) or self.hosted.datasets(method, segments, query, body)
        if path.startswith("/api/cli/models/"):
            return self._scope_error(headers) or self.models.route(method, path, query)
        key = headers.get("Idempotency-Key")
        if path.startswith("/api/cli/training-runs"):
            return self._scope_error(headers) or self.training.route(method, path, query, body, key)
        if path.startswith("/api/cli/benchmarks"):
            return self._scope_error(headers) or self.benchmarks.catalog(method, path)
        if path.startswith("/api/cli/benchmark-runs"):
            return self._scope_error(headers) or self.benchmarks.route(
                method, path, query, body, key
            )
        if path == "/api/cli/environment-secrets":
            return self._scope_error(headers) or self.hosted.secrets(method, query, body)
        if path.startswith("/api/cli/eval-runs/imports"):
            return self._scope_error(headers) or self.hosted.imports(method, segments, body)
        if not path.startswith("/api/cli/eval-runs"):
            return 404, {"code": "NOT_FOUND", "message": f"no route {method} {path}"}
        scope = self._scope_error(headers)
        if scope is not None:
            return scope
        if method == "POST" and path == "/api/cli/eval-runs":
            missing = self.hosted.secrets_missing(body)
            if missing:
                return 400, {"code": "VALIDATION", "message": f"missing secrets: {missing}"}
            key = headers.get("Idempotency-Key")
            if key and key in s.idempotency:
                run = s.runs[s.idempotency[key]]
                return 200, {
                    k: v
                    for k, v in self._core(run).items()
                    if k in ("id", "name", "status", "created_at", "platform_url")
                }
            run_id = uuid.uuid4().hex[:12]
            name = f"{body['experiment_config']['rollout']}-{len(s.runs) + 1:04d}"
            run = Run(
                run_id, name, time.monotonic(), body, s.user["email"], s.pending_s, s.running_s
            )
            s.runs[run_id] = run
            if key:
                s.idempotency[key] = run_id
            return 201, {
                k: v
                for k, v in self._core(run).items()
                if k in ("id", "name", "status", "created_at", "platform_url")
            }
        if method == "GET" and path == "/api/cli/eval-runs":
            limit = min(int(query.get("limit", ["50"])[0]), 50, s.page_size)
            offset = int(query.get("offset", ["0"])[0])
            runs = sorted(s.runs.values(), key=lambda r: r.created, reverse=True)
            page = runs[offset : offset + limit]
            more = offset + limit < len(runs)
            return 200, {
                "eval_runs": [self._row(r) for r in page],
                "total_count": len(runs),
                "has_more": more,
                "next_offset": offset + limit if more else None,
            }
        run = self._find(unquote(segments[4])) if len(segments) > 4 else None
        if run is None:
            return 404, {"code": "NOT_FOUND", "message": "eval run not found"}
        if method == "GET" and len(segments) == 5:
            return 200, self._detail(run)
        if method == "GET" and segments[5:] == ["metrics"]:
            status = self._status(run)
            if status == "pending":
                return 409, {"code": "CONFLICT", "message": "no metrics while pending"}
            return 200, {
                "status": status,
                "overview": {
                    "duration_ms": 1000,
                    "total_samples": 20,
                    "completed_samples": 10,
                    "graded": 10,
                    "passed": 8,
                    "failed": 2,
                    "skipped": 0,
                    "pass_rate": 0.8,
                    "pass_threshold": 1.0,
                    "tokens_used": 5000,
                },
                "reward_stats": None,
                "pass_at_k": [{"k": 1, "value": 0.8}],
            }
        if method == "GET" and segments[5:] == ["logs"]:
            return self._logs(run, query)
        if segments[5:6] == ["samples"]:
            if self._status(run) != "finished":
                return 409, {"code": "CONFLICT", "message": "outputs exist once the run finished"}
            return self.hosted.samples(run, method, segments[6:], query, body)
        if method == "POST" and segments[5:] == ["retry"]:
            return self.hosted.retry(run, body)
        if method == "POST" and segments[5:] == ["stop"]:
            if self._status(run) in TERMINAL:
                return 409, {"code": "CONFLICT", "message": f"run is already {self._status(run)}"}
            run.stopped_at = time.monotonic()
            return 202, {"ok": True}
        return 404, {"code": "NOT_FOUND", "message": f"no route {method} {path}"}
