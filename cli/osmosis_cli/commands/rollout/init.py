"""``osmosis rollout init NAME``: a runnable 0.3-style rollout — an ``AgentWorkflow`` and a
``Grader`` behind ``create_rollout_server``, its ``pyproject.toml``, an eval and a
training config, and a small dataset beside it — written into the workspace.

The rollout is the bundled ``calculator`` rollout server renamed (one skeleton in the
repository: the example the test suite runs against the published SDK).
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from osmosis_cli.bundled import example_root
from osmosis_client.errors import InvalidInputError
from osmosis_client.workspace import inside, require_scaffold

NAME = re.compile(r"[a-z][a-z0-9-]*")
SKELETON = "published-rollout"  # examples/<SKELETON>/rollouts/calculator

EVAL = """\
# The {name} rollout, evaluated offline or on the platform:
#   osmosis eval run configs/eval/{name}.toml --model mock/calculator   # offline, no key
#   osmosis eval run configs/eval/{name}.toml        # OPENAI_API_KEY exported
#   osmosis eval submit configs/eval/{name}.toml --yes   # after git push

[experiment]
rollout = "{name}"
entrypoint = "main.py"
model_path = "openai/gpt-5-mini"
dataset = "{name}"              # locally: data/{name}.jsonl

[evaluation]
limit = 10                      # the first 10 rows; remove for the platform's sample
n = 1
batch_size = 4
pass_threshold = 1.0
# agent_workflow_timeout_s = 450
# grader_timeout_s = 150

# [env]                         # plain values for the rollout
# MY_SETTING = "value"

[secrets]
required = []                   # names the platform provides (never values)
"""

TRAINING = """\
# Training the {name} rollout on the platform.

[experiment]
rollout = "{name}"
entrypoint = "main.py"
model_path = "<your-base-model>"
dataset = "{name}"

# [training]
# [sampling]
# [checkpoints]
"""

README = """\
# {name}

A rollout for the Osmosis platform, written for the osmosis-ai 0.3 SDK: `main.py`
serves an `AgentWorkflow` (one chat call) and a `Grader` (the answer's last number
against the row's `ground_truth`) with `create_rollout_server`.

```bash
osmosis rollout validate {name}                                   # loads it, finds both
osmosis eval run configs/eval/{name}.toml --model mock/calculator # offline
osmosis eval submit configs/eval/{name}.toml --yes                # after git push
```
"""


def check_name(name: str) -> str:
    if not NAME.fullmatch(name) or name == "default":
        raise InvalidInputError(
            f"{name!r} is not a rollout name",
            hint="use lower-case letters, digits and '-', starting with a letter "
            "(and not 'default')",
            code="VALIDATION",
        )
    return name


def init(name: str, root: Path, *, force: bool) -> list[str]:
    """Write the rollout's files; returns them (workspace-relative)."""
    check_name(name)
    require_scaffold(root)
    rollout = inside(root, f"rollouts/{name}")
    configs = {
        f"configs/eval/{name}.toml": EVAL.format(name=name),
        f"configs/training/{name}.toml": TRAINING.format(name=name),
    }
    taken = [f"rollouts/{name}/"] if rollout.exists() or rollout.is_symlink() else []
    taken += [path for path in configs if inside(root, path).exists()]
    if taken and not force:
        raise InvalidInputError(
            f"{', '.join(taken)} already exist{'s' if len(taken) == 1 else ''}",
            hint="pick another name, or pass --force to replace them",
            code="CONFLICT",
        )
    if rollout.is_symlink() or (rollout.exists() and not rollout.is_dir()):
        raise InvalidInputError(f"rollouts/{name} is not a folder", code="CONFLICT")
    if rollout.exists():
        shutil.rmtree(rollout)
    rollout.mkdir(parents=True)
    skeleton = example_root() / SKELETON
    files = {
        f"rollouts/{name}/main.py": _renamed(
            (skeleton / "rollouts/calculator/main.py").read_text(), name
        ),
        f"rollouts/{name}/pyproject.toml": _renamed(
            (skeleton / "rollouts/calculator/pyproject.toml").read_text(), name
        ),
        f"rollouts/{name}/README.md": README.format(name=name),
        **configs,
    }
    data = f"data/{name}.jsonl"
    if not inside(root, data).exists():  # a dataset is never replaced
        rows = (skeleton / "data/arithmetic.jsonl").read_text().splitlines(keepends=True)
        files[data] = "".join(rows[:10])
    for path, text in files.items():
        target = inside(root, path)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    return sorted(files)


def _renamed(text: str, name: str) -> str:
    camel = "".join(part.capitalize() for part in name.split("-") if part)
    return text.replace("Calculator", camel).replace("calculator", name)
