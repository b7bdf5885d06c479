"""Eval configs (``configs/eval/*.toml``): load, validate every value, report all problems.

The same :class:`EvalConfig` serves ``eval submit`` (``[local]`` ignored) and the
local runner. Problems come as ``FILE:LINE:COL: key: message``; unknown keys get
a "did you mean" suggestion. Nothing here touches the network or runs user code.
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from osmosis_client._toml import locate_keys
from osmosis_client.errors import ConfigError, Problem
from osmosis_client.platform.eval_model import (
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


class _Collector:
    def __init__(self, file: str, positions: Mapping[tuple[str, ...], tuple[int, int]]) -> None:
        self.file = file
        self.positions = positions
        self.problems: list[Problem] = []

    def add(self, path: Iterable[str | int], message: str) -> None:
        keys = tuple(str(p) for p in path if not isinstance(p, int))
        line = col = None
        for n in range(len(keys), 0, -1):
            if keys[:n] in self.positions:
                line, col = self.positions[keys[:n]]
                break
        self.problems.append(Problem(self.file, line, col, ".".join(keys), message))


def _suggest(word: str, options: Iterable[str]) -> str:
    close = difflib.get_close_matches(word, list(options), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _pydantic_message(err: Mapping[str, Any]) -> str:
    kind = err["type"]
    ctx = err.get("ctx") or {}
    if kind == "missing":
        return "is required"
    if kind in ("int_type", "int_parsing"):
        return "must be an integer"
    if kind in ("float_type", "float_parsing"):
        return "must be a number"
    if kind in ("string_type",):
        return "must be a string"
    if kind in ("list_type",):
        return "must be an array"
    if kind in ("dict_type", "model_type"):
        return "must be a table"
    if kind == "greater_than_equal":
        return f"must be >= {ctx.get('ge')}"
    if kind == "greater_than":
        return f"must be > {ctx.get('gt')}"
    if kind == "literal_error":
        return f"must be one of {ctx.get('expected')}"
    if kind == "string_too_short":
        return "must not be empty"
    return str(err["msg"])


# ----------------------------------------------------------------- validation


def _find_root(config_path: Path) -> Path:
    """The project root: the nearest ancestor holding ``rollouts/`` (or ``.git``)."""
    start = config_path.resolve().parent
    for candidate in (start, *start.parents):
        if (candidate / "rollouts").is_dir():
            return candidate
    for candidate in (start, *start.parents):
        if (candidate / ".git").exists():
            return candidate
    return Path.cwd()


def _check_structure(data: Mapping[str, Any], out: _Collector) -> None:
    for key, value in data.items():
        if key not in TOP_KEYS:
            out.add([key], f"unknown section{_suggest(key, TOP_KEYS)}")
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
                out.add([key, sub], f"unknown key{_suggest(sub, fields)}")
    if "experiment" not in data:
        out.add(["experiment"], "the [experiment] section is required")


def _check_types(data: Mapping[str, Any], out: _Collector) -> None:
    for section, model in SECTIONS.items():
        value = data.get(section)
        if not isinstance(value, dict):
            continue
        known = {k: v for k, v in value.items() if k in model.model_fields}
        try:
            model.model_validate(known)
        except ValidationError as exc:
            for err in exc.errors():
                out.add([section, *err["loc"]], _pydantic_message(err))
    env = data.get("env")
    if isinstance(env, dict):
        for key, value in env.items():
            if not isinstance(value, str):
                out.add(["env", key], "must be a string")


def _check_rules(data: Mapping[str, Any], root: Path, out: _Collector) -> None:
    if isinstance(data.get("experiment"), dict):
        _check_experiment(data["experiment"], root, out)
    if isinstance(data.get("evaluation"), dict):
        _check_evaluation(data["evaluation"], ["evaluation"], out)
    _check_env_and_secrets(data, out)
    if isinstance(data.get("local"), dict):
        _check_local(data["local"], out)


def _check_experiment(exp: Mapping[str, Any], root: Path, out: _Collector) -> None:
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


def _check_evaluation(evaluation: Mapping[str, Any], where: list[str], out: _Collector) -> None:
    for key in ("pass_threshold", "agent_workflow_timeout_s", "grader_timeout_s"):
        value = evaluation.get(key)
        if isinstance(value, float) and not math.isfinite(value):
            out.add([*where, key], "must be a finite number")


def _check_env_and_secrets(data: Mapping[str, Any], out: _Collector) -> None:
    env = data.get("env")
    env_keys = set(env) if isinstance(env, dict) else set()
    for key in env_keys:
        if not ENV_NAME.match(key):
            out.add(["env", key], "must match ^[A-Z_][A-Z0-9_]*$ (upper-case letters, digits, _)")
        elif key.startswith("OSMOSIS_"):
            out.add(["env", key], "names starting with OSMOSIS_ are reserved")
        elif key in ROLLOUT_SERVER_VARS:
            out.add(["env", key], "is set for the rollout server by the runner; remove it")
    secrets = data.get("secrets")
    required = secrets.get("required") if isinstance(secrets, dict) else None
    if not isinstance(required, list):
        return
    seen: set[str] = set()
    for name in required:
        if not isinstance(name, str):
            continue
        if not SECRET_NAME.match(name):
            out.add(["secrets", "required"], f"{name!r} must match ^[A-Z][A-Z0-9_]*$")
        if name in seen:
            out.add(["secrets", "required"], f"{name!r} is listed twice")
        seen.add(name)
        if name in env_keys:
            out.add(["secrets", "required"], f"{name!r} is also set in [env]")


def _check_local(local: Mapping[str, Any], out: _Collector) -> None:
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


def _check_entrypoint(folder: Path, entry: str, out: _Collector) -> None:
    parts = Path(entry).parts
    if not entry or Path(entry).is_absolute() or ".." in parts or "\\" in entry:
        out.add(["experiment", "entrypoint"], "must be a relative path inside the rollout folder")
    elif not entry.endswith(".py"):
        out.add(["experiment", "entrypoint"], "must be a .py file")
    elif not (folder / entry).is_file():
        out.add(["experiment", "entrypoint"], f"{folder.name}/{entry} does not exist")


def _last_mention(text: str, message: str) -> tuple[int | None, int | None]:
    """Where a key named in a tomlkit message (e.g. a duplicate) last appears."""
    match = re.search(r'"([^"]+)"', message)
    if not match:
        return None, None
    key = match.group(1).split(".")[-1]
    pattern = re.compile(rf"^\s*[\"']?{re.escape(key)}[\"']?\s*=")
    found: tuple[int | None, int | None] = (None, None)
    for lineno, line in enumerate(text.splitlines(), 1):
        if pattern.match(line):
            found = (lineno, len(line) - len(line.lstrip()) + 1)
    return found


def parse_config(text: str, *, path: Path, root: Path | None = None) -> EvalConfig:
    """Validate TOML ``text``; raise :class:`ConfigError` listing every problem."""
    import tomlkit
    from tomlkit.exceptions import ParseError, TOMLKitError

    shown = str(path)
    try:
        document = tomlkit.parse(text)
    except TOMLKitError as exc:
        message = str(exc).split(" at line ")[0]
        line: int | None
        col: int | None
        if isinstance(exc, ParseError):
            line, col = exc.line, exc.col + 1
        else:
            line, col = _last_mention(text, message)
        problem = Problem(shown, line, col, "", f"invalid TOML: {message}")
        raise ConfigError(
            f"{shown} is not valid TOML", [problem], hint="fix the syntax at the position shown"
        ) from None
    data: dict[str, Any] = document.unwrap()
    root = root or _find_root(path)
    out = _Collector(shown, locate_keys(text))
    _check_structure(data, out)
    _check_types(data, out)
    _check_rules(data, root, out)
    if out.problems:
        count = len(out.problems)
        raise ConfigError(
            f"{shown} has {count} problem{'s' if count > 1 else ''}",
            out.problems,
            hint="fix the keys listed below",
        )
    return EvalConfig.model_validate({**data, "path": path, "root": root})


def load_config(path: str | Path, *, root: Path | None = None) -> EvalConfig:
    """Read and validate an eval config file."""
    path = Path(path)
    return parse_config(read_config_text(path), path=path, root=root)


def read_config_text(path: Path) -> str:
    """A config file's text; a missing, unreadable or non-UTF-8 file is a ConfigError."""
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(
            f"config file {path} does not exist", hint="check the path", code="CONFIG_NOT_FOUND"
        ) from None
    except IsADirectoryError:
        raise ConfigError(f"{path} is a directory, not a config file") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{path} is not UTF-8 text") from None
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror}") from None
