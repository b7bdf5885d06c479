"""`osmosis serve` driven end to end by an independent loopback trainer.

The agent loop is examples/agent-loop/server.py, written for the published 0.2 SDK
(it imports `osmosis_ai…`, served by the compatibility layer; no osmosis_ai is
installed). The trainer (tests/e2e/trainer_double.py) imports nothing of ours.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.child_output import Child
from tests.e2e.conftest import osmosis_command
from tests.e2e.platform_double import PlatformDouble
from tests.e2e.trainer_double import Trainer, get, init_body, post

pytestmark = pytest.mark.slow

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "agent-loop"
SERVING = re.compile(
    r"Serving agent loop '(?P<name>[^']+)' on http://(?P<host>[^:]+):(?P<port>\d+)"
)


@dataclass
class Served:
    child: Child
    url: str

    @property
    def proc(self) -> subprocess.Popen[str]:
        return self.child.proc

    def stop(self) -> tuple[int, str, str]:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
        self.proc.wait(60)
        self.child.out.wait_closed(10)
        self.child.err.wait_closed(10)
        return self.proc.returncode, self.child.out.text(), self.child.err.text()


def start(
    workdir: Path,
    *args: str,
    env_extra: dict[str, str] | None = None,
    host: str | None = "127.0.0.1",
) -> Served:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OSMOSIS_")} | {
        "OSMOSIS_WARM": "0"
    }
    env["OSMOSIS_CONFIG_DIR"] = str(workdir / "cfg")
    env.update(env_extra or {})
    child = Child(
        [*osmosis_command(), "serve", "-p", "0", *(["-H", host] if host else []), *args],
        cwd=workdir,
        env=env,
        bufsize=1,
    )
    try:
        match = child.err.wait_for(SERVING, 20)
    except AssertionError:
        child.__exit__()
        raise
    return Served(child, f"http://127.0.0.1:{match['port']}")


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    folder = tmp_path / "agent"
    shutil.copytree(EXAMPLE, folder, ignore=shutil.ignore_patterns("__pycache__"))
    return folder


@pytest.fixture
def trainer() -> Iterator[Trainer]:
    with Trainer() as t:
        yield t


def test_local_server_completes_a_tool_using_rollout(workdir: Path, trainer: Trainer) -> None:
    served = start(workdir, "-m", "server:agent_loop", "--local")
    try:
        status, health = get(f"{served.url}/health")
        assert status == 200
        assert health == {
            "status": "healthy",
            "agent_loop": "calculator",
            "active_rollouts": 0,
            "completed_rollouts": 0,
        }
        status, body = post(f"{served.url}/v1/rollout/init", init_body("r-1", trainer.url))
        assert status == 202
        assert body["rollout_id"] == "r-1"
        assert [t["function"]["name"] for t in body["tools"]] == [
            "add",
            "subtract",
            "multiply",
            "divide",
        ]
        assert "enum" not in body["tools"][0]["function"]["parameters"]["properties"]["a"]
        done = trainer.wait_completed("r-1")
    finally:
        code, _, err = served.stop()
    assert done["status"] == "COMPLETED" and done["finish_reason"] == "stop"
    assert [m["role"] for m in done["final_messages"]] == [
        "system",
        "user",
        "assistant",
        "tool",
        "assistant",
    ]
    assert done["final_messages"][-1]["content"] == "42"
    assert done["extra_fields"] == {} and done["metrics"]["num_llm_calls"] == 2
    assert done["metrics"]["num_tool_calls"] == 1
    first, second = trainer.state.chat_calls
    for call in (first, second):
        assert call["model"] == "default" and call["rollout_id"] == "r-1"
        assert (call["temperature"], call["top_p"], call["max_tokens"]) == (1.0, 1.0, 512)
        assert call["logprobs"] is True and "tools" not in call
    assert len(second["messages"]) == 4  # the whole history, the assistant message verbatim
    assert trainer.state.chat_auth == ["Bearer trainer-secret"] * 2
    assert trainer.state.completed_auth == ["Bearer trainer-secret"]
    assert code == 130 and "compatibility layer" in err


def test_repeated_init_is_idempotent(workdir: Path, trainer: Trainer) -> None:
    served = start(workdir, "-m", "server:agent_loop", "--local")
    try:
        post(f"{served.url}/v1/rollout/init", init_body("r-2", trainer.url))
        trainer.wait_completed("r-2")
        calls = len(trainer.state.chat_calls)
        again, body = post(f"{served.url}/v1/rollout/init", init_body("r-2", trainer.url))
        assert again == 202 and body["rollout_id"] == "r-2" and len(body["tools"]) == 4
        # the key r-2 already started rollout r-2: a new id under it is a conflict, not a
        # 202 for a rollout that would never run (docs/agent-loops.md, idempotency)
        keyed, conflict = post(
            f"{served.url}/v1/rollout/init",
            init_body("r-3", trainer.url, idempotency_key="r-2"),
        )
        assert keyed == 409 and "already started rollout 'r-2'" in conflict["detail"]
        time.sleep(0.3)
        assert len(trainer.state.chat_calls) == calls  # nothing started again
        assert get(f"{served.url}/health")[1]["completed_rollouts"] == 1
    finally:
        served.stop()


def test_api_key_auth_and_validation_bodies(workdir: Path, trainer: Trainer) -> None:
    served = start(workdir, "-m", "server:agent_loop", "--skip-register", "--api-key", "k-123")
    try:
        status, body = post(f"{served.url}/v1/rollout/init", init_body("r-4", trainer.url))
        assert (status, body) == (401, {"detail": "Invalid or missing API key"})
        wrong, _ = post(
            f"{served.url}/v1/rollout/init",
            init_body("r-4", trainer.url),
            {"Authorization": "Bearer nope"},
        )
        assert wrong == 401
        raw, _ = post(
            f"{served.url}/v1/rollout/init",
            init_body("r-4", trainer.url),
            {"Authorization": "k-123"},
        )
        assert raw == 202  # the raw key without "Bearer " is accepted too
        assert get(f"{served.url}/platform/health")[0] == 401
        status, health = get(f"{served.url}/platform/health", {"Authorization": "Bearer k-123"})
        assert status == 200 and health["agent_loop"] == "calculator"
        assert get(f"{served.url}/health")[0] == 200  # /health needs no key
        bad = init_body("r-5", trainer.url)
        del bad["rollout_id"]
        bad["server_url"] = "ftp://nowhere"
        status, body = post(f"{served.url}/v1/rollout/init", bad, {"Authorization": "Bearer k-123"})
        assert status == 422
        locs = {tuple(d["loc"]) for d in body["detail"]}
        assert ("body", "rollout_id") in locs and ("body", "server_url") in locs
        assert all({"type", "loc", "msg"} <= set(d) for d in body["detail"])
        status, body = post(
            f"{served.url}/v1/rollout/init", b"{not json", {"Authorization": "Bearer k-123"}
        )
        assert status == 422 and body["detail"][0]["loc"][0] == "body"
        trainer.wait_completed("r-4")
    finally:
        _, out, err = served.stop()
    assert "k-123" not in out + err  # a given key is never printed


def test_generated_key_is_printed_once(workdir: Path, trainer: Trainer) -> None:
    served = start(workdir, "-m", "server:agent_loop", "--skip-register")
    try:
        match = served.child.out.wait_for(r"(osm_rollout_[A-Za-z0-9_-]+)", 10)
        key = match.group(1)
        status, _ = post(
            f"{served.url}/v1/rollout/init",
            init_body("r-6", trainer.url),
            {"Authorization": f"Bearer {key}"},
        )
        assert status == 202
        trainer.wait_completed("r-6")
    finally:
        _, out, err = served.stop()
    assert (out + err).count(key) == 1


def test_a_raising_loop_reports_error(workdir: Path, trainer: Trainer) -> None:
    (workdir / "broken.py").write_text(
        "from osmosis_ai.rollout import RolloutAgentLoop\n"
        "class Broken(RolloutAgentLoop):\n"
        "    name = 'broken'\n"
        "    def get_tools(self, request):\n"
        "        return []\n"
        "    async def run(self, ctx):\n"
        "        await ctx.chat(ctx.request.messages)\n"
        "        raise RuntimeError('the loop broke')\n"
        "agent_loop = Broken()\n"
    )
    served = start(workdir, "-m", "broken:agent_loop", "--local")
    try:
        post(f"{served.url}/v1/rollout/init", init_body("r-7", trainer.url))
        done = trainer.wait_completed("r-7")
    finally:
        served.stop()
    assert done["status"] == "ERROR" and done["finish_reason"] == "error"
    assert done["final_messages"] == [] and done["error_message"] == "the loop broke"


def test_model_5xx_is_retried_and_a_vanished_trainer_costs_only_callbacks(
    workdir: Path, trainer: Trainer
) -> None:
    served = start(workdir, "-m", "server:agent_loop", "--local")
    try:
        trainer.state.chat_failures = 1  # retried after 1 s
        post(f"{served.url}/v1/rollout/init", init_body("r-8", trainer.url))
        done = trainer.wait_completed("r-8")
        assert done["status"] == "COMPLETED" and len(trainer.state.chat_calls) == 3
        trainer.state.chat_status = 400  # 4xx is never retried: the rollout errors
        post(f"{served.url}/v1/rollout/init", init_body("r-9", trainer.url))
        errored = trainer.wait_completed("r-9")
        assert errored["status"] == "ERROR" and "400" in errored["error_message"]
        trainer.stop()  # the trainer disappears
        status, _ = post(f"{served.url}/v1/rollout/init", init_body("r-10", "http://127.0.0.1:9"))
        assert status == 202
        time.sleep(1.0)
        assert get(f"{served.url}/health")[0] == 200  # still serving
    finally:
        code, _, err = served.stop()
    assert code == 130 and "Traceback" not in err


def test_registration_happens_after_health_and_the_platform_checks_us(
    workdir: Path, platform: PlatformDouble
) -> None:
    env = {
        "OSMOSIS_PLATFORM_URL": platform.url,
        "OSMOSIS_TOKEN_PLATFORM_URL": platform.url,
        "OSMOSIS_TOKEN": platform.state.token,
        "OSMOSIS_WORKSPACE": "acme",
    }
    served = start(workdir, "-m", "server:agent_loop", "--api-key", "k-reg", env_extra=env)
    try:
        deadline = time.monotonic() + 10
        while not platform.state.registered and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.3)
    finally:
        _, out, err = served.stop()
    (registered,) = platform.state.registered
    port = int(served.url.rsplit(":", 1)[1])
    assert registered == {
        "host": "127.0.0.1",
        "port": port,
        "agent_loop_name": "calculator",
        "api_key": "k-reg",
    }
    (request,) = platform.requests("POST", "/api/cli/rollout-server/register")
    assert request.headers.get("X-Osmosis-Workspace") == "acme"
    assert "Registered with the platform as rs-1: healthy" in err
    assert "k-reg" not in out + err and platform.state.token not in out + err


def test_registration_needs_a_login_unless_local(workdir: Path) -> None:
    result = subprocess.run(
        [*osmosis_command(), "serve", "-m", "server:agent_loop", "-p", "0"],
        cwd=workdir,
        env={
            **{k: v for k, v in os.environ.items() if not k.startswith("OSMOSIS_")}
            | {"OSMOSIS_WARM": "0"},
            "OSMOSIS_CONFIG_DIR": str(workdir / "cfg"),
        },
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert result.returncode == 3
    assert "not logged in" in result.stderr and "--skip-register" not in result.stdout


def test_local_and_api_key_conflict(workdir: Path) -> None:
    result = subprocess.run(
        [*osmosis_command(), "serve", "-m", "server:agent_loop", "--local", "--api-key", "x"],
        cwd=workdir,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert result.returncode == 2 and "exclude each other" in result.stderr


def test_local_serves_on_loopback_by_default_and_warns_on_a_wider_bind(workdir: Path) -> None:
    served = start(workdir, "-m", "server:agent_loop", "--local", host=None)
    try:
        line = served.child.err.text()
        assert SERVING.search(line)["host"] == "127.0.0.1"  # type: ignore[index]
        assert "no API key" not in line
    finally:
        served.stop()
    wide = start(workdir, "-m", "server:agent_loop", "--local", host="0.0.0.0")
    try:
        shown = wide.child.err.text()
        assert "serving on 0.0.0.0 with no API key: anyone who can reach this port" in shown
    finally:
        wide.stop()


def test_an_empty_api_key_is_refused(workdir: Path) -> None:
    result = subprocess.run(
        [*osmosis_command(), "serve", "-m", "server:agent_loop", "--api-key", "", "-p", "0"],
        cwd=workdir,
        capture_output=True,
        text=True,
        timeout=60,
        env={k: v for k, v in os.environ.items() if not k.startswith("OSMOSIS_")}
        | {"OSMOSIS_WARM": "0"},
    )
    assert result.returncode == 2
    assert "--api-key is empty" in result.stderr and "Traceback" not in result.stderr
