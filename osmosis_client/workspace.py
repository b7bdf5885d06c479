"""An Osmosis workspace on disk: the git checkout that holds ``rollouts/``,
``configs/training/``, ``configs/eval/`` and ``data/`` (the published CLI's scaffold,
published-cli-0.3.8.md §2.2), and the agent files a coding agent reads first.

Our agent files are our own text; they name the commands both CLIs accept.
"""

from __future__ import annotations

from pathlib import Path

from osmosis_client.errors import InvalidInputError, WorkspaceRequiredError

REQUIRED_DIRS = ("rollouts/", "configs/training/", "configs/eval/", "data/")
AGENT_FILES = ("AGENTS.md", "CLAUDE.md", "configs/AGENTS.md")

AGENTS_MD = """\
# Working in this Osmosis workspace

This repository is synced to the Osmosis platform. It holds:

- `rollouts/<name>/` — one rollout each: `main.py` (an `AgentWorkflow` and a `Grader`
  served by `create_rollout_server`) and its own `pyproject.toml`;
- `configs/eval/<name>.toml` and `configs/training/<name>.toml` — what to run;
- `data/` — datasets (`user_prompt`, `ground_truth`, optional `system_prompt`).

Commands (`--json` anywhere on a line prints one JSON document for programs):

- `osmosis --json doctor` — check this workspace, the login and the rollouts.
- `osmosis eval run configs/eval/<name>.toml --limit 5` — evaluate offline; runs land in
  `.osmosis/evals/<run-name>/`. `--name NAME` continues a run, `--fresh` starts it over,
  `--retry-failed` runs the failures again.
- `osmosis eval submit configs/eval/<name>.toml --yes` — a hosted run of the pushed commit.
- `osmosis eval list` / `osmosis eval info NAME` / `osmosis eval logs NAME`.
- `osmosis rollout init <name>` — a new rollout; `osmosis rollout validate <name>` checks it.

Commit and push a rollout before submitting it: the platform runs the pushed commit.
"""

CLAUDE_MD = """\
# Claude Code

Read `AGENTS.md` in this directory first: it describes this workspace and its commands.
"""

CONFIGS_AGENTS_MD = """\
# Configs

- `eval/<name>.toml`: `[experiment]` (rollout, entrypoint, model_path, dataset), optional
  `[evaluation]` (limit, n, batch_size, pass_threshold, timeouts), `[env]`, `[secrets]`
  (`required = [...]`: names only, never values).
- `training/<name>.toml`: the same `[experiment]`, then `[training]`, `[sampling]`,
  `[checkpoints]`.

Check an eval config offline with `osmosis eval run configs/eval/<name>.toml --dry-run`.
"""

AGENT_TEXTS = {
    "AGENTS.md": AGENTS_MD,
    "CLAUDE.md": CLAUDE_MD,
    "configs/AGENTS.md": CONFIGS_AGENTS_MD,
}


def find_root(path: Path) -> Path:
    """The top of the git checkout holding ``path`` (a file: its folder's)."""
    start = path if path.is_dir() else path.parent
    start = start.resolve()
    for folder in (start, *start.parents):
        if (folder / ".git").exists():
            return folder
    raise WorkspaceRequiredError(
        f"{path} is not inside a git checkout",
        hint="run this from a clone of your Osmosis workspace repository",
        code="WORKSPACE_REQUIRED",
    )


def missing_paths(root: Path) -> list[str]:
    """The scaffold directories, then the agent files, that ``root`` lacks."""
    missing = [d for d in REQUIRED_DIRS if not (root / d).is_dir()]
    return missing + [f for f in AGENT_FILES if not (root / f).is_file()]


def require_scaffold(root: Path) -> None:
    """The four directories must exist (the agent files are for agents, not for us)."""
    missing = [d for d in REQUIRED_DIRS if not (root / d).is_dir()]
    if missing:
        raise InvalidInputError(
            f"{root} is missing the workspace folders {', '.join(missing)}",
            hint="create the missing folders",
            code="SCAFFOLD_MISSING",
            data={"missing": missing},
        )


def fix_scaffold(root: Path) -> list[str]:
    """Create what is safely creatable, offline: the directories (each with an empty
    ``.gitkeep``) and our agent files. Never overwrites; never follows a symlink out."""
    made: list[str] = []
    for folder in REQUIRED_DIRS:
        target = inside(root, folder)
        target.mkdir(parents=True, exist_ok=True)
        keep = target / ".gitkeep"
        if not keep.exists():
            keep.touch()
            made.append(f"{folder}.gitkeep")
    for name, text in AGENT_TEXTS.items():
        target = inside(root, name)
        if not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
            made.append(name)
    return made


def inside(root: Path, relative: str) -> Path:
    """``root/relative``, refusing a path that a symlink takes outside ``root``."""
    target = root / relative
    resolved_root = root.resolve()
    current = target
    while current != root and current != current.parent:
        if current.is_symlink():
            raise InvalidInputError(
                f"{current} is a symlink: not writing through it",
                hint="replace the symlink with a folder, or create the file yourself",
                code="CONFLICT",
            )
        current = current.parent
    if resolved_root not in (target.resolve(), *target.resolve().parents):
        raise InvalidInputError(f"{target} is outside {root}", code="CONFLICT")
    return target
