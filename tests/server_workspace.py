"""Workspaces whose rollout is a published-SDK-style rollout server — the independent
double (tests/e2e/rollout_server_double.py) or, for the real-SDK tests, the example."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

DOUBLE = Path(__file__).parent / "e2e" / "rollout_server_double.py"
#: the CLI in a subprocess, its environment check relaxed to the test interpreter's version
RELAXED_CLI = [
    sys.executable,
    "-c",
    "import osmosis_local_runner.server.environment as e; e.MIN_PYTHON = (3, 10); "
    "from osmosis_cli.main import main; main()",
]
REALWIRE = Path(__file__).parent / "realwire.py"  # FAKE_WIRE: the double serves through it

QUESTIONS = [
    ("What is 17 + 39?", "56"),
    ("What is 36 - 10?", "26"),
    ("What is 25 * 60?", "1500"),
    ("What is 81 / 9?", "9"),
    ("What is 12 + 30?", "42"),
    ("What is 7 * 8?", "56"),
    ("What is 100 - 1?", "99"),
    ("What is 64 / 4?", "16"),
]


def write_rows(path: Path, rows: Iterable[Mapping[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(dict(r)) + "\n" for r in rows))


def default_rows(count: int = 8) -> list[dict[str, Any]]:
    return [
        {"system_prompt": "Answer with the number only.", "user_prompt": q, "label": a}
        for q, a in (QUESTIONS * (count // len(QUESTIONS) + 1))[:count]
    ]


def toml_value(value: Any) -> str:
    return json.dumps(value)  # strings, numbers and booleans are valid TOML this way


def server_workspace(
    root: Path,
    *,
    env: Mapping[str, str] | None = None,
    evaluation: Mapping[str, Any] | None = None,
    local: Mapping[str, Any] | None = None,
    rows: list[dict[str, Any]] | None = None,
    secrets: list[str] | None = None,
    model: str = "mock/calculator",
    pyproject: bool = True,
    vendored_sdk: bool = True,
) -> Path:
    """A workspace whose rollout ``fake`` is the rollout server double; returns the
    config's path. ``vendored_sdk`` puts an empty ``osmosis_ai`` package beside
    main.py, so the environment check finds the SDK."""
    rollout = root / "rollouts" / "fake"
    rollout.mkdir(parents=True, exist_ok=True)
    shutil.copy(DOUBLE, rollout / "main.py")
    shutil.copy(REALWIRE, rollout / "realwire.py")
    if vendored_sdk:
        (rollout / "osmosis_ai").mkdir(exist_ok=True)
        (rollout / "osmosis_ai" / "__init__.py").write_text("")
    if pyproject:
        (rollout / "pyproject.toml").write_text(
            '[project]\nname = "fake"\nversion = "0.1.0"\nrequires-python = ">=3.10"\n'
            'dependencies = ["osmosis-ai[server]>=0.3,<0.4"]\n'
        )
    write_rows(root / "data" / "arithmetic.jsonl", rows if rows is not None else default_rows())
    lines = [
        "[experiment]",
        'rollout = "fake"',
        'entrypoint = "main.py"',
        f"model_path = {toml_value(model)}",
        'dataset = "arithmetic"',
        "",
        "[evaluation]",
    ]
    settings = {"limit": 8, "batch_size": 4, "agent_workflow_timeout_s": 30, "grader_timeout_s": 10}
    settings.update(evaluation or {})
    lines += [f"{k} = {toml_value(v)}" for k, v in settings.items()]
    if env:
        lines += ["", "[env]", *(f"{k} = {toml_value(v)}" for k, v in env.items())]
    if secrets:
        lines += ["", "[secrets]", f"required = {json.dumps(secrets)}"]
    if local:
        lines += ["", "[local]", *(f"{k} = {toml_value(v)}" for k, v in local.items())]
    config = root / "configs" / "eval" / "fake.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text("\n".join(lines) + "\n")
    return config


def server_pids(marker: str) -> list[int]:
    """Live processes whose command line contains ``marker`` (e.g. a workspace path)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            state = (entry / "stat").read_text().rpartition(")")[2].split()[0]
        except OSError:
            continue
        if marker in cmdline and state != "Z" and int(entry.name) != os.getpid():
            found.append(int(entry.name))
    return found


def run_quiet(args: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, capture_output=True, text=True, check=False, **kwargs)
