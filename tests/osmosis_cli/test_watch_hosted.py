"""``eval watch CONFIG --training RUN --deploy`` (issue 52) against a loopback fake of the
platform that also serves inference (written from the platform's routes; importing nothing
of ours): each uploaded checkpoint, in step order, deployed only when asked, evaluated
against the inference endpoint under its ``inference_model``, undeployed after; the
deployment quota respected — a full one names what holds it; a restarted watch skips what
finished."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from osmosis_client import Client
from osmosis_client.errors import InvalidInputError
from osmosis_local_runner import load_run, watch_training
from tests.osmosis_cli.conftest import Invoke
from tests.stub_openai import serve_app

CONFIG = "configs/eval/quickstart.toml"
KEY = "osm-inference-key"


@dataclass
class Platform:
    status: str = "running"
    checkpoints: list[dict[str, Any]] = field(default_factory=list)
    deployed: dict[str, bool] = field(default_factory=dict)  # LoRA name → active
    quota: int = 1
    deploys: list[str] = field(default_factory=list)
    undeploys: list[str] = field(default_factory=list)
    most_active: int = 0
    calls: list[str] = field(default_factory=list)

    def app(self) -> web.Application:
        app = web.Application()
        app.add_routes(
            [
                web.get("/api/cli/training-runs/{name}", self._run),
                web.get("/api/cli/training-runs/{name}/checkpoints", self._checkpoints),
                web.get("/api/cli/models/lora", self._lora_page),
                web.get("/api/cli/models/{name}", self._model),
                web.post("/api/cli/models/{name}/{action}", self._deployment),
                web.post("/v1/chat/completions", self._chat),
            ]
        )
        return app

    def add(self, step: int, status: str = "uploaded") -> None:
        name = f"grpo-run-step-{step}"
        self.checkpoints.append(
            {"id": f"ck_{step}", "checkpoint_step": step, "checkpoint_name": name, "status": status}
        )
        self.deployed.setdefault(name, False)

    async def _run(self, request: web.Request) -> web.Response:
        name = request.match_info["name"]
        return web.json_response(
            {"training_run": {"id": "tr_1", "name": name, "status": self.status}}
        )

    async def _checkpoints(self, request: web.Request) -> web.Response:
        return web.json_response(
            {"training_run_name": request.match_info["name"], "checkpoints": self.checkpoints}
        )

    def _item(self, name: str) -> dict[str, Any]:
        active = self.deployed[name]
        return {
            "id": f"lm_{name}",
            "model_name": name,
            "base_model": "Qwen/Qwen3-8B",
            "deployment_status": "active" if active else "inactive",
            "inference_model": f"Qwen/Qwen3-8B:{name}" if active else None,
        }

    async def _lora_page(self, request: web.Request) -> web.Response:
        items = [self._item(n) for n in self.deployed]
        return web.json_response(
            {
                "models": items,
                "total_count": len(items),
                "has_more": False,
                "active_deployments": sum(self.deployed.values()),
                "max_active_deployments": self.quota,
            }
        )

    async def _model(self, request: web.Request) -> web.Response:
        name = request.match_info["name"]
        if name not in self.deployed:
            return web.json_response({"error": "LoRA model not found"}, status=404)
        return web.json_response(self._item(name))

    async def _deployment(self, request: web.Request) -> web.Response:
        name, action = request.match_info["name"], request.match_info["action"]
        if action == "deploy" and not self.deployed[name]:
            if sum(self.deployed.values()) >= self.quota:
                return web.json_response(
                    {"code": "DEPLOYMENT_LIMIT_REACHED", "message": "deployment limit reached"},
                    status=409,
                )
            self.deployed[name] = True
            self.deploys.append(name)
        elif action == "undeploy":
            self.deployed[name] = False
            self.undeploys.append(name)
        self.most_active = max(self.most_active, sum(self.deployed.values()))
        state = "active" if self.deployed[name] else "inactive"
        return web.json_response({"id": f"lm_{name}", "model_name": name, "status": state})

    async def _chat(self, request: web.Request) -> web.Response:
        if request.headers.get("Authorization") != f"Bearer {KEY}":
            return web.json_response({"error": {"message": "bad key"}}, status=401)
        body = await request.json()
        model = str(body.get("model"))
        self.calls.append(model)
        name = model.partition(":")[2]
        if not self.deployed.get(name):
            return web.json_response({"error": {"message": f"{model} is not deployed"}}, status=404)
        question = str(body["messages"][-1]["content"])
        found = re.search(r"(-?\d+)\s*([-+*])\s*(-?\d+)", question)
        right = found is not None and not name.endswith("-40")  # step 40 regressed
        if found is not None and right:
            a, op, b = int(found.group(1)), found.group(2), int(found.group(3))
            answer = str(a + b if op == "+" else a - b if op == "-" else a * b)
        else:
            answer = question
        return web.json_response(
            {
                "id": "c",
                "object": "chat.completion",
                "created": 1,
                "model": model,
                "choices": [
                    {
                        "index": 0,
                        "finish_reason": "stop",
                        "message": {"role": "assistant", "content": answer},
                    }
                ],
                "usage": {"prompt_tokens": 9, "completion_tokens": 2},
            }
        )


@pytest.fixture
def platform(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Platform, str]]:
    fake = Platform()
    with serve_app(fake.app()) as url:
        monkeypatch.setenv("OSMOSIS_INFERENCE_URL", url)
        monkeypatch.setenv("OSMOSIS_API_KEY", KEY)
        yield fake, url


class Trainer:
    def __init__(self, platform: Platform) -> None:
        self.platform = platform
        self.polls = 0

    async def __call__(self, seconds: float) -> None:
        self.polls += 1
        if self.polls == 1:
            self.platform.add(40)
            self.platform.checkpoints[-1]["status"] = "uploading"
        elif self.polls == 2:
            self.platform.checkpoints[-1]["status"] = "uploaded"
            self.platform.add(60)
            self.platform.status = "finished"
        await asyncio.sleep(0)


def test_each_uploaded_checkpoint_is_deployed_evaluated_and_undeployed(
    platform: tuple[Platform, str], quickstart_project: Path
) -> None:
    fake, url = platform
    fake.add(20)
    with Client(token="t", workspace="acme", base_url=url) as client:
        with pytest.raises(InvalidInputError) as refused:
            watch_training(CONFIG, "grpo-run", client=client, limit=3)
        assert refused.value.code == "DEPLOY_REQUIRED" and not fake.deploys
        result = watch_training(
            CONFIG,
            "grpo-run",
            client=client,
            deploy=True,
            series="grpo",
            limit=3,
            sleep=Trainer(fake),
        )
    assert result.finished == {20: "grpo-step-20", 40: "grpo-step-40", 60: "grpo-step-60"}
    assert fake.deploys == fake.undeploys == [f"grpo-run-step-{s}" for s in (20, 40, 60)]
    assert fake.most_active == 1  # one at a time, within the quota
    means = {s: load_run(n).summary.mean for s, n in result.finished.items()}
    assert means == {20: 1.0, 40: 0.0, 60: 1.0}  # the deployed checkpoint answered
    config = json.loads(Path(".osmosis/evals/grpo-step-40/results.json").read_text())["config"]
    assert (config["series"], config["step"]) == ("grpo", 40)
    assert config["model"] == "Qwen/Qwen3-8B:grpo-run-step-40"
    assert config["weights"]["platform_checkpoint"] == "ck_40"
    # restarted: what finished is skipped, nothing deployed again
    with Client(token="t", workspace="acme", base_url=url) as client:
        again = watch_training(
            CONFIG, "grpo-run", client=client, deploy=True, series="grpo", limit=3, once=True
        )
    assert again.finished == result.finished and len(fake.deploys) == 3


def test_a_full_quota_fails_the_step_naming_what_holds_it(
    platform: tuple[Platform, str],
    quickstart_project: Path,
    invoke: Invoke,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fake, url = platform
    fake.add(20)
    fake.deployed["someone-elses"] = True  # the workspace's one deployment, in use
    fake.status = "finished"
    monkeypatch.setenv("OSMOSIS_PLATFORM_URL", url)
    monkeypatch.setenv("OSMOSIS_TOKEN_PLATFORM_URL", url)
    monkeypatch.setenv("OSMOSIS_TOKEN", "t")
    monkeypatch.setenv("OSMOSIS_WORKSPACE", "acme")
    done = invoke("eval", "watch", CONFIG, "--training", "grpo-run", "--deploy", "--limit", "2")
    assert done.exit_code == 1, done.stderr
    assert "step 20: failed" in done.stderr and "someone-elses" in done.stderr
    assert not fake.deploys and fake.deployed["someone-elses"]  # nothing freed behind a back
    plain = invoke("eval", "watch", CONFIG, "--training", "grpo-run", "--limit", "2")
    assert plain.exit_code == 2 and "add --deploy" in plain.stderr
