"""Hostile input that needs real processes (issue 13): concurrent logins, concurrent
resumes of one journal, and user code writing straight to file descriptor 1 under
``--json``."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from osmosis_client.platform.login.credentials import CredentialStore
from tests import envelopes
from tests.e2e.conftest import osmosis_command

pytestmark = pytest.mark.slow
QUICKSTART = Path(__file__).resolve().parents[2] / "examples" / "quickstart"

SAVE_ONE = """
import sys
from datetime import datetime, timezone
from pydantic import SecretStr
from osmosis_client.platform.login.credentials import CredentialStore
from osmosis_client.platform.models import User, Workspace

i = int(sys.argv[1])
store = CredentialStore()
store.save_login(
    "https://platform.test",
    token=SecretStr(f"tok-{i}"),
    user=User(id="u1", email="ada@example.com", name="Ada"),
    token_id=f"tid-{i}",
    expires_at=datetime(2030, 1, 1, tzinfo=timezone.utc),
    workspace=Workspace(id=f"w{i}", name=f"ws-{i}", role="admin"),
)
"""


def test_15_twenty_concurrent_logins_keep_every_entry(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OSMOSIS_")} | {
        "OSMOSIS_WARM": "0"
    }
    env.update(OSMOSIS_CONFIG_DIR=str(tmp_path / "cfg"), OSMOSIS_TOKEN_STORE="file")
    procs = [subprocess.Popen([sys.executable, "-c", SAVE_ONE, str(i)], env=env) for i in range(20)]
    assert all(p.wait(60) == 0 for p in procs)
    store = CredentialStore(env=env)
    names = {e.name for e in store.entries("https://platform.test")}
    assert names == {f"ws-{i}" for i in range(20)}
    for i in range(20):  # every token is there too, and still resolves
        auth = store.resolve("https://platform.test", workspace=f"ws-{i}")
        assert auth.token.get_secret_value() == f"tok-{i}"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "qs"
    shutil.copytree(QUICKSTART, root, ignore=shutil.ignore_patterns(".osmosis"))
    return root


def cli(project: Path, *args: str) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OSMOSIS_")} | {
        "OSMOSIS_WARM": "0"
    }
    env["OSMOSIS_CONFIG_DIR"] = str(project / "cfg")
    return subprocess.Popen(
        [*osmosis_command(), *args],
        cwd=project,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_11_writes_to_fd_1_never_corrupt_json_stdout(project: Path) -> None:
    (project / "rollouts" / "calculator" / "main.py").write_text(
        "import os, subprocess\n"
        "from osmosis_client.rollout import AgentWorkflow, Grader\n"
        "os.write(1, b'import-time bytes on fd 1\\n')\n"
        "class W(AgentWorkflow):\n"
        "    async def run(self, ctx):\n"
        "        os.write(1, b'raw bytes from the workflow\\n')\n"
        "        subprocess.run(['echo', 'a child process talking'])\n"
        "        return [*ctx.prompt, await ctx.chat(ctx.prompt)]\n"
        "class G(Grader):\n"
        "    def grade(self, ctx):\n"
        "        return 1.0\n"
    )
    proc = cli(
        project,
        "eval",
        "run",
        "configs/eval/quickstart.toml",
        "--limit",
        "2",
        "--json",
        "-o",
        "r.json",
    )
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert envelopes.resource(out)["summary"]["total_rows"] == 2
    assert "raw bytes from the workflow" in err and "a child process talking" in err


def test_19_a_second_resume_of_one_journal_refuses(project: Path) -> None:
    args = [
        "eval",
        "run",
        "configs/eval/quickstart.toml",
        "--limit",
        "10",
        "-o",
        "r.json",
        "--model",
        "mock/calculator@300",
        "--batch-size",
        "1",
    ]
    first = cli(project, *args)
    journal = project / "r.json.journal.jsonl"
    deadline = time.monotonic() + 30
    while not journal.exists() or len(journal.read_text().splitlines()) < 2:
        assert time.monotonic() < deadline and first.poll() is None
        time.sleep(0.02)
    second = cli(project, *args, "--resume")
    _, err = second.communicate(timeout=30)
    first.kill()
    first.communicate(timeout=60)
    assert second.returncode == 2
    assert "r.json.journal.jsonl is in use by another run" in err
