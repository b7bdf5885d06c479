"""An independent rollout server double (stdlib only; imports nothing from osmosis-client
or osmosis-ai), written from rollout-protocol.md part B.

Run as a rollout entrypoint (``python main.py``): it serves on
``_OSMOSIS_ROLLOUT_PORT``, reports ``_OSMOSIS_ROLLOUT_INSTANCE_ID`` in ``/health``,
writes ``trajectory.json`` under ``_OSMOSIS_ROLLOUT_ARTIFACT_ROOT``. Its workflow
makes one chat call to the rollout's ``chat_completions_url`` (streaming when
``FAKE_STREAM=1``, parsing the SSE strictly), its grader compares the answer's last
number with the label.

Knobs (environment variables, all optional):
``FAKE_MAX_CONCURRENT`` (default 4; "null" for unbounded), ``FAKE_SLOW_ROWS``
("1,3": those rows sleep ``FAKE_SLOW_SECONDS``, default 30), ``FAKE_RAISE_ROWS``
(the workflow raises), ``FAKE_REMOVE_ROWS`` (``remove_sample``), ``FAKE_NO_REWARD_ROWS``
(success with reward null), ``FAKE_DIE_ON_ROW`` (the process exits at once when that
row starts; once per ``FAKE_DIE_MARK`` file if given), ``FAKE_POST_STATUSES``
("503,503": the first POSTs answer these), ``FAKE_POLL_STATUSES`` (the same for result
polls), ``FAKE_LEASE_SECONDS`` / ``FAKE_WAIT_SECONDS`` (lease and long-poll wait),
``FAKE_WRONG_INSTANCE=1``, ``FAKE_IGNORE_TIMEOUT=1`` (the agent timeout is not enforced),
``FAKE_IGNORE_CANCEL=1`` (a cancel is acknowledged, but the rollout runs on to its end), ``FAKE_CRASH_AT_START`` (a message, then exit 3),
``FAKE_IGNORE_TERM=1`` (SIGTERM ignored), ``FAKE_STREAM=1``, ``FAKE_TOOLS=1`` (offer
add/subtract/multiply/divide tools and answer their calls), ``FAKE_LOG`` (a file: one JSON line per request
the double received, for tests), ``FAKE_PRINT_ENV`` (names whose values it prints),
``FAKE_PRINT_ALL_ENV=1`` (every variable it got, one per line), ``FAKE_SAMPLE_PAD`` (bytes of
padding in every sample's metrics: a large answer), ``FAKE_NESTED_POST_ROWS`` /
``FAKE_NESTED_RESULT_ROWS`` (those rows' ``POST /rollout`` / result answers are 200 with
``[`` × 100,000), ``FAKE_LONG_LINE`` (print one line of that many bytes with the value of the variable
named by ``FAKE_LONG_LINE_SECRET`` in its middle, and one such line cut at the secret's middle
by a 1 MiB+ run of filler), ``FAKE_WIRE`` (serve through ``realwire.Proxy`` — copied beside main.py —
with that wire, e.g. ``piece=700,delay=0.002,chunked=1,encoding=gzip``; ``FAKE_WIRE_KILL=N``:
the first N result answers die mid-body).
"""

from __future__ import annotations

import http.client
import json
import os
import re
import secrets
import signal
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

ENV = os.environ


def _rows(name: str) -> set[int]:
    return {int(x) for x in ENV.get(name, "").split(",") if x.strip()}


def _statuses(name: str) -> list[int]:
    return [int(x) for x in ENV.get(name, "").split(",") if x.strip()]


MAX = None if ENV.get("FAKE_MAX_CONCURRENT") == "null" else int(ENV.get("FAKE_MAX_CONCURRENT", 4))
SLOW, SLOW_SECONDS = _rows("FAKE_SLOW_ROWS"), float(ENV.get("FAKE_SLOW_SECONDS", 30))
RAISE, REMOVE, NO_REWARD = (
    _rows("FAKE_RAISE_ROWS"),
    _rows("FAKE_REMOVE_ROWS"),
    _rows("FAKE_NO_REWARD_ROWS"),
)
DIE_ON = int(ENV["FAKE_DIE_ON_ROW"]) if ENV.get("FAKE_DIE_ON_ROW") else None
PAD = int(ENV.get("FAKE_SAMPLE_PAD") or 0)
PAD_TEXT = secrets.token_hex(PAD // 2 + 1)[:PAD]  # incompressible: gzip keeps it large
NESTED_POST, NESTED_RESULT = _rows("FAKE_NESTED_POST_ROWS"), _rows("FAKE_NESTED_RESULT_ROWS")
NESTED = b"[" * 100_000
POST_STATUSES, POLL_STATUSES = _statuses("FAKE_POST_STATUSES"), _statuses("FAKE_POLL_STATUSES")
LEASE = float(ENV.get("FAKE_LEASE_SECONDS", 120))
WAIT = float(ENV.get("FAKE_WAIT_SECONDS", 30))
ARTIFACTS = ENV.get("_OSMOSIS_ROLLOUT_ARTIFACT_ROOT", "artifacts")
INSTANCE = ENV.get("_OSMOSIS_ROLLOUT_INSTANCE_ID", "")
REQUIRED = (
    "initial_messages",
    "label",
    "metadata",
    "rollout_id",
    "chat_completions_url",
    "llm_api_key",
    "grade",
    "agent_timeout_sec",
    "grader_timeout_sec",
    "extra_fields",
)

lock = threading.Condition()
rollouts: dict[str, dict[str, Any]] = {}
running = 0
slots = threading.Semaphore(MAX) if MAX else None


def log(entry: dict[str, Any]) -> None:
    path = ENV.get("FAKE_LOG")
    if path:
        with lock, open(path, "a") as f:
            f.write(json.dumps(entry) + "\n")


# ------------------------------------------------------------------ the model call


def parse_sse(raw: bytes) -> dict[str, Any]:
    """Strict: every event is a comment (``:``), ``data: <json>``, ``event: error`` +
    data, or ``data: [DONE]`` (last); chunks merge into one message."""
    text = raw.decode("utf-8")
    if not text.endswith("\n\n"):
        raise ValueError("the stream does not end with a blank line")
    message: dict[str, Any] = {"role": "assistant", "content": ""}
    usage = None
    done = False
    for block in text.split("\n\n")[:-1]:
        if done:
            raise ValueError("data after [DONE]")
        lines = block.split("\n")
        if all(line.startswith(":") for line in lines):
            continue
        if lines[0] == "event: error":
            raise RuntimeError("model error in stream: " + lines[1][len("data: ") :])
        if len(lines) != 1 or not lines[0].startswith("data: "):
            raise ValueError(f"bad SSE block {block!r}")
        payload = lines[0][len("data: ") :]
        if payload == "[DONE]":
            done = True
            continue
        chunk = json.loads(payload)
        if chunk.get("object") != "chat.completion.chunk":
            raise ValueError("not a chat.completion.chunk")
        delta = chunk["choices"][0]["delta"]
        message["content"] += delta.get("content") or ""
        for call in delta.get("tool_calls") or []:
            if "index" not in call:
                raise ValueError("a streamed tool call without index")
            message.setdefault("tool_calls", []).append(
                {k: v for k, v in call.items() if k != "index"}
            )
        usage = chunk.get("usage") or usage
    if not done:
        raise ValueError("no [DONE]")
    if usage is None:
        raise ValueError("no usage in the stream")
    return message


def chat(request: dict[str, Any], messages: list[dict[str, Any]], **params: Any) -> dict[str, Any]:
    url = urllib.parse.urlsplit(request["chat_completions_url"] + "/chat/completions")
    stream = ENV.get("FAKE_STREAM") == "1"
    body = {"model": "osmosis-rollout", "messages": messages, **params}
    if stream:
        body["stream"] = True
        body["stream_options"] = {"include_usage": True}
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=600)
    conn.request(
        "POST",
        url.path,
        body=json.dumps(body),
        headers={
            "Content-Type": "application/json",
            "Authorization": f"Bearer {request['llm_api_key']}",
        },
    )
    response = conn.getresponse()
    raw = response.read()
    conn.close()
    if response.status != 200:
        raise RuntimeError(f"model call failed: {response.status} {raw[:200]!r}")
    if stream:
        if not response.getheader("Content-Type", "").startswith("text/event-stream"):
            raise ValueError("a stream without text/event-stream")
        return parse_sse(raw)
    reply = json.loads(raw)
    if reply.get("model") != "osmosis-rollout":
        raise ValueError(f"the model name was not echoed: {reply.get('model')!r}")
    return reply["choices"][0]["message"]


OPERATIONS = {
    "add": float.__add__,
    "subtract": float.__sub__,
    "multiply": float.__mul__,
    "divide": float.__truediv__,
}
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": name,
            "description": f"{name} two numbers",
            "parameters": {
                "type": "object",
                "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
                "required": ["a", "b"],
                "additionalProperties": False,
            },
            "strict": True,
        },
    }
    for name in OPERATIONS
]


def call_tool(call: dict[str, Any]) -> str:
    args = json.loads(call["function"]["arguments"])
    value = OPERATIONS[call["function"]["name"]](float(args["a"]), float(args["b"]))
    return str(int(value)) if value == int(value) else str(value)


def workflow(request: dict[str, Any]) -> list[dict[str, Any]]:
    row = request["extra_fields"]["row_index"]
    if DIE_ON is not None and row == DIE_ON:
        mark = ENV.get("FAKE_DIE_MARK")
        if not mark or not os.path.exists(mark):
            if mark:
                open(mark, "w").close()
            print(f"dying on row {row}", flush=True)
            os._exit(17)
    if row in RAISE:
        raise RuntimeError(f"the workflow failed on row {row}")
    if row in SLOW:
        time.sleep(SLOW_SECONDS)
    messages = list(request["initial_messages"])
    if ENV.get("FAKE_TOOLS") == "1":
        reply = chat(request, messages, tools=TOOLS, temperature=0.0)
        messages.append(reply)
        for call in reply.get("tool_calls") or []:
            messages.append(
                {"role": "tool", "tool_call_id": call["id"], "content": call_tool(call)}
            )
        if reply.get("tool_calls"):
            messages.append(chat(request, messages, tools=TOOLS))
        return messages
    messages.append(chat(request, messages, temperature=0.0))
    return messages


def grade(request: dict[str, Any], messages: list[dict[str, Any]]) -> float | None:
    if request["extra_fields"]["row_index"] in NO_REWARD:
        return None
    answer = next(
        (m.get("content") or "" for m in reversed(messages) if m.get("role") == "assistant"), ""
    )
    numbers = re.findall(r"-?\d+(?:\.\d+)?", answer)
    label = request.get("label")
    return 1.0 if numbers and label is not None and float(numbers[-1]) == float(label) else 0.0


def trajectory(request: dict[str, Any], messages: list[dict[str, Any]], reward: Any) -> None:
    steps: list[dict[str, Any]] = []
    for message in messages:
        if message["role"] == "tool":
            steps[-1].setdefault("observation", {"results": []})["results"].append(
                {"source_call_id": message["tool_call_id"], "content": message["content"]}
            )
            continue
        step: dict[str, Any] = {
            "step_id": len(steps) + 1,
            "source": {"assistant": "agent"}.get(message["role"], message["role"]),
            "message": message.get("content") or "",
        }
        if message.get("tool_calls"):
            step["tool_calls"] = [
                {
                    "tool_call_id": c["id"],
                    "function_name": c["function"]["name"],
                    "arguments": json.loads(c["function"]["arguments"]),
                }
                for c in message["tool_calls"]
            ]
        steps.append(step)
    folder = os.path.join(ARTIFACTS, request["rollout_id"])
    os.makedirs(os.path.join(folder, "artifacts"), exist_ok=True)
    document = {
        "schema_version": "ATIF-v1.7",
        "session_id": request["rollout_id"],
        "agent": {"name": "rollout-server-double", "version": "1"},
        "steps": steps,
        "extra": {
            "osmosis": {
                "rollout_id": request["rollout_id"],
                "label": request["label"],
                "reward": reward,
            }
        },
    }
    with open(os.path.join(folder, "trajectory.json"), "w") as f:
        json.dump(document, f)


def set_status(rid: str, status: str, **fields: Any) -> None:
    with lock:
        entry = rollouts[rid]
        if entry["status"] in ("success", "failure", "cancelled"):
            return
        entry.update(status=status, **fields)
        entry["version"] += 1
        lock.notify_all()


def run_rollout(rid: str) -> None:
    global running
    entry = rollouts[rid]
    request = entry["request"]
    if slots is not None:
        slots.acquire()
    try:
        with lock:
            running += 1
        if entry["status"] == "cancelled":
            return
        set_status(rid, "running")
        timeout = (
            None if ENV.get("FAKE_IGNORE_TIMEOUT") == "1" else request.get("agent_timeout_sec")
        )
        box: dict[str, Any] = {}

        def target() -> None:
            try:
                box["messages"] = workflow(request)
            except Exception as exc:
                box["error"] = exc

        worker = threading.Thread(target=target, daemon=True)
        worker.start()
        worker.join(timeout)
        if worker.is_alive():
            set_status(
                rid,
                "failure",
                err_category="timeout",
                err_message=f"agent workflow timed out after {timeout}s",
            )
            return
        if "error" in box:
            set_status(
                rid,
                "failure",
                err_category="agent_error",
                err_message=f"{type(box['error']).__name__}: {box['error']}",
            )
            return
        messages = box["messages"]
        set_status(rid, "grading")
        if request["label"] is None and request["metadata"] is None:
            set_status(rid, "failure", err_category=None, err_message=None)
            return
        reward = grade(request, messages)
        row = request["extra_fields"]["row_index"]
        trajectory(request, messages, reward)
        sample = {
            "messages": messages,
            "label": request["label"],
            "reward": reward,
            "remove_sample": row in REMOVE,
            "metrics": {"pad": PAD_TEXT} if PAD else {},
            "extra_fields": request["extra_fields"],
        }
        set_status(rid, "success", sample=sample)
    finally:
        with lock:
            running -= 1
        if slots is not None:
            slots.release()


def lease_watchdog() -> None:
    while True:
        time.sleep(0.2)
        now = time.monotonic()
        with lock:
            expired = [
                rid
                for rid, e in rollouts.items()
                if e["status"] in ("queued", "running", "grading") and now - e["polled"] > LEASE
            ]
        for rid in expired:
            set_status(
                rid,
                "failure",
                err_category="lease_expired",
                err_message="the polling lease expired",
            )


# ------------------------------------------------------------------ HTTP


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _send(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
        raw = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(raw)

    def _raw(self, status: int, raw: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def _body(self) -> Any:
        length = int(self.headers.get("Content-Length") or 0)
        return json.loads(self.rfile.read(length) or b"null")

    def do_GET(self) -> None:
        if self.path == "/health":
            with lock:
                queued = sum(e["status"] == "queued" for e in rollouts.values())
                active = running
            instance = "someone-else" if ENV.get("FAKE_WRONG_INSTANCE") == "1" else INSTANCE
            self._send(
                200,
                {
                    "status": "ok",
                    "concurrency": {"max_concurrent": MAX, "queued": queued, "running": active},
                    "instance_id": instance,
                    "process_id": str(os.getpid()),
                    "lifecycle": {"accepting_rollouts": True, "active_rollouts": active},
                },
            )
            return
        match = re.fullmatch(r"/rollout/([^/]+)/result", self.path)
        if not match:
            self._send(404, {"detail": "Not Found"})
            return
        rid = urllib.parse.unquote(match.group(1))
        lease = self.headers.get("X-Osmosis-Rollout-Lease")
        log({"route": "result", "id": rid})
        if lease is None:
            self._send(
                422,
                {
                    "detail": [
                        {"loc": ["header", "x-osmosis-rollout-lease"], "msg": "Field required"}
                    ]
                },
            )
            return
        with lock:
            status = POLL_STATUSES.pop(0) if POLL_STATUSES else None
        if status is not None:
            self._send(status, {"detail": "injected"})
            return
        with lock:
            entry = rollouts.get(rid)
            if entry is None:
                self._send(404, {"detail": "unknown rollout"})
                return
            if not secrets.compare_digest(lease, entry["lease"]):
                self._send(403, {"detail": "invalid polling lease"})
                return
            entry["polled"] = time.monotonic()
            seen = entry["version"]
            deadline = time.monotonic() + WAIT
            while (
                entry["version"] == seen
                and entry["status"] not in ("success", "failure", "cancelled")
                and time.monotonic() < deadline
            ):
                lock.wait(max(0.0, deadline - time.monotonic()))
            entry["polled"] = time.monotonic()
            if entry["request"]["extra_fields"]["row_index"] in NESTED_RESULT:
                self._raw(200, NESTED)
                return
            body = {
                "rollout_id": rid,
                "status": entry["status"],
                "sample": entry.get("sample"),
                "err_message": entry.get("err_message"),
                "err_category": entry.get("err_category"),
            }
        self._send(200, body)

    def do_POST(self) -> None:
        if self.path == "/rollout":
            body = self._body()
            log({"route": "rollout", "body": body})
            with lock:
                status = POST_STATUSES.pop(0) if POST_STATUSES else None
            if status is not None:
                self._send(status, {"detail": "injected"})
                return
            missing = [k for k in REQUIRED if not isinstance(body, dict) or k not in body]
            if missing:
                self._send(
                    422,
                    {"detail": [{"loc": ["body", k], "msg": "Field required"} for k in missing]},
                )
                return
            rid = body["rollout_id"]
            with lock:
                if rid in rollouts:
                    self._send(409, {"detail": f"rollout {rid} already registered"})
                    return
                lease = secrets.token_hex(16)
                rollouts[rid] = {
                    "request": body,
                    "status": "queued",
                    "lease": lease,
                    "version": 0,
                    "polled": time.monotonic(),
                }
            threading.Thread(target=run_rollout, args=(rid,), daemon=True).start()
            if body["extra_fields"]["row_index"] in NESTED_POST:
                self._raw(202, NESTED)
                return
            self._send(
                202,
                {
                    "rollout_id": rid,
                    "status": "queued",
                    "polling_lease_token": lease,
                    "result_wait_timeout_sec": WAIT,
                    "polling_lease_timeout_sec": LEASE,
                },
            )
            return
        if self.path == "/rollout/cancel":
            body = self._body()
            log({"route": "cancel", "body": body})
            with lock:
                if body.get("all"):
                    ids = list(rollouts)
                elif "prefix" in body:
                    ids = [r for r in rollouts if r.startswith(body["prefix"])]
                else:
                    ids = list(body.get("ids") or [])
                dispositions = {}
                for rid in ids:
                    entry = rollouts.get(rid)
                    if entry is None or entry["status"] in ("success", "failure", "cancelled"):
                        dispositions[rid] = "not_found"
                        continue
                    dispositions[rid] = (
                        "cancelled_queued" if entry["status"] == "queued" else "cancelled_running"
                    )
                    if ENV.get("FAKE_IGNORE_CANCEL") == "1":
                        continue  # the race: it finishes anyway
                    entry["status"] = "cancelled"
                    entry["version"] += 1
                lock.notify_all()
            self._send(200, {"dispositions": dispositions})
            return
        self._send(404, {"detail": "Not Found"})


class _Server(ThreadingHTTPServer):
    # A non-blocking listener: a connection reset between socketserver's select and
    # its accept() raises BlockingIOError (skipped) instead of blocking the serve loop
    # until the next connection. Accepted connections stay blocking.
    daemon_threads = True

    def server_activate(self) -> None:
        super().server_activate()
        self.socket.setblocking(False)


def main() -> None:
    if ENV.get("FAKE_CRASH_AT_START"):
        print(ENV["FAKE_CRASH_AT_START"], flush=True)
        sys.exit(3)
    for name in ENV.get("FAKE_PRINT_ENV", "").split(","):
        if name:
            print(f"{name}={ENV.get(name)}", flush=True)
    if ENV.get("FAKE_PRINT_ALL_ENV") == "1":
        for name in sorted(ENV):
            print(f"env {name}={ENV[name]}", flush=True)
    if ENV.get("FAKE_LONG_LINE"):
        size = int(ENV["FAKE_LONG_LINE"])
        secret = ENV.get(ENV.get("FAKE_LONG_LINE_SECRET", ""), "")
        half = "x" * (size // 2)
        sys.stdout.write(f"{half}Authorization: Bearer {secret}{half}\n")
        filler = "y" * ((1 << 20) - 25)  # the secret straddles the 1 MiB a line may keep
        sys.stdout.write(f"{filler} token={secret} and more\n")
        sys.stdout.flush()
    if ENV.get("FAKE_IGNORE_TERM") == "1":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    threading.Thread(target=lease_watchdog, daemon=True).start()
    port = int(ENV["_OSMOSIS_ROLLOUT_PORT"])
    if ENV.get("FAKE_WIRE"):
        import realwire  # copied beside this file by the test

        server = _Server(("127.0.0.1", 0), Handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        proxy = realwire.Proxy(
            f"http://127.0.0.1:{server.server_address[1]}",
            realwire.from_env(ENV["FAKE_WIRE"]),
            port=port,
        )
        proxy.kill_next(int(ENV.get("FAKE_WIRE_KILL") or 0), path="/result")
        print(f"rollout server double listening on {port} (through a real-wire proxy)", flush=True)
        proxy.serve_forever()
        return
    server = _Server(("127.0.0.1", port), Handler)
    print(f"rollout server double listening on {server.server_address[1]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
