"""A starter benchmark config (``osmosis benchmark init``): one agent on one benchmark,
every optional table shown commented with what it does — a file that validates as it is
written and submits once its secret is stored."""

from __future__ import annotations

import re
from pathlib import Path

from osmosis_client.errors import InvalidInputError

CONFIG_DIR = Path("configs") / "benchmark"
DEFAULT_BENCHMARK = "terminal-bench-2-1"

STARTER = """\
# A benchmark run: `osmosis benchmark submit {path}`.
# Every key is checked before anything is sent (`osmosis benchmark submit` says where).

[experiment]
# A key from `osmosis benchmark list` (its name works too).
benchmark = "{benchmark}"

# Every task runs unless you narrow them (one selector; task_set wins):
# [tasks]
# task_set = "parity"                       # the published comparison set, where one exists
# task_names = ["terminal-bench/git-multibranch"]
# categories = ["software-engineering"]

[execution]
attempts_per_task = 1
max_concurrent_attempts = 4
timeout_multiplier = 1.0
max_retries = 0
# A judge, for benchmarks whose `osmosis benchmark info` lists an LLM judge:
# judge_model = "openai/gpt-5.2"
# judge_api_key_secret = "OPENAI_API_KEY"

# Secrets the run reads by name that no key above names (store each with
# `osmosis secret set NAME`; values never go in this file):
# [secrets]
# required = ["WEATHER_API_KEY"]

# [env]
# LOG_LEVEL = "info"

# One table per agent; keep [[agents]] last (tables after it belong to the agent).
[[agents]]
harness = "codex"

[agents.model]
type = "provider"
model = "openai/gpt-5.2"
api_key_secret = "OPENAI_API_KEY"             # the stored secret holding the model's key
"""


def write_starter(
    root: Path, name: str = "default", *, benchmark: str = DEFAULT_BENCHMARK, force: bool = False
) -> Path:
    """Write ``configs/benchmark/NAME.toml`` under the workspace ``root``; an existing
    file is refused unless ``force``, and nothing is written through a symbolic link."""
    from osmosis_client._fs import atomic_write
    from osmosis_client.platform.eval.run_download import refuse_links

    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}", name) or name.endswith(".toml"):
        raise InvalidInputError(
            f"{name!r} is not a config name",
            hint="use letters, digits, '.', '_' and '-' (the file is NAME.toml)",
            code="VALIDATION",
        )
    if not benchmark.strip() or '"' in benchmark or "\n" in benchmark:
        raise InvalidInputError(f"{benchmark!r} is not a benchmark key", code="VALIDATION")
    path = root / CONFIG_DIR / f"{name}.toml"
    refuse_links(root, path, "a config is", "remove the link, or write the config elsewhere")
    if path.exists() and not force:
        raise InvalidInputError(
            f"{path} already exists", hint="keep it, or replace it (force)", code="FILE_EXISTS"
        )
    text = STARTER.format(path=(CONFIG_DIR / f"{name}.toml").as_posix(), benchmark=benchmark)
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, text.encode())
    return path


__all__ = ["CONFIG_DIR", "DEFAULT_BENCHMARK", "STARTER", "write_starter"]
