"""``osmosis rollout validate [NAME|CONFIG]``: load a rollout the way a run would — a
published-SDK rollout in its own environment, an in-process one here — find its
workflow and grader, and say what is wrong. Nothing is sent to a model.

A published-SDK rollout's entrypoint is imported (not run: its ``__main__`` block, which
starts the server, is skipped) by a short script in the rollout's own Python, with a
time limit; what the user's code prints is ignored, only the script's last JSON line
counts.
"""

from __future__ import annotations

import subprocess
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from osmosis_client.errors import InvalidInputError, OsmosisError

IMPORT_TIMEOUT = 120.0

#: run in the rollout's Python, from its folder: what its entrypoint defines
INSPECT = r"""
import importlib.util, inspect, json, sys, traceback
path = sys.argv[1]
found = {"workflows": [], "graders": [], "servers": False, "error": None}
try:
    from osmosis_ai.rollout.agent_workflow import AgentWorkflow
    from osmosis_ai.rollout.grader import Grader
    sys.path.insert(0, ".")
    name = path.rsplit("/", 1)[-1].removesuffix(".py")
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    for value in list(vars(module).values()):
        for base, key in ((AgentWorkflow, "workflows"), (Grader, "graders")):
            if inspect.isclass(value) and issubclass(value, base) and value is not base:
                found[key].append(f"{value.__module__}.{value.__qualname__}")
    found["servers"] = "create_rollout_server" in vars(module)
except BaseException as exc:
    lines = traceback.format_exception_only(type(exc), exc)
    found["error"] = lines[-1].strip()[:500]
sys.stdout.write("\n" + json.dumps(found) + "\n")
"""


@dataclass
class Report:
    name: str
    entrypoint: str
    mode: str
    python: str | None = None
    workflows: list[str] = field(default_factory=list)
    graders: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "valid": self.ok}


def targets(root: Path, given: str | None) -> list[tuple[Path, Path]]:
    """(rollout folder, entrypoint) of a config, a rollout name, or every rollout."""
    from osmosis_client.platform.eval.eval_config import load_config

    if given is not None and given.endswith(".toml"):
        config = load_config(Path(given))
        return [(config.rollout_dir, config.entrypoint_path)]
    names = (
        [given] if given else sorted(p.name for p in (root / "rollouts").glob("*") if p.is_dir())
    )
    found = []
    for name in names:
        folder = root / "rollouts" / name
        if not folder.is_dir():
            raise InvalidInputError(
                f"no rollout {name!r} (rollouts/{name} does not exist)",
                hint="name a folder under rollouts/, or a configs/eval/*.toml",
                code="NOT_FOUND",
            )
        found.append((folder, folder / _entrypoint(root, name)))
    return found


def _entrypoint(root: Path, name: str) -> str:
    """The entrypoint its eval config names, else main.py."""
    from osmosis_client.platform.eval.eval_config import load_config

    config = root / "configs" / "eval" / f"{name}.toml"
    if config.is_file():
        try:
            return load_config(config).experiment.entrypoint
        except OsmosisError:
            pass
    return "main.py"


def validate(folder: Path, entrypoint: Path, python: Path | None = None) -> Report:
    from osmosis_local_runner.api.doors import detect

    shown = f"rollouts/{folder.name}/{entrypoint.name}"
    mode = detect(folder, entrypoint).mode
    report = Report(folder.name, shown, mode)
    if not entrypoint.is_file():
        report.problems.append(f"{shown} does not exist")
        return report
    try:
        if mode == "server":
            _server(report, folder, entrypoint, python)
        else:
            _native(report, folder, entrypoint)
    except OsmosisError as exc:
        report.problems.append(exc.message)
    return report


def _native(report: Report, folder: Path, entrypoint: Path) -> None:
    from osmosis_local_runner.api.doors import load_rollout

    rollout, grader = load_rollout(entrypoint, folder.parent.parent)
    report.python = "this osmosis-client (in-process)"
    report.workflows = [rollout.describe()]
    report.graders = [grader.name]


def _server(report: Report, folder: Path, entrypoint: Path, given: Path | None) -> None:
    from osmosis_local_runner.api.doors import last_json, resolve, tool_env

    python = resolve(folder, given=given)
    report.python = python.describe()
    try:
        done = subprocess.run(
            [str(python.executable), "-c", INSPECT, str(entrypoint.resolve())],
            cwd=folder,
            capture_output=True,
            text=True,
            env=tool_env(),
            timeout=IMPORT_TIMEOUT,
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired:
        report.problems.append(f"importing it took over {IMPORT_TIMEOUT:g}s (a loop at import?)")
        return
    found = last_json(done.stdout)
    if found is None:
        report.problems.append(f"importing it stopped the interpreter (exit {done.returncode})")
        return
    if found.get("error"):
        report.problems.append(f"importing it failed: {found['error']}")
        return
    report.workflows, report.graders = found["workflows"], found["graders"]
    if not report.workflows:
        report.problems.append("no AgentWorkflow subclass is defined in it")
    if not report.graders:
        report.problems.append("no Grader subclass is defined in it (every attempt would fail)")
    if not found.get("servers"):
        report.problems.append("it does not use create_rollout_server (nothing would serve it)")
