"""A loopback double of a vLLM server, written from vLLM's documented routes (docs
"LoRA Adapters", "Dynamically serving LoRA adapters"), importing nothing from the project:

- ``POST /v1/load_lora_adapter {"lora_name", "lora_path"}`` (a name already loaded is
  refused with 400, as vLLM does without ``load_inplace``), ``POST
  /v1/unload_lora_adapter {"lora_name"}``; both 404 unless runtime loading is enabled;
- ``GET /v1/models``: the base model and each loaded adapter (``root``: its path,
  ``parent``: the base);
- ``POST /v1/chat/completions``: the model named must be served (else 404 as vLLM's
  "model does not exist"); what it answers depends on *which weights* it names — an
  adapter's ``adapter_config.json`` says ``"skill": "calculator"`` (right answers) or
  ``"echo"`` (the question back), so a run evaluated on the wrong checkpoint scores wrong.

Run as a script (``--weights PATH``) it serves full weights from a folder's
``config.json`` under the name ``--name``: what a user's serve command starts."""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aiohttp import web

BASE = "base-model"


def _answer(skill: str, question: str) -> str:
    if skill == "calculator":
        found = re.search(r"(-?\d+)\s*([-+*])\s*(-?\d+)", question)
        if found:
            a, op, b = int(found.group(1)), found.group(2), int(found.group(3))
            return str(a + b if op == "+" else a - b if op == "-" else a * b)
    return question


@dataclass
class Vllm:
    runtime_lora: bool = True
    url: str = ""
    adapters: dict[str, dict[str, Any]] = field(default_factory=dict)  # name → root, skill
    loads: list[dict[str, Any]] = field(default_factory=list)
    unloads: list[str] = field(default_factory=list)
    calls: list[str] = field(default_factory=list)  # the model named by each completion
    full_weights: tuple[str, str] | None = None  # (served name, skill) as a script

    def app(self) -> web.Application:
        app = web.Application()
        app.add_routes(
            [
                web.post("/v1/load_lora_adapter", self._load),
                web.post("/v1/unload_lora_adapter", self._unload),
                web.get("/v1/models", self._models),
                web.post("/v1/chat/completions", self._chat),
            ]
        )
        return app

    async def _load(self, request: web.Request) -> web.Response:
        if not self.runtime_lora:
            raise web.HTTPNotFound()
        body = await request.json()
        name, path = body["lora_name"], Path(body["lora_path"])
        self.loads.append(body)
        if name in self.adapters:
            return web.json_response(
                {
                    "object": "error",
                    "message": f"The lora adapter '{name}' has already been loaded.",
                },
                status=400,
            )
        try:
            config = json.loads((path / "adapter_config.json").read_text())
        except (OSError, ValueError):
            return web.json_response(
                {"object": "error", "message": "no adapter at that path"}, status=400
            )
        if config.get("broken"):
            return web.json_response({"object": "error", "message": "rank too large"}, status=400)
        self.adapters[name] = {"root": str(path), "skill": config.get("skill", "echo")}
        return web.Response(text=f"Success: LoRA adapter '{name}' added successfully.")

    async def _unload(self, request: web.Request) -> web.Response:
        if not self.runtime_lora:
            raise web.HTTPNotFound()
        name = (await request.json())["lora_name"]
        self.unloads.append(name)
        if self.adapters.pop(name, None) is None:
            return web.json_response({"object": "error", "message": "not loaded"}, status=404)
        return web.Response(text=f"Success: LoRA adapter '{name}' removed successfully.")

    async def _models(self, request: web.Request) -> web.Response:
        base = self.full_weights[0] if self.full_weights else BASE
        data = [{"id": base, "object": "model", "root": base, "parent": None}]
        data += [
            {"id": n, "object": "model", "root": a["root"], "parent": BASE}
            for n, a in self.adapters.items()
        ]
        return web.json_response({"object": "list", "data": data})

    async def _chat(self, request: web.Request) -> web.Response:
        body = await request.json()
        model = body.get("model")
        self.calls.append(str(model))
        if self.full_weights and model == self.full_weights[0]:
            skill = self.full_weights[1]
        elif model in self.adapters:
            skill = self.adapters[model]["skill"]
        elif model == BASE:
            skill = "echo"
        else:
            return web.json_response(
                {
                    "object": "error",
                    "type": "NotFoundError",
                    "code": 404,
                    "message": f"The model `{model}` does not exist.",
                },
                status=404,
            )
        question = str((body.get("messages") or [{}])[-1].get("content", ""))
        return web.json_response(
            {
                "id": "cmpl-1",
                "object": "chat.completion",
                "created": 1,
                "model": model,
                "choices": [
                    {
                        "index": 0,
                        "finish_reason": "stop",
                        "message": {"role": "assistant", "content": _answer(skill, question)},
                    }
                ],
                "usage": {"prompt_tokens": 9, "completion_tokens": 2, "total_tokens": 11},
            }
        )


@contextmanager
def running_vllm(**options: Any) -> Iterator[Vllm]:
    """The double on a free loopback port, on a thread with its own loop."""
    double = Vllm(**options)
    loop = asyncio.new_event_loop()
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    double.url = f"http://127.0.0.1:{port}/v1"
    runner = web.AppRunner(double.app(), access_log=None)
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
        raise RuntimeError("the vLLM double did not start")
    try:
        yield double
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)


def main() -> None:  # a user's serve command: full weights from a folder
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--weights", type=Path, required=True)
    parser.add_argument("--name", default="served")
    args = parser.parse_args()
    skill = json.loads((args.weights / "config.json").read_text()).get("skill", "echo")
    double = Vllm(runtime_lora=False, full_weights=(args.name, skill))
    web.run_app(double.app(), host="127.0.0.1", port=args.port, print=None)


if __name__ == "__main__":
    main()
