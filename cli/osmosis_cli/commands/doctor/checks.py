"""What ``osmosis doctor`` checks — every check the published one makes (the workspace
folder, its scaffold paths, the git identity, the linked workspace) and what a user
actually trips on: each eval config, each rollout's environment, the login and its
expiry, ``origin`` against the active workspace, the configured model endpoints, and
which ``osmosis`` is first on ``PATH``.

A check is ``ok``, ``warning`` (worth knowing; nothing is broken for a local run) or
``error`` (something a run or a submit will refuse). Nothing here downloads or syncs.
"""

from __future__ import annotations

import contextlib
import shutil
import subprocess
from dataclasses import asdict, dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from osmosis_client.errors import OsmosisError

if TYPE_CHECKING:
    from osmosis_cli.context import AppState
    from osmosis_client.platform.eval.eval_config import EvalConfig

EXPIRY_WARNING = timedelta(days=7)
PROBE_TIMEOUT = 3.0


@dataclass
class Check:
    name: str
    status: str  # ok | warning | error
    message: str
    fix: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if v is not None}


def ok(name: str, message: str) -> Check:
    return Check(name, "ok", message)


def warn(name: str, message: str, fix: str | None = None) -> Check:
    return Check(name, "warning", message, fix)


def error(name: str, message: str, fix: str | None = None) -> Check:
    return Check(name, "error", message, fix)


# ------------------------------------------------------------------ the workspace


def git_identity(root: Path) -> tuple[dict[str, Any], Check]:
    from osmosis_client.platform.git import origin_repo

    url = _origin_url(root)
    if url is None:
        check = warn(
            "git",
            "no `origin` remote: eval submit needs the repository connected on the platform",
            "git remote add origin git@github.com:OWNER/REPO.git",
        )
        return {"identity": None, "remote_url": None}, check
    identity = origin_repo(root)
    shown = _without_credentials(url)
    if identity is None:
        message = f"origin {shown} is not a GitHub owner/repo the platform can sync"
        return {"identity": None, "remote_url": shown, "warning": message}, warn("git", message)
    return {"identity": identity, "remote_url": shown}, ok("git", f"origin is {identity}")


def _origin_url(root: Path) -> str | None:
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        done = subprocess.run(
            ["git", "-C", str(root), "remote", "get-url", "origin"],
            capture_output=True,
            text=True,
            timeout=10,
        )
        return done.stdout.strip() or None if done.returncode == 0 else None
    return None


def _without_credentials(url: str) -> str:
    from osmosis_client._redact import redact_url

    return redact_url(url) if "://" in url else url


def which_osmosis() -> tuple[dict[str, Any], Check]:
    """The ``osmosis`` first on PATH, and whether it is this package's."""
    found = shutil.which("osmosis")
    if found is None:
        message = "no `osmosis` on PATH (this one runs as `osmosis-client`, or via python -m)"
        return {"path": None, "ours": False}, warn("osmosis", message)
    try:
        head = Path(found).read_text(encoding="utf-8", errors="replace")[:2000]
    except OSError:
        head = ""
    ours = "osmosis_cli" in head
    info = {"path": found, "ours": ours}
    if ours:
        return info, ok("osmosis", f"`osmosis` on PATH is osmosis-client ({found})")
    message = f"`osmosis` on PATH ({found}) is another package's (the published osmosis-ai?)"
    fix = "run `osmosis-client …`, or install osmosis-client as a tool (uv tool install)"
    return info, warn("osmosis", message, fix)


# ------------------------------------------------------------------ the platform


def login(app_state: AppState, identity: str | None) -> tuple[dict[str, Any] | None, list[Check]]:
    """The login, its expiry and (online, best effort) the workspace linked to origin."""
    try:
        auth = app_state.resolve()
    except OsmosisError as exc:
        return None, [warn("login", f"not logged in ({exc.message})", "osmosis auth login")]
    checks = [ok("login", f"logged in ({auth.source})")]
    if auth.expires_at:
        with contextlib.suppress(ValueError):
            expires = datetime.fromisoformat(auth.expires_at.replace("Z", "+00:00"))
            left = expires - datetime.now(timezone.utc)
            if left <= timedelta(0):
                checks[0] = warn("login", "the login has expired", "osmosis auth login")
            elif left < EXPIRY_WARNING:
                checks.append(
                    warn("login", f"the login expires in {left.days} day(s)", "osmosis auth login")
                )
    linked, more = _linked(app_state, auth.workspace, identity)
    return linked, checks + more


def _linked(
    app_state: AppState, workspace: str | None, identity: str | None
) -> tuple[dict[str, Any] | None, list[Check]]:
    try:
        client, _ = app_state.scoped_client()
        with client:
            verified = client.auth.verify()
            workspaces = client.workspaces.list() if workspace else []
    except OsmosisError as exc:
        return None, [warn("platform", f"could not check with the platform: {exc.message}")]
    linked = None
    if verified.workspace is not None:
        linked = {
            "id": verified.workspace.id,
            "name": verified.workspace.name,
            "role": verified.workspace.role,
        }
    checks = [ok("platform", f"the platform answers ({app_state.platform_url()})")]
    match = next((w for w in workspaces if workspace in (w.name, w.id)), None)
    connected = (
        match.connected_repo.repo_full_name.lower() if match and match.connected_repo else None
    )
    if connected and identity and connected != identity.lower():
        checks.append(
            error(
                "workspace",
                f"workspace {workspace} is connected to {connected}, but origin is {identity}",
                "osmosis workspace switch NAME (the one connected to this repository)",
            )
        )
    elif connected:
        checks.append(ok("workspace", f"workspace {workspace} is connected to {connected}"))
    return linked, checks


# ------------------------------------------------------------------ configs and rollouts


def configs(root: Path) -> tuple[list[EvalConfig], list[Check]]:
    from osmosis_client.platform.eval.eval_config import load_config
    from osmosis_client.platform.eval.suite_config import looks_like_suite

    found, checks = [], []
    for path in sorted((root / "configs" / "eval").glob("*.toml")):
        shown = path.relative_to(root).as_posix()
        if looks_like_suite(path):
            checks.append(ok(shown, "a suite (checked when it runs: --dry-run)"))
            continue
        try:
            found.append(load_config(path))
        except OsmosisError as exc:
            problems = [_located(p) for p in getattr(exc, "problems", ())]
            checks.append(error(shown, "; ".join(problems) or exc.message))
            continue
        checks.append(ok(shown, "valid"))
    return found, checks


def _located(problem: Any) -> str:
    """``line 2: experiment.rollout: must be a string`` — the check already names the file."""
    where = f"line {problem.line}: " if problem.line is not None else ""
    key = f"{problem.key}: " if problem.key else ""
    return f"{where}{key}{problem.message}"


def rollouts(root: Path, found: list[EvalConfig]) -> list[Check]:
    """Each configured rollout: present, and its environment (without syncing it)."""
    from osmosis_local_runner.api.doors import detect

    checks: list[Check] = []
    seen: set[Path] = set()
    for config in found:
        if config.entrypoint_path in seen:
            continue
        seen.add(config.entrypoint_path)
        shown = f"rollouts/{config.experiment.rollout}/{config.experiment.entrypoint}"
        if not config.entrypoint_path.is_file():
            checks.append(error(shown, f"does not exist (named by {config.name})"))
            continue
        mode = detect(config.rollout_dir, config.entrypoint_path).mode
        if mode == "native":
            checks.append(ok(shown, "in-process rollout (runs inside osmosis-client)"))
        else:
            checks.append(_server_environment(shown, config.rollout_dir))
    return checks


def _server_environment(shown: str, folder: Path) -> Check:
    """A published-SDK rollout: uv (or a .venv), a Python >= 3.12, its synced SDK."""
    from osmosis_local_runner.api.doors import find_uv, fingerprint, sync_target, tool_env

    uv = find_uv()
    if uv is None:
        if (folder / ".venv" / "bin" / "python").exists():
            return ok(shown, "rollout server; its own .venv (no uv)")
        return error(shown, "rollout server, but uv is not installed", "pip install uv")
    target = sync_target(folder)
    if fingerprint(folder, target.environment) is None:
        done = subprocess.run(
            [uv, "python", "find", ">=3.12"],
            capture_output=True,
            text=True,
            env=tool_env(),
            timeout=30,
        )
        if done.returncode != 0:
            return error(
                shown,
                "rollout server, but uv finds no Python >= 3.12 here",
                "install one (or point UV_PYTHON at it)",
            )
        return warn(shown, "rollout server; its environment is synced on the first run")
    probe = subprocess.run(
        [str(target.python), "-c", "import osmosis_ai, sys; print(sys.version.split()[0])"],
        capture_output=True,
        text=True,
        env=tool_env(),
        timeout=60,
    )
    if probe.returncode != 0:
        return error(shown, "its environment cannot import osmosis_ai", "osmosis rollout validate")
    return ok(shown, f"rollout server; Python {probe.stdout.strip()} with osmosis-ai")


def endpoints(found: list[EvalConfig]) -> list[Check]:
    """Each configured model: a mock is fine; a base_url must answer; a provider needs
    its key in the environment."""
    import httpx

    from osmosis_client.llm.providers import ModelSpec

    checks, seen = [], set()
    for config in found:
        exp, local = config.experiment, config.local
        key = (exp.model_path, local.base_url)
        if key in seen:
            continue
        seen.add(key)
        name = f"model {exp.model_path}"
        if exp.model_path.startswith("mock/"):
            checks.append(ok(name, "offline mock"))
            continue
        if local.base_url:
            try:
                response = httpx.get(local.base_url.rstrip("/") + "/models", timeout=PROBE_TIMEOUT)
                checks.append(ok(name, f"{local.base_url} answers (HTTP {response.status_code})"))
            except httpx.HTTPError as exc:
                checks.append(
                    warn(name, f"{local.base_url} does not answer ({type(exc).__name__})")
                )
            continue
        try:
            ModelSpec(exp.model_path, api_key_env=local.api_key_env).resolve()
            checks.append(ok(name, "its key is set for local runs"))
        except OsmosisError as exc:
            checks.append(warn(name, f"local runs need it: {exc.message}", exc.hint))
    return checks
