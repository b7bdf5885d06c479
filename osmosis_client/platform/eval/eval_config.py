"""Eval configs (``configs/eval/*.toml``): load, validate every value, report all problems.

The same :class:`EvalConfig` serves ``eval submit`` (``[local]`` ignored) and the
local runner. Problems come as ``FILE:LINE:COL: key: message``; unknown keys get
a "did you mean" suggestion. Nothing here touches the network or runs user code.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Collection, Mapping
from pathlib import Path
from typing import Any

from osmosis_client._toml import locate_keys
from osmosis_client.platform.config_check import (
    PLACEHOLDER,
    Collector,
    check_sent_values,
    check_tables,
    parse_toml,
    pydantic_message,
    read_config_text,
    suggest,
)
from osmosis_client.platform.eval.eval_model import (
    BRANCH,
    ENV_NAME,
    HEX_SHA,
    ROLLOUT_SERVER_VARS,
    SAFE_SEGMENT,
    SECRET_NAME,
    SECTIONS,
    TOP_KEYS,
    EvalConfig,
    Evaluation,
    Experiment,
    Local,
    Secrets,
)

__all__ = [
    "BRANCH",
    "ENV_NAME",
    "HEX_SHA",
    "ROLLOUT_SERVER_VARS",
    "SAFE_SEGMENT",
    "SECRET_NAME",
    "EvalConfig",
    "Evaluation",
    "Experiment",
    "Local",
    "Secrets",
    "load_config",
    "parse_config",
    "read_config_text",
]


# ----------------------------------------------------------------- validation


def find_root(config_path: Path) -> Path:
    """The project root: the nearest ancestor holding ``rollouts/`` (or ``.git``)."""
    start = config_path.resolve().parent
    for candidate in (start, *start.parents):
        if (candidate / "rollouts").is_dir():
            return candidate
    for candidate in (start, *start.parents):
        if (candidate / ".git").exists():
            return candidate
    return Path.cwd()


def _check_structure(data: Mapping[str, Any], out: Collector) -> None:
    for key, value in data.items():
        if key not in TOP_KEYS:
            out.add([key], f"unknown section{suggest(key, TOP_KEYS)}")
            continue
        if not isinstance(value, dict):
            out.add([key], "must be a table")
            continue
        model = SECTIONS.get(key)
        if model is None:
            continue
        fields = list(model.model_fields)
        for sub in value:
            if sub not in fields:
                out.add([key, sub], f"unknown key{suggest(sub, fields)}")
    if "experiment" not in data:
        out.add(["experiment"], "the [experiment] section is required")


def check_types(data: Mapping[str, Any], out: Collector) -> None:
    """The sections' values against their models (unknown keys are said by the
    structure check) — a suite's entries are checked with it too."""
    check_tables(data, SECTIONS, out, lambda err, _: pydantic_message(err), known_only=True)


def _check_rules(
    data: Mapping[str, Any], root: Path, out: Collector, replaced: Collection[str] = ()
) -> None:
    if isinstance(data.get("experiment"), dict):
        check_experiment(data["experiment"], root, out, replaced)
    if isinstance(data.get("evaluation"), dict):
        _check_evaluation(data["evaluation"], ["evaluation"], out)
    check_env_and_secrets(data, out)
    for section in ("advanced", "env"):
        check_sent_values(data.get(section), [section], out)
    if isinstance(data.get("local"), dict):
        _check_local(data["local"], out)


#: what a template's ``<placeholder>`` in [experiment] stands for
FILL_IN = {
    "rollout": "the name of a folder under rollouts/",
    "entrypoint": "the rollout's entry file (main.py)",
    "model_path": "a base model from `osmosis model list`",
    "dataset": "a dataset from `osmosis dataset list`",
}


def check_experiment(
    exp: Mapping[str, Any], root: Path, out: Collector, replaced: Collection[str] = ()
) -> None:
    """``replaced``: keys whose value the run does not use (another is given for them,
    like ``--dataset FILE`` for ``dataset``): a template's placeholder there is no problem."""
    placeholders = [
        k
        for k, v in exp.items()
        if isinstance(v, str) and PLACEHOLDER.match(v) and k not in replaced
    ]
    for key in placeholders:
        wanted = FILL_IN.get(key, "a real value")
        out.add(["experiment", key], f"{exp[key]} is a template placeholder: set it to {wanted}")
    exp = {k: v for k, v in exp.items() if k not in placeholders}
    rollout = exp.get("rollout")
    if isinstance(rollout, str):
        if not SAFE_SEGMENT.match(rollout) or rollout in (".", ".."):
            out.add(
                ["experiment", "rollout"],
                "must be a single folder name (letters, digits, '.', '_', '-')",
            )
        elif not (root / "rollouts" / rollout).is_dir():
            out.add(["experiment", "rollout"], f"rollouts/{rollout}/ does not exist")
        elif isinstance(exp.get("entrypoint"), str):
            _check_entrypoint(root / "rollouts" / rollout, exp["entrypoint"], out)
    for key in ("model_path", "dataset"):
        value = exp.get(key)
        if isinstance(value, str) and value and (value != value.strip() or "\n" in value):
            out.add(["experiment", key], "must not contain surrounding spaces or newlines")
    sha, branch = exp.get("commit_sha"), exp.get("branch")
    if sha is not None and branch is not None:
        out.add(["experiment", "commit_sha"], "set commit_sha or branch, not both")
    if isinstance(sha, str) and not HEX_SHA.match(sha):
        out.add(["experiment", "commit_sha"], "must be 7 to 40 hexadecimal characters")
    if isinstance(branch, str) and not BRANCH.match(branch):
        out.add(["experiment", "branch"], "is not a valid git branch name")


def _check_evaluation(evaluation: Mapping[str, Any], where: list[str], out: Collector) -> None:
    for key in ("pass_threshold", "agent_workflow_timeout_s", "grader_timeout_s"):
        value = evaluation.get(key)
        if isinstance(value, float) and not math.isfinite(value):
            out.add([*where, key], "must be a finite number")


def _reserved_for_the_runner(key: str) -> str | None:
    if key.startswith("OSMOSIS_"):
        return "names starting with OSMOSIS_ are reserved"
    if key in ROLLOUT_SERVER_VARS:
        return "is set for the rollout server by the runner; remove it"
    return None


def check_env_and_secrets(
    data: Mapping[str, Any],
    out: Collector,
    reserved: Callable[[str], str | None] = _reserved_for_the_runner,
) -> None:
    """``[env]``'s names (well formed, none ``reserved`` says why it may not be used) and
    ``[secrets].required``'s (well formed, each once, none also in ``[env]``)."""
    env = data.get("env")
    env_keys = set(env) if isinstance(env, dict) else set()
    for key in sorted(env_keys):
        problem = None if ENV_NAME.match(key) else "must match ^[A-Z_][A-Z0-9_]*$ (A-Z, 0-9, _)"
        problem = problem or reserved(key)
        if problem is not None:
            out.add(["env", key], problem)
    secrets = data.get("secrets")
    required = secrets.get("required") if isinstance(secrets, dict) else None
    seen: set[str] = set()
    for name in required if isinstance(required, list) else ():
        if not isinstance(name, str):
            continue
        if not SECRET_NAME.match(name):
            out.add(["secrets", "required"], f"{name!r} must match ^[A-Z][A-Z0-9_]*$")
        elif name in seen:
            out.add(["secrets", "required"], f"{name!r} is listed twice")
        elif name in env_keys:
            out.add(["secrets", "required"], f"{name!r} is also set in [env]; keep one")
        seen.add(name)


def _check_local(local: Mapping[str, Any], out: Collector) -> None:
    from osmosis_client.errors import InvalidInputError
    from osmosis_client.llm.endpoints import header_problem, parse_header

    table = local.get("headers")
    for name, value in table.items() if isinstance(table, dict) else ():
        problem = header_problem(name, value)
        if problem is not None:
            out.add(["local", "headers", str(name)], problem)
    lines = local.get("header")
    for line in lines if isinstance(lines, list) else []:
        if isinstance(line, str):
            try:
                parse_header(line, "header")
            except InvalidInputError as exc:
                out.add(["local", "header"], exc.message)
    key_env = local.get("api_key_env")
    if isinstance(key_env, str) and not ENV_NAME.match(key_env):
        out.add(["local", "api_key_env"], "must be the NAME of an environment variable, not a key")
    base_url = local.get("base_url")
    if isinstance(base_url, str) and not re.match(r"^https?://[^\s/]+", base_url):
        out.add(["local", "base_url"], "must be an http(s) URL")


def _check_entrypoint(folder: Path, entry: str, out: Collector) -> None:
    parts = Path(entry).parts
    if not entry or Path(entry).is_absolute() or ".." in parts or "\\" in entry:
        out.add(["experiment", "entrypoint"], "must be a relative path inside the rollout folder")
    elif not entry.endswith(".py"):
        out.add(["experiment", "entrypoint"], "must be a .py file")
    elif not (folder / entry).is_file():
        out.add(["experiment", "entrypoint"], f"{folder.name}/{entry} does not exist")


def parse_config(
    text: str, *, path: Path, root: Path | None = None, replaced: Collection[str] = ()
) -> EvalConfig:
    """Validate TOML ``text``; raise :class:`ConfigError` listing every problem
    (``replaced``: [experiment] keys the caller gives another value for — a placeholder
    left there is not one)."""
    shown = str(path)
    data = parse_toml(text, shown)
    root = root or find_root(path)
    out = Collector(shown, locate_keys(text))
    _check_structure(data, out)
    check_types(data, out)
    _check_rules(data, root, out, replaced)
    out.raise_if_any()
    return EvalConfig.model_validate({**data, "path": path, "root": root})


def load_config(
    path: str | Path, *, root: Path | None = None, replaced: Collection[str] = ()
) -> EvalConfig:
    """Read and validate an eval config file (``replaced``: as :func:`parse_config`)."""
    path = Path(path)
    return parse_config(read_config_text(path), path=path, root=root, replaced=replaced)
