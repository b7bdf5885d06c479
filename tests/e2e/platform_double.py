"""A small real HTTP platform on 127.0.0.1 for end-to-end tests (stdlib only).

It speaks the routes of platform-api.md that the CLI uses and records every
request it receives, so tests can assert on headers and bodies.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Received:
    method: str
    path: str
    headers: dict[str, str]
    body: Any


@dataclass
class PlatformState:
    token: str = "tok-e2e-secret"
    user: dict[str, Any] = field(
        default_factory=lambda: {"id": "u1", "email": "ada@example.com", "name": "Ada"}
    )
    workspaces: list[dict[str, Any]] = field(
        default_factory=lambda: [
            {"id": "w1", "name": "acme", "role": "admin", "connected_repo": None},
            {"id": "w2", "name": "beta", "role": "member", "connected_repo": None},
        ]
    )
    approve_after_polls: int = 2
    polls: int = 0
    revoked: set[str] = field(default_factory=set)
    received: list[Received] = field(default_factory=list)


class PlatformDouble:
    def __init__(self) -> None:
        self.state = PlatformState()
        self.lock = threading.Lock()
        double = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # keep test output clean
                return

            def _body(self) -> Any:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    return json.loads(raw) if raw else None
                except ValueError:
                    return raw.decode(errors="replace")

            def _send(self, status: int, payload: Any = None) -> None:
                data = b"" if payload is None else json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _handle(self) -> None:
                body = self._body()
                with double.lock:
                    double.state.received.append(
                        Received(self.command, self.path, dict(self.headers), body)
                    )
                    status, payload = double.route(self.command, self.path, self.headers, body)
                self._send(status, payload)

            do_GET = do_POST = do_DELETE = _handle

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

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

    def _authorized(self, headers: Any) -> bool:
        return headers.get("Authorization") == f"Bearer {self.state.token}" and (
            self.state.token not in self.state.revoked
        )

    def route(self, method: str, path: str, headers: Any, body: Any) -> tuple[int, Any]:
        s = self.state
        if method == "POST" and path == "/api/cli/device/authorize":
            return 200, {
                "device_code": "dc-1",
                "user_code": "ABCD-1234",
                "verification_uri": f"{self.url}/device",
                "expires_in": 60,
                "interval": 1,
            }
        if method == "POST" and path == "/api/cli/device/token":
            s.polls += 1
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
        return 404, {"code": "NOT_FOUND", "message": f"no route {method} {path}"}
