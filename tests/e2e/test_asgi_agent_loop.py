"""0.2 agent loops under the standard tools their docs name (issue 34): `create_app()`
returns a real ASGI application serving 0.2's routes — run by `uvicorn server:app`, by
`python -m server` (ROLLOUT_SERVER_HOST / ROLLOUT_SERVER_PORT, ROLLOUT_DEBUG_DIR), and
by pytest with FastAPI's `TestClient(app)`. The code is examples/agent-loop/server.py,
written for the published SDK; the trainer is the independent loopback double."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.child_output import Child
from tests.e2e.trainer_double import Trainer, get, init_body, post

pytestmark = pytest.mark.slow
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "agent-loop"
RUNNING = re.compile(r"Uvicorn running on http://127\.0\.0\.1:(\d+)")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    path = tmp_path / "agent"
    shutil.copytree(EXAMPLE, path, ignore=shutil.ignore_patterns("__pycache__", ".osmosis"))
    return path


def environment(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OSMOSIS_")}
    return env | extra


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def trainer() -> Iterator[Trainer]:
    with Trainer() as double:
        yield double


@contextlib.contextmanager
def serving(command: list[str], cwd: Path, env: dict[str, str]) -> Iterator[str]:
    """The server's URL while it runs; stopped by SIGINT after (it must exit 0)."""
    with Child(command, cwd=cwd, env=env) as child:
        found = child.err.wait_for(RUNNING, 30)  # bounded; the output so far if it fails
        yield f"http://127.0.0.1:{found.group(1)}"
        child.proc.send_signal(signal.SIGINT)  # uvicorn's lifespan shutdown runs
        assert child.proc.wait(20) == 0, child.output()


def one_rollout(url: str, trainer: Trainer, rollout_id: str) -> dict[str, object]:
    status, health = get(f"{url}/health")
    assert status == 200 and health["status"] == "healthy"
    assert health["agent_loop"] == "calculator"
    status, accepted = post(f"{url}/v1/rollout/init", init_body(rollout_id, trainer.url))
    assert status == 202 and accepted["rollout_id"] == rollout_id
    assert [t["function"]["name"] for t in accepted["tools"]][:2] == ["add", "subtract"]
    return trainer.wait_completed(rollout_id)


def test_uvicorn_serves_create_apps_app(project: Path, trainer: Trainer) -> None:
    command = [sys.executable, "-m", "uvicorn", "server:app", "--host", "127.0.0.1", "--port", "0"]
    with serving(command, project, environment()) as url:
        done = one_rollout(url, trainer, "uv-1")
        assert done["status"] == "COMPLETED"
        assert done["final_messages"][-1]["content"].endswith("42")  # type: ignore[index]
        status, _ = get(f"{url}/nowhere")
        assert status == 404


def test_python_m_server_reads_its_variables(project: Path, trainer: Trainer) -> None:
    port = free_port()
    debug = project / "debug"
    env = environment(
        ROLLOUT_SERVER_HOST="127.0.0.1", ROLLOUT_SERVER_PORT=str(port), ROLLOUT_DEBUG_DIR=str(debug)
    )
    with serving([sys.executable, "-m", "server"], project, env) as url:
        assert url.endswith(f":{port}")
        assert one_rollout(url, trainer, "m-1")["status"] == "COMPLETED"
    events = [json.loads(line) for line in (debug / "m-1.jsonl").read_text().splitlines()]
    assert events[0]["event"] == "model_turn" and events[0]["rollout_id"] == "m-1"


TEST_FILE = """
import pytest
from fastapi.testclient import TestClient
from osmosis_ai.rollout.testing import (
    RolloutCompletionTracker,
    create_mock_trainer_app,
    patch_httpx_for_mock_trainer,
)

from server import app

client = TestClient(app)


def test_health():
    response = client.get("/health")
    assert response.status_code == 200
    assert response.json()["agent_loop"] == "calculator"


def test_init_is_accepted_with_the_tools():
    body = {"rollout_id": "t-1", "server_url": "http://127.0.0.1:9",
            "messages": [{"role": "user", "content": "What is 6 * 7?"}],
            "completion_params": {}}
    with TestClient(app) as scoped:
        response = scoped.post("/v1/rollout/init", json=body)
    assert response.status_code == 202
    assert {t["function"]["name"] for t in response.json()["tools"]} >= {"add", "divide"}


def test_a_bad_body_is_422():
    assert client.post("/v1/rollout/init", json={"rollout_id": ""}).status_code == 422


@pytest.fixture
def mock_trainer(monkeypatch):
    tracker = RolloutCompletionTracker()
    trainer = TestClient(create_mock_trainer_app(tracker=tracker))
    patch_httpx_for_mock_trainer(trainer, monkeypatch)
    return trainer, tracker


def test_rollout_with_mock_trainer(mock_trainer):
    _, tracker = mock_trainer
    body = {"rollout_id": "r-1", "server_url": "http://trainer.test",
            "messages": [{"role": "user", "content": "Please add 5 and 3"}],
            "completion_params": {}}
    with TestClient(app) as server:
        assert server.post("/v1/rollout/init", json=body).status_code == 202
        assert tracker.wait(timeout=5.0)
    done = tracker.responses[0]
    assert done["status"] == "COMPLETED" and done["rollout_id"] == "r-1"
    assert any(m.get("role") == "tool" and m["content"] == "8" for m in done["final_messages"])
"""


def test_pytest_with_fastapis_test_client(project: Path) -> None:
    pytest.importorskip("fastapi", reason="FastAPI's TestClient (the dev extra installs it)")
    (project / "test_server_app.py").write_text(TEST_FILE)
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_server_app.py"],
        cwd=project,
        env=environment(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "4 passed" in result.stdout
