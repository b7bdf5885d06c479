"""A loopback double of the Hugging Face Hub's routes that ``huggingface_hub`` calls to
create a dataset (or static Space) repository, commit files to it, list it and download
from it
(``HF_ENDPOINT`` points the real client here). Files are kept in memory; a write needs
the token (``Authorization: Bearer``), a private repository answers only with it.
Imports nothing from the project."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

TOKEN = "hf_loopback_token"


def git_oid(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


@dataclass
class Repo:
    private: bool
    kind: str = "dataset"  # or "space"
    sdk: str | None = None  # a space's
    files: dict[str, bytes] = field(default_factory=dict)
    commits: list[str] = field(default_factory=list)


@dataclass
class Hub:
    url: str = ""
    repos: dict[str, Repo] = field(default_factory=dict)
    requests: list[str] = field(default_factory=list)
    cards: list[str] = field(default_factory=list)  # every card validated

    def app(self) -> web.Application:
        app = web.Application(middlewares=[self._log])
        base = "/api/{kind:datasets|spaces}/{ns}/{name}"
        app.add_routes(
            [
                web.post("/api/repos/create", self._create),
                web.post("/api/validate-yaml", self._validate_yaml),
                web.post(base + "/preupload/{rev}", self._preupload),
                web.post(base + "/commit/{rev}", self._commit),
                web.get(base + "/tree/{rev}", self._tree),
                web.get(base + "/tree/{rev}/{path:.*}", self._tree),
                web.get(base, self._info),
                web.get(base + "/revision/{rev}", self._info),
                web.route(
                    "*",
                    "/{kind:datasets|spaces}/{ns}/{name}/resolve/{rev}/{path:.*}",
                    self._resolve,
                ),
            ]
        )
        return app

    @web.middleware
    async def _log(self, request: web.Request, handler: Any) -> web.StreamResponse:
        self.requests.append(f"{request.method} {request.path}")
        return await handler(request)

    def _authorized(self, request: web.Request) -> bool:
        return request.headers.get("Authorization") == f"Bearer {TOKEN}"

    def _repo(self, request: web.Request) -> tuple[str, Repo]:
        repo_id = f"{request.match_info['ns']}/{request.match_info['name']}"
        found = self.repos.get(repo_id)
        if found is None or (found.private and not self._authorized(request)):
            raise web.HTTPNotFound(
                text=json.dumps({"error": "Repository not found"}),
                headers={"X-Error-Code": "RepoNotFound"},
                content_type="application/json",
            )
        return repo_id, found

    async def _create(self, request: web.Request) -> web.Response:
        if not self._authorized(request):
            return web.json_response({"error": "Invalid credentials"}, status=401)
        body = await request.json()
        repo_id = f"{body.get('organization') or 'me'}/{body['name']}"
        if "/" in body["name"]:
            repo_id = body["name"]
        kind = body.get("type")
        if kind not in ("dataset", "space") or (kind == "space" and not body.get("sdk")):
            return web.json_response({"error": "a dataset, or a space with its sdk"}, status=400)
        if repo_id in self.repos:
            return web.json_response(
                {
                    "error": f"You already created this {kind} repo",
                    "url": f"{self.url}/{kind}s/{repo_id}",
                },
                status=409,
            )
        # "visibility" (huggingface_hub 1.x and later), "private" before it
        private = body.get("visibility", "private" if body.get("private") else "public")
        self.repos[repo_id] = Repo(private=private != "public", kind=kind, sdk=body.get("sdk"))
        return web.json_response({"url": f"{self.url}/{kind}s/{repo_id}", "name": repo_id})

    async def _validate_yaml(self, request: web.Request) -> web.Response:
        """A card's front matter: YAML, a mapping; each config named, each of its data
        files a split and a path (what the Hub checks of ``configs``)."""
        import yaml

        content = (await request.json())["content"]
        errors = []
        try:
            front = yaml.safe_load(content.split("---")[1]) if content.startswith("---") else {}
        except yaml.YAMLError as exc:
            front, errors = None, [{"message": f"not YAML: {exc}"}]
        if front is not None and not isinstance(front, dict):
            errors.append({"message": "the metadata is not a mapping"})
        for config in (front or {}).get("configs", []) if isinstance(front, dict) else []:
            files = config.get("data_files") if isinstance(config, dict) else None
            if not isinstance(config, dict) or not config.get("config_name"):
                errors.append({"message": "a config without config_name"})
            elif not isinstance(files, list) or not all(
                isinstance(f, dict) and f.get("split") and f.get("path") for f in files
            ):
                errors.append({"message": f"{config['config_name']}: bad data_files"})
        self.cards.append(content)
        if errors:
            return web.json_response({"errors": errors}, status=400)
        return web.json_response({"warnings": []})

    async def _preupload(self, request: web.Request) -> web.Response:
        _, repo = self._repo(request)
        body = await request.json()
        return web.json_response(
            {
                "files": [
                    {
                        "path": f["path"],
                        "uploadMode": "regular",
                        "shouldIgnore": False,
                        "oid": git_oid(repo.files[f["path"]]) if f["path"] in repo.files else None,
                    }
                    for f in body["files"]
                ]
            }
        )

    async def _commit(self, request: web.Request) -> web.Response:
        if not self._authorized(request):
            return web.json_response({"error": "Invalid credentials"}, status=401)
        repo_id, repo = self._repo(request)
        for line in (await request.read()).splitlines():
            item = json.loads(line)
            if item["key"] == "file":
                value = item["value"]
                assert value.get("encoding") == "base64", value.keys()
                repo.files[value["path"]] = base64.b64decode(value["content"])
            elif item["key"] == "deletedFile":
                repo.files.pop(item["value"]["path"], None)
            elif item["key"] != "header":
                return web.json_response({"error": f"not served here: {item['key']}"}, status=400)
        oid = hashlib.sha1(
            json.dumps(sorted(repo.files)).encode() + str(len(repo.commits)).encode()
        ).hexdigest()
        repo.commits.append(oid)
        return web.json_response(
            {"commitUrl": f"{self.url}/datasets/{repo_id}/commit/{oid}", "commitOid": oid}
        )

    async def _tree(self, request: web.Request) -> web.Response:
        _, repo = self._repo(request)
        under = request.match_info.get("path", "").strip("/")
        return web.json_response(
            [
                {"type": "file", "oid": git_oid(data), "size": len(data), "path": path}
                for path, data in sorted(repo.files.items())
                if not under or path.startswith(under + "/")
            ]
        )

    async def _info(self, request: web.Request) -> web.Response:
        repo_id, repo = self._repo(request)
        return web.json_response(
            {
                "id": repo_id,
                "private": repo.private,
                "sha": repo.commits[-1] if repo.commits else "0" * 40,
                "siblings": [{"rfilename": p} for p in sorted(repo.files)],
            }
        )

    async def _resolve(self, request: web.Request) -> web.Response:
        _, repo = self._repo(request)
        data = repo.files.get(request.match_info["path"])
        if data is None:
            return web.json_response(
                {"error": "Entry not found"}, status=404, headers={"X-Error-Code": "EntryNotFound"}
            )
        headers = {
            "ETag": f'"{git_oid(data)}"',
            "X-Repo-Commit": repo.commits[-1],
            "Content-Length": str(len(data)),
        }
        if request.method == "HEAD":
            return web.Response(headers=headers)
        return web.Response(body=data, headers=headers)


@contextmanager
def running_hub() -> Iterator[Hub]:
    """The double on a free loopback port, served from a thread of its own (its loop is
    made, run and closed there: the caller's thread may have a loop of its own)."""
    hub = Hub()
    loop = asyncio.new_event_loop()
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    hub.url = f"http://127.0.0.1:{port}"
    runner = web.AppRunner(hub.app())
    ready = threading.Event()

    def serve() -> None:
        asyncio.set_event_loop(loop)
        loop.run_until_complete(runner.setup())
        loop.run_until_complete(web.TCPSite(runner, "127.0.0.1", port).start())
        ready.set()
        loop.run_forever()
        loop.run_until_complete(runner.cleanup())
        loop.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    if not ready.wait(30):
        raise RuntimeError("the Hub double did not start")
    try:
        yield hub
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
