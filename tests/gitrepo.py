"""Build throwaway git projects (with a bare remote) for submit tests."""

from __future__ import annotations

import subprocess
from collections.abc import Mapping
from pathlib import Path

CONFIG = """\
[experiment]
rollout = "demo"
entrypoint = "main.py"
model_path = "openai/gpt-5-mini"
dataset = "demo-set"

[evaluation]
limit = 10
n = 2

[secrets]
required = ["OPENAI_API_KEY"]
"""

GIT_ENV = {
    "GIT_AUTHOR_NAME": "Test",
    "GIT_AUTHOR_EMAIL": "test@example.com",
    "GIT_COMMITTER_NAME": "Test",
    "GIT_COMMITTER_EMAIL": "test@example.com",
    "GIT_CONFIG_GLOBAL": "/dev/null",
    "GIT_CONFIG_NOSYSTEM": "1",
    "PATH": "/usr/bin:/bin:/usr/local/bin",
}


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, env=GIT_ENV, check=True, capture_output=True, text=True
    ).stdout.strip()


def make_project(
    root: Path,
    *,
    origin: str | None = "bare",
    push: bool = True,
    config: str = CONFIG,
    files: Mapping[str, str] | None = None,
) -> Path:
    """A project with rollouts/demo/main.py and configs/eval/demo.toml, committed.

    origin: "bare" (a local bare repo, whose URL is then rewritten to a GitHub
    URL so the repo path is org/demo), any URL string, or None.
    """
    project = root / "project"
    (project / "rollouts" / "demo").mkdir(parents=True)
    (project / "rollouts" / "demo" / "main.py").write_text("# rollout\n")
    (project / "configs" / "eval").mkdir(parents=True)
    (project / "configs" / "eval" / "demo.toml").write_text(config)
    for name, text in (files or {}).items():
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        (project / name).write_text(text)
    git(project, "init", "-q", "-b", "main")
    git(project, "add", "-A")
    git(project, "commit", "-q", "-m", "init")
    if origin == "bare":
        bare = root / "remote.git"
        git(root, "init", "-q", "--bare", str(bare))
        git(project, "remote", "add", "origin", str(bare))
        if push:
            git(project, "push", "-q", "origin", "main")
        git(project, "remote", "set-url", "origin", "git@github.com:Org/Demo.git")
    elif origin is not None:
        git(project, "remote", "add", "origin", origin)
    return project
