"""The hosted-workflow half of the loopback platform double (stdlib only, nothing from
osmosis-client): datasets with presigned single and multipart uploads, stored secrets,
a finished run's samples (manifest, download URLs, files), retries and local-run
imports — and the storage behind the presigned URLs, which answers like a real one:
chunked, in small pieces, honouring ``Range``.

The run outputs are made from the dataset the run names (uploaded here first): the
first ``limit`` rows, ``n`` attempts each, reward 1 when the row's ground truth is even.
"""

from __future__ import annotations

import hashlib
import json
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

PART_SIZE = 64 * 1024  # uploads above this go multipart (small, so tests exercise it)


@dataclass
class Stored:
    data: bytes
    content_type: str = "application/octet-stream"


@dataclass
class HostedState:
    datasets: dict[str, dict[str, Any]] = field(default_factory=dict)  # name → record
    storage: dict[str, Stored] = field(default_factory=dict)  # key → bytes
    #: a workspace secret the demo config needs is already stored (journeys may replace it)
    secrets: list[dict[str, Any]] = field(
        default_factory=lambda: [
            {"id": "sec-0", "name": "OPENAI_API_KEY", "scope": "workspace", "_value": "sk-stored"}
        ]
    )
    imports: dict[str, dict[str, Any]] = field(default_factory=dict)
    retries: list[dict[str, Any]] = field(default_factory=list)
    #: storage keys whose next N GETs are cut short after half the body
    truncate: dict[str, int] = field(default_factory=dict)


class Hosted:
    """Routes of the hosted workflow; ``double`` gives the runs, the URL and the scope."""

    def __init__(self, double: Any) -> None:
        self.double = double
        self.state = HostedState()
        self.part_size = PART_SIZE

    # ------------------------------------------------------------ datasets

    def datasets(self, method: str, segments: list[str], query: Any, body: Any) -> tuple[int, Any]:
        s = self.state
        if method == "GET" and len(segments) == 4:
            records = sorted(s.datasets.values(), key=lambda r: r["created_at"], reverse=True)
            return 200, self._page("datasets", [self._public(r) for r in records], query)
        if method == "POST" and len(segments) == 4:
            name, size = body["file_name"], int(body["file_size"])
            existing = s.datasets.get(name)
            if existing and body.get("overwrite_dataset_id") != existing["id"]:
                return 409, {
                    "code": "CONFLICT",
                    "message": "exists",
                    "existing_dataset_id": existing["id"],
                }
            record = {
                "id": f"ds-{uuid.uuid4().hex[:8]}",
                "file_name": name,
                "file_size": size,
                "status": "pending",
                "file_format": body["extension"],
                "row_count": None,
                "data_preview": None,
                "created_at": time.strftime("%Y-%m-%dT%H:%M:%SZ"),
                "creator_name": "Ada",
            }
            s.datasets[name] = record
            return 201, {
                **self._public(record),
                "upload": self._upload_plan(f"datasets/{record['id']}", size),
            }
        record = self._dataset(unquote_segment(segments[4])) if len(segments) > 4 else None
        if record is None:
            return 404, {"code": "NOT_FOUND", "message": "dataset not found"}
        tail = segments[5:]
        if method == "GET" and not tail:
            return 200, {k: v for k, v in record.items() if not k.startswith("_")}
        if method == "POST" and tail == ["complete"]:
            return self._complete_dataset(record, body)
        if method == "POST" and tail == ["abort"]:
            record["status"] = "cancelled"
            return 200, {}
        if method == "GET" and tail == ["download"]:
            key = f"datasets/{record['id']}"
            return 200, {
                "presignedUrl": self._url(key),
                "expiresIn": 300,
                "fileName": record["file_name"],
            }
        if method == "GET" and tail == ["logs"]:
            return 200, {
                "logs": [
                    {
                        "timestamp": record["created_at"],
                        "level": "info",
                        "step": "process",
                        "message": f"{record['status']}",
                    }
                ],
                "next_cursor": None,
            }
        return 404, {"code": "NOT_FOUND", "message": "no such dataset route"}

    def _complete_dataset(self, record: dict[str, Any], body: Any) -> tuple[int, Any]:
        key = f"datasets/{record['id']}"
        parts = body.get("parts")
        if parts:  # assemble in part order, as S3 does
            numbers = [p["PartNumber"] for p in parts]
            if numbers != sorted(numbers):
                return 400, {"code": "VALIDATION", "message": "parts out of order"}
            data = b"".join(self.state.storage.pop(f"{key}/part{n}").data for n in numbers)
            self.state.storage[key] = Stored(data)
        stored = self.state.storage.get(key)
        if stored is None or len(stored.data) != record["file_size"]:
            return 400, {"code": "VALIDATION", "message": "upload incomplete"}
        rows = [json.loads(line) for line in stored.data.decode().splitlines() if line.strip()]
        record.update(status="uploaded", row_count=len(rows), data_preview=rows[:10])
        record["_rows"] = rows
        return 200, {"status": "uploaded"}

    def _dataset(self, key: str) -> dict[str, Any] | None:
        return self.state.datasets.get(key) or next(
            (r for r in self.state.datasets.values() if r["id"] == key), None
        )

    @staticmethod
    def _public(record: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in record.items() if not k.startswith("_") and k != "data_preview"}

    def _upload_plan(self, key: str, size: int) -> dict[str, Any]:
        if size <= self.part_size:
            return {
                "method": "simple",
                "presigned_url": self._url(key),
                "expires_in": 300,
                "upload_headers": {"Content-Type": "application/octet-stream"},
            }
        total = -(-size // self.part_size)
        return {
            "method": "multipart",
            "part_size": self.part_size,
            "total_parts": total,
            "presigned_urls": [
                {"part_number": n, "presigned_url": self._url(f"{key}/part{n}")}
                for n in range(1, total + 1)
            ],
        }

    # ------------------------------------------------------------- secrets

    def secrets(self, method: str, query: Any, body: Any) -> tuple[int, Any]:
        s = self.state
        if method == "GET":
            scope = query.get("scope", ["all"])[0]
            found = [x for x in s.secrets if scope == "all" or x["scope"] == scope]
            return 200, self._page("environment_secrets", found, query)
        name, scope = body.get("name"), body.get("scope")
        if scope not in ("user", "workspace"):
            return 400, {"code": "VALIDATION", "message": "scope must be user or workspace"}
        existing = next((x for x in s.secrets if x["name"] == name and x["scope"] == scope), None)
        if method == "POST":
            if not body.get("value"):
                return 400, {"code": "VALIDATION", "message": "value required"}
            if existing is None:
                existing = {
                    "id": f"sec-{len(s.secrets) + 1}",
                    "name": name,
                    "scope": scope,
                    "created_at": "2026-11-24T10:00:00Z",
                    "creator_name": "Ada",
                }
                s.secrets.append(existing)
            existing.update(
                updated_at="2026-11-24T10:00:00Z", updater_name="Ada", _value=body["value"]
            )
            return 200, {k: v for k, v in existing.items() if not k.startswith("_")}
        if method == "DELETE":
            if existing is None:
                return 404, {"code": "NOT_FOUND", "message": "no such secret"}
            s.secrets.remove(existing)
            return 200, {}
        return 405, {"code": "METHOD", "message": method}

    def secrets_missing(self, body: dict[str, Any]) -> list[str]:
        """A create names secrets neither stored nor provided: the platform refuses it."""
        section = body.get("secrets") or {}
        provided = section.get("provided") or {}
        stored = {x["name"] for x in self.state.secrets}
        return [n for n in section.get("required", []) if n not in provided and n not in stored]

    # -------------------------------------------------------------- samples

    def outputs(self, run: Any) -> dict[str, bytes]:
        """The files a finished run's outputs are made of."""
        exp, ev = run.body["experiment_config"], run.body.get("evaluation_config", {})
        record = self.state.datasets.get(exp["dataset"]) or {}
        rows = record.get("_rows") or []
        rows = rows[: ev.get("limit", len(rows))]
        n = ev.get("n", 1)
        lines, files = [], {}
        for r, row in enumerate(rows):
            for k in range(n):
                truth = str(row.get("ground_truth", "0")).lstrip("-")
                reward = 1.0 if truth.isdigit() and int(truth) % 2 == 0 else 0.0
                lines.append(
                    {
                        "row_index": r,
                        "run_index": k,
                        "rollout_id": uuid.uuid5(uuid.NAMESPACE_URL, f"{run.id}/{r}/{k}").hex,
                        "status": "success",
                        "reward": reward,
                        "tokens": 10,
                        "duration_ms": 5,
                    }
                )
                steps = [
                    {"step_id": 1, "source": "user", "message": row["user_prompt"]},
                    {"step_id": 2, "source": "agent", "message": f"answer {r}"},
                ]
                files[f"trajectories/row_{r}_run_{k}.json"] = json.dumps(
                    {"schema_version": "ATIF-v1.4", "steps": steps}
                ).encode()
        files["summary.jsonl"] = "".join(json.dumps(x) + "\n" for x in lines).encode()
        passed = sum(x["reward"] >= 1.0 for x in lines)
        files["metrics.json"] = json.dumps(
            {
                "eval_run": {"id": run.id, "name": run.name, "status": "finished"},
                "summary": {"total_samples": len(lines), "passed": passed, "pass_threshold": 1.0},
            }
        ).encode()
        files["logs.txt"] = b"2026-11-24T10:00:00Z INFO [run] finished\n"
        return files

    def samples(
        self, run: Any, method: str, tail: list[str], query: Any, body: Any
    ) -> tuple[int, Any]:
        files = self.outputs(run)
        for path, data in files.items():
            self.state.storage[f"runs/{run.id}/{path}"] = Stored(data)
        if method == "GET" and tail == ["manifest"]:
            types = set(query.get("types", ["metrics,trajectories"])[0].split(","))
            kinds = {"metrics.json": "metrics", "logs.txt": "logs", "summary.jsonl": "trajectories"}
            listed = [
                {"path": p, "size": len(d), "sha256": hashlib.sha256(d).hexdigest()}
                for p, d in sorted(files.items())
                if kinds.get(p, "trajectories") in types
            ]
            return 200, {"files": listed, "totals": {"files": len(listed)}}
        if method == "POST" and tail == ["download-urls"]:
            items = body.get("items", [])
            if len(items) > 500:
                return 400, {"code": "VALIDATION", "message": "at most 500"}
            return 200, {
                "items": [
                    {"path": i["path"], "url": self._url(f"runs/{run.id}/{i['path']}")}
                    for i in items
                ]
            }
        return 404, {"code": "NOT_FOUND", "message": "no such samples route"}

    def retry(self, run: Any, body: Any) -> tuple[int, Any]:
        provided = (run.body.get("secrets") or {}).get("provided") or {}
        if provided and set((body or {}).get("secrets") or {}) != set(provided):
            return 400, {
                "code": "VALIDATION",
                "message": "run secrets needed",
                "run_secret_names": sorted(provided),
            }
        self.state.retries.append({"run": run.name, "body": body})
        run.created = time.monotonic()
        return 200, {
            "id": run.id,
            "name": run.name,
            "status": "pending",
            "workflow_id": f"wf-{len(self.state.retries)}",
            "retryable_samples": 0,
            "platform_url": f"{self.double.url}/runs/{run.id}",
        }

    # -------------------------------------------------------------- imports

    def imports(self, method: str, segments: list[str], body: Any) -> tuple[int, Any]:
        s = self.state
        if method == "POST" and len(segments) == 5:  # /api/cli/eval-runs/imports
            session = next(
                (
                    x
                    for x in s.imports.values()
                    if x["body"]["local_run_id"] == body["local_run_id"]
                ),
                None,
            )
            if session and session["status"] == "finalized" and not body.get("reimport"):
                return 409, {"code": "CONFLICT", "message": "this local run was imported already"}
            if session is None or session["status"] == "finalized":
                session = {"id": f"imp-{len(s.imports) + 1}", "body": body, "status": "uploading"}
                s.imports[session["id"]] = session
            return 200, self._session(session)
        session = s.imports.get(segments[5]) if len(segments) > 5 else None
        if session is None:
            return 404, {"code": "NOT_FOUND", "message": "no such import"}
        tail = segments[6:]
        declared = {f["path"]: f for f in session["body"]["files"]}
        if tail == ["uploads"]:
            missing = [p for p in body["paths"] if not self._imported(session, p)]
            return 200, {
                "files": [
                    {
                        **declared[p],
                        "upload": self._upload_plan(
                            f"imports/{session['id']}/{p}", declared[p]["size"]
                        ),
                    }
                    for p in missing
                ]
            }
        if tail == ["uploads", "complete"]:
            key = f"imports/{session['id']}/{body['path']}"
            if body.get("parts"):  # assemble the parts in order, as S3 does
                numbers = [p["part_number"] for p in body["parts"]]
                chunks = [s.storage.pop(f"{key}/part{n}").data for n in numbers]
                s.storage[key] = Stored(b"".join(chunks))
            return 200, {"path": body["path"], "state": "uploaded"}
        if tail == ["finalize"]:
            bad = [p for p in declared if not self._imported(session, p)]
            if bad:
                return 400, {"code": "VALIDATION", "message": f"missing or wrong: {bad[:3]}"}
            session["status"] = "finalized"
            session["run_name"] = f"imported-{session['body']['run']['name']}"
            return 200, self._session(session)
        return 404, {"code": "NOT_FOUND", "message": "no such import route"}

    def _imported(self, session: dict[str, Any], path: str) -> bool:
        declared = next(f for f in session["body"]["files"] if f["path"] == path)
        stored = self.state.storage.get(f"imports/{session['id']}/{path}")
        return stored is not None and hashlib.sha256(stored.data).hexdigest() == declared["sha256"]

    def _session(self, session: dict[str, Any]) -> dict[str, Any]:
        files = session["body"]["files"]
        done = [f for f in files if self._imported(session, f["path"])]
        answer = {
            "session_id": session["id"],
            "status": session["status"],
            "expected_files": len(files),
            "uploaded_files": len(done),
            "files": [{**f, "state": "uploaded" if f in done else "pending"} for f in files],
        }
        if session["status"] == "finalized":
            answer.update(
                eval_run_id=f"run-{session['id']}",
                eval_run_name=session["run_name"],
                platform_url=f"{self.double.url}/runs/{session['id']}",
            )
        return answer

    # -------------------------------------------------------------- storage

    def put(self, key: str, data: bytes) -> tuple[int, dict[str, str]]:
        self.state.storage[key] = Stored(data)
        return 200, {
            "ETag": f'"{hashlib.md5(data).hexdigest()}"'
        }  # the ETag S3 gives a simple upload

    def get(self, key: str, range_header: str | None) -> tuple[int, bytes, dict[str, str]]:
        stored = self.state.storage.get(key)
        if stored is None:
            return 404, b"<Error>NoSuchKey</Error>", {}
        data, status, headers = stored.data, 200, {}
        if range_header and range_header.startswith("bytes="):
            start = int(range_header[6:].split("-")[0])
            data, status = data[start:], 206
            headers["Content-Range"] = f"bytes {start}-{len(stored.data) - 1}/{len(stored.data)}"
        return status, data, headers

    # ------------------------------------------------------------- helpers

    def _url(self, key: str) -> str:
        return f"{self.double.url}/storage/{key}"

    def _page(self, key: str, items: list[Any], query: Any) -> dict[str, Any]:
        limit = min(int(query.get("limit", ["50"])[0]), 50, self.double.state.page_size)
        offset = int(query.get("offset", ["0"])[0])
        page = [
            {k: v for k, v in x.items() if not k.startswith("_")}
            for x in items[offset : offset + limit]
        ]
        more = offset + limit < len(items)
        return {
            key: page,
            "total_count": len(items),
            "has_more": more,
            "next_offset": offset + limit if more else None,
        }


def unquote_segment(segment: str) -> str:
    from urllib.parse import unquote

    return unquote(segment)
