"""What a rollout server gets from us, and what of its output we write: the platform's
environment (no shell variables, never the model key) and no secret in server.log or
the -v echo, however long the line that carries it."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest

from osmosis_client.errors import InvalidInputError
from osmosis_client.platform.eval.eval_config import load_config
from osmosis_local_runner.run.execute.runner import Runner
from osmosis_local_runner.run.request.overrides import Overrides, config_spec
from osmosis_local_runner.server import environment
from tests.e2e.model_double import ModelDouble
from tests.server_workspace import server_workspace

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not Path("/proc").is_dir(), reason="needs Linux /proc"),
]

MODEL_KEY = "sk-live-MODELKEY0123456789abcdef"
SHELL_SECRET = "shell-secret-value-987654321"
DECLARED = "declared-secret-value-24680"


def _run(config: Path, tmp_path: Path, echoed: list[str], **flags: Any) -> tuple[Any, Any]:
    """The config run in server mode against a model double (``-v``'s echo collected);
    the result and the headers the model saw."""
    with ModelDouble() as model:
        given = Overrides(
            output=tmp_path / "r.json",
            rollout_python=Path(sys.executable),
            model="Qwen/Qwen3-8B",
            base_url=model.url,
            api_key_env="OPENAI_API_KEY",
            server_echo=echoed.append,
            **flags,
        )
        result = asyncio.run(Runner(config_spec(load_config(config), given)).run())
        return result, model.headers


def test_the_server_gets_the_platforms_environment_and_no_secret_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(environment, "MIN_PYTHON", (3, 10))
    monkeypatch.setenv("OPENAI_API_KEY", MODEL_KEY)
    monkeypatch.setenv("MY_SERVICE_TOKEN", SHELL_SECRET)
    monkeypatch.setenv("UNRELATED_SHELL_VAR", "shell-only")
    monkeypatch.setenv("DECLARED_SECRET", DECLARED)
    config = server_workspace(
        tmp_path / "ws",
        env={
            "FAKE_PRINT_ALL_ENV": "1",
            "FAKE_LONG_LINE": "200000",  # longer than one pipe read (64 KiB)
            "FAKE_LONG_LINE_SECRET": "DECLARED_SECRET",
            "FAKE_PRINT_ENV": "OPENAI_API_KEY,MY_SERVICE_TOKEN",
        },
        secrets=["DECLARED_SECRET"],
        evaluation={"limit": 2, "batch_size": 2},
    )
    echoed: list[str] = []
    result, headers = _run(config, tmp_path, echoed)
    assert headers[0]["Authorization"] == f"Bearer {MODEL_KEY}"  # the run used it
    assert result.summary["errored_runs"] == 0
    log = (tmp_path / "r.run" / "server.log").read_text()
    for where in (log, "\n".join(echoed)):
        for secret in (MODEL_KEY, SHELL_SECRET, DECLARED):
            assert secret not in where
            assert secret[:12] not in where  # not even a piece of one
        assert "OPENAI_API_KEY=None" in where and "MY_SERVICE_TOKEN=None" in where
        assert "env UNRELATED_SHELL_VAR" not in where  # the shell stays home
        assert "env DECLARED_SECRET=***" in where  # [secrets] are passed, and redacted
        assert "env FAKE_PRINT_ALL_ENV=1" in where and "env PATH=" in where  # [env] + basics
    assert "Authorization: Bearer ***" in log  # the 200 kB line, whole and redacted
    long_lines = [line for line in log.splitlines() if line.startswith("yyyy")]
    assert len(long_lines) == 1 and long_lines[0].endswith("bytes not shown]")
    assert all(len(line) <= 8200 for line in echoed)  # -v shows the start of a long line


def test_secrets_given_in_the_request_reach_the_server_and_never_this_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``RunRequest.secrets`` (what ``eval run --secrets-file`` and ``run_eval(secrets=)``
    fill) is the server's, redacted; this process's environment never holds it."""
    import os

    monkeypatch.setattr(environment, "MIN_PYTHON", (3, 10))
    monkeypatch.setenv("OPENAI_API_KEY", MODEL_KEY)
    monkeypatch.delenv("DECLARED_SECRET", raising=False)
    config = server_workspace(
        tmp_path / "ws",
        env={"FAKE_PRINT_ALL_ENV": "1"},
        secrets=["DECLARED_SECRET"],
        evaluation={"limit": 1, "batch_size": 1},
    )
    echoed: list[str] = []
    result, _ = _run(config, tmp_path, echoed, secrets={"DECLARED_SECRET": DECLARED})
    assert result.summary["errored_runs"] == 0
    assert "env DECLARED_SECRET=***" in "\n".join(echoed) and DECLARED not in "\n".join(echoed)
    assert "DECLARED_SECRET" not in os.environ
    missing = Overrides(output=tmp_path / "s.json", secrets={})
    with pytest.raises(InvalidInputError) as refused:
        config_spec(load_config(config), missing)
    assert refused.value.code == "INTERACTIVE_REQUIRED"
    assert refused.value.data["missing"] == ["DECLARED_SECRET"]
