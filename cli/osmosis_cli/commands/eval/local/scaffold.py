"""``osmosis eval init``: a runnable evaluation in one step, or a bundled example.

``init NAME`` writes, into the current directory (the project root), a config
whose every key is commented, a rollout stub, a five-row dataset and a ``mock/…``
model, so ``osmosis eval run configs/eval/NAME.toml`` works at once, offline.
``init NAME --example X`` copies a bundled example workspace into ``./NAME/``;
examples ship inside the package, so this works after ``pip install`` too.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from osmosis_cli.bundled import example_root, examples
from osmosis_client.errors import InvalidInputError

SAFE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")

CONFIG = """\
# Eval config for `osmosis eval run` (offline) and `osmosis eval submit` (hosted).
# Every key: `osmosis eval run --help` and the osmosis-client docs (config.md).

[experiment]
rollout = "{name}"               # folder under rollouts/
entrypoint = "main.py"           # file under rollouts/{name}/
model_path = "mock/calculator"   # an offline test double; e.g. "openai/gpt-5-mini" for real runs
dataset = "{name}"               # platform dataset name (locally: data/{name}.jsonl)
# commit_sha = "abc1234"         # pin a synced revision (default: your pushed HEAD)
# branch = "main"                # or a branch; not together with commit_sha

[evaluation]
limit = 5                        # the first N rows; remove it for a seeded random 10% sample
n = 1                            # attempts per row
batch_size = 4                   # attempts in flight at once
pass_threshold = 1.0             # an attempt passes when its score >= this
# agent_workflow_timeout_s = 450
# grader_timeout_s = 150

# [env]                          # plain values passed to the rollout
# MY_SETTING = "value"

# [secrets]                      # names the platform provides; never values
# required = ["OPENAI_API_KEY"]

# [local]                        # used only by `osmosis eval run`
# dataset_file = "data/{name}.jsonl"
# base_url = "http://localhost:8000/v1"   # any OpenAI-compatible server (vLLM, Ollama, …)
# api_key_env = "OPENAI_API_KEY"          # the NAME of the variable holding the key
# seed = 0
"""

ROLLOUT = '''\
"""The {name} rollout: ask the model, then grade its answer against the row's ground truth."""

from __future__ import annotations

from osmosis_client.rollout import AgentWorkflow, AgentWorkflowContext, Grader, GraderContext


class {cls}Workflow(AgentWorkflow):
    async def run(self, ctx: AgentWorkflowContext):
        reply = await ctx.chat(ctx.prompt, temperature=0.0)
        return [*ctx.prompt, reply]


class {cls}Grader(Grader):
    async def grade(self, ctx: GraderContext) -> float:
        expected = (ctx.ground_truth or "").strip()
        return 1.0 if expected and ctx.solution_str.strip() == expected else 0.0
'''

ROWS = [("12 + 30", "42"), ("7 * 6", "42"), ("100 - 58", "42"), ("84 / 2", "42"), ("6 * 7", "42")]


def _cls(name: str) -> str:
    return "".join(part.capitalize() for part in re.split(r"[^A-Za-z0-9]+", name) if part) or "My"


def check_name(name: str) -> str:
    if not SAFE_NAME.match(name) or name in (".", ".."):
        raise InvalidInputError(
            f"invalid name {name!r}", hint="use letters, digits, '.', '_' and '-' only"
        )
    return name


def scaffold(name: str, root: Path) -> list[Path]:
    """Write the files of a runnable evaluation under ``root``; never overwrites."""
    check_name(name)
    data = "".join(
        json.dumps(
            {
                "system_prompt": "You are a calculator. Answer with the number only.",
                "user_prompt": f"What is {question}?",
                "ground_truth": answer,
            }
        )
        + "\n"
        for question, answer in ROWS
    )
    files = {
        root / "configs" / "eval" / f"{name}.toml": align_comments(CONFIG.format(name=name)),
        root / "rollouts" / name / "main.py": ROLLOUT.format(name=name, cls=_cls(name)),
        root / "data" / f"{name}.jsonl": data,
    }
    _refuse_existing(list(files))
    from osmosis_client._fs import atomic_write

    for path, text in files.items():
        atomic_write(path, text.encode())
    return list(files)


def _refuse_existing(paths: list[Path]) -> None:
    existing = [str(p) for p in paths if p.exists()]
    if existing:
        raise InvalidInputError(
            f"{', '.join(existing)} already exist{'s' if len(existing) == 1 else ''}",
            hint="pick another name, or edit the existing files",
            code="EXISTS",
        )


def copy_example(example: str, name: str, cwd: Path) -> Path:
    """Copy the bundled ``example`` into ``cwd/name``; refuses an existing target."""
    check_name(name)
    known = examples()
    if example not in known:
        raise InvalidInputError(
            f"no bundled example {example!r}",
            hint=f"examples: {', '.join(known) or 'none found'}",
        )
    target = cwd / name
    _refuse_existing([target])
    shutil.copytree(
        example_root() / example,
        target,
        ignore=shutil.ignore_patterns("__pycache__", ".osmosis", ".venv", "*.pyc"),
    )
    return target


def example_configs(folder: Path) -> list[Path]:
    return sorted((folder / "configs" / "eval").glob("*.toml"))


COMMENT_COLUMN = 33


def align_comments(text: str) -> str:
    """Trailing ``# …`` comments of consecutive lines start in one column (at least
    :data:`COMMENT_COLUMN`), whatever length the names filled in have."""
    lines = text.split("\n")
    split = [_trailing_comment(line) for line in lines]
    i = 0
    while i < len(lines):
        j = i
        while j < len(lines) and split[j] is not None:
            j += 1
        group = [s for s in split[i:j] if s is not None]
        column = max([COMMENT_COLUMN, *(len(code) + 2 for code, _ in group)])
        for k, (code, comment) in enumerate(group, start=i):
            lines[k] = f"{code.ljust(column)}{comment}"
        i = j + 1 if j == i else j
    return "\n".join(lines)


def _trailing_comment(line: str) -> tuple[str, str] | None:
    """(code, ``# comment``) for a line with code then 2+ spaces then a comment."""
    found = re.match(r"^(\S.*?)\s{2,}(# .*)$", line)
    return (found.group(1), found.group(2)) if found else None
