"""The naming rules of a benchmark config (published-cli-0.3.8-train.md §4.11): env var
names, secret references, harness credentials, reserved names — checked on the file's
values (before or without its schema), every failure reported rather than the first.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from osmosis_client.platform.config_check import Collector
from osmosis_client.platform.eval.eval_model import ENV_NAME, SECRET_NAME

#: names the benchmark runner itself reads: a model credential stored under one clashes
RUNNER_NAMES = frozenset({"DAYTONA_API_KEY", "DAYTONA_API_URL"})
#: harnesses that read a credential of their own, and the variable each reads
HARNESS_KEYS = {"cursor-cli": "CURSOR_API_KEY"}
#: harnesses the platform gives the model key under a fixed name (non-hosted models)
MODEL_KEY_VARS = {"mini-swe-agent": "MSWEA_API_KEY"}


def _table(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, dict) else {}


def _names(value: Any) -> list[str]:
    return [n for n in value if isinstance(n, str)] if isinstance(value, list) else []


def _env_names(env: Mapping[str, Any], where: list[Any], out: Collector) -> None:
    for name in env:
        if not ENV_NAME.match(name):
            out.add([*where, name], "must match ^[A-Z_][A-Z0-9_]*$ (upper-case letters, digits, _)")
        elif name.startswith("_OSMOSIS_"):
            out.add([*where, name], "names starting with _OSMOSIS_ are reserved by the platform")


def _secret_name(name: Any, where: list[Any], out: Collector) -> None:
    if isinstance(name, str) and name and not SECRET_NAME.match(name):
        out.add(
            where,
            f"{name!r} is not a secret name: use upper-case letters, digits and _, "
            "starting with a letter (^[A-Z][A-Z0-9_]*$)",
        )


def _agent(index: int, agent: Mapping[str, Any], env: Mapping[str, Any], out: Collector) -> None:
    where: list[Any] = ["agents", index]
    own_env = _table(agent.get("env"))
    _env_names(own_env, [*where, "env"], out)
    model = _table(agent.get("model"))
    key = model.get("api_key_secret")
    _secret_name(key, [*where, "model", "api_key_secret"], out)
    if key in RUNNER_NAMES:
        out.add(
            [*where, "model", "api_key_secret"],
            f"{key} is reserved by the benchmark "
            "runner; store the model credential under another secret name",
        )
    for table, label in ((env, "[env]"), (own_env, f"agent {index + 1}'s [agents.env]")):
        if isinstance(key, str) and key in table:
            out.add(
                [*where, "model", "api_key_secret"],
                f"{key!r} is also set in {label}; the "
                "platform injects the secret under that name: remove the env var",
            )
    for name in _table(model.get("extra_headers")):
        if str(name).lower() == "authorization":
            out.add(
                [*where, "model", "extra_headers", name],
                "must not include an "
                "Authorization header; use api_key_secret for the endpoint's key",
            )
    _harness(index, agent, own_env, env, model, out)


def _harness(
    index: int,
    agent: Mapping[str, Any],
    own_env: Mapping[str, Any],
    env: Mapping[str, Any],
    model: Mapping[str, Any],
    out: Collector,
) -> None:
    where: list[Any] = ["agents", index]
    harness = agent.get("harness")
    secret = agent.get("harness_api_key_secret")
    _secret_name(secret, [*where, "harness_api_key_secret"], out)
    needed = HARNESS_KEYS.get(harness) if isinstance(harness, str) else None
    label = f"the {harness} harness" if harness else "the official scaffold"
    if needed and not secret:
        out.add(
            [*where, "harness"],
            f"{label} needs harness_api_key_secret = {needed!r} (a stored secret holding {needed})",
        )
    elif needed and secret != needed:
        out.add(
            [*where, "harness_api_key_secret"],
            f"{label} reads {needed}: store the "
            f"credential as a secret named exactly {needed} and reference that",
        )
    elif secret and not needed:
        out.add(
            [*where, "harness_api_key_secret"],
            f"{label} does not use harness_api_key_secret; remove it",
        )
    if needed and (needed in env or needed in own_env):
        out.add([*where, "env"], f"{needed} is managed by {label}; remove the env var")
    fixed = MODEL_KEY_VARS.get(harness) if isinstance(harness, str) else None
    if fixed and fixed in own_env and model.get("type") != "hosted":
        out.add(
            [*where, "env", fixed],
            f"the platform injects the model key as {fixed} for {label}; remove the env var",
        )


def _listed(table: str, names: list[str], env: Mapping[str, Any], out: Collector) -> None:
    seen: set[str] = set()
    for name in names:
        _secret_name(name, [table, "required"], out)
        if name in seen:
            out.add([table, "required"], f"{name!r} is listed twice")
        seen.add(name)
        if name in env:
            out.add(
                [table, "required"],
                f"{name!r} is also set in [env]; the platform "
                "injects the secret under that name: remove the env var",
            )


def check_names(data: Mapping[str, Any], out: Collector) -> None:
    """Every naming rule over the file's values; problems go to ``out``."""
    env = _table(data.get("env"))
    _env_names(env, ["env"], out)
    agents = data.get("agents")
    for index, agent in enumerate(agents if isinstance(agents, list) else []):
        if isinstance(agent, dict):
            _agent(index, agent, env, out)
    execution = _table(data.get("execution"))
    judge = execution.get("judge_api_key_secret")
    _secret_name(judge, ["execution", "judge_api_key_secret"], out)
    if isinstance(judge, str) and judge in env:
        message = f"{judge!r} is also set in [env]; the platform injects the judge secret"
        out.add(["execution", "judge_api_key_secret"], message + " under that name: remove it")
    _listed("verifier", _names(_table(data.get("verifier")).get("required")), env, out)
    _listed("secrets", _names(_table(data.get("secrets")).get("required")), env, out)


__all__ = ["HARNESS_KEYS", "MODEL_KEY_VARS", "RUNNER_NAMES", "check_names"]
