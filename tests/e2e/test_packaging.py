"""Packaging: nothing is installed under a generic name, and the wheel carries the examples.

A user project with its own ``cli`` and ``local_runner`` packages must run under
``osmosis eval -m`` and ``osmosis eval run`` — with the editable install the suite
runs on, and with the wheel a user would get from the package index.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests import envelopes
from tests.e2e.conftest import osmosis_command

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow


def user_project(base: Path) -> Path:
    """A project whose own `cli` and `local_runner` packages its rollout imports."""
    project = base / "project"
    files = {
        "cli/__init__.py": "def helper() -> str:\n    return 'from the user cli'\n",
        "local_runner/__init__.py": "THING = 'from the user local_runner'\n",
        "wf.py": """
            from cli import helper
            from local_runner import THING
            from osmosis_client.rollout import AgentWorkflow

            class Workflow(AgentWorkflow):
                async def run(self, ctx):
                    reply = await ctx.chat(ctx.prompt)
                    return [*ctx.prompt, reply]

            def score(solution_str, ground_truth, extra_info=None):
                assert helper() == "from the user cli" and THING.startswith("from the user")
                return 1.0 if solution_str.strip() == ground_truth else 0.0
            """,
        "rollouts/calc/main.py": """
            from cli import helper
            from local_runner import THING
            from osmosis_client.rollout import AgentWorkflow, Grader

            class Calc(AgentWorkflow):
                async def run(self, ctx):
                    return [*ctx.prompt, await ctx.chat(ctx.prompt)]

            class Exact(Grader):
                async def grade(self, ctx):
                    assert helper() == "from the user cli" and THING
                    return 1.0 if ctx.solution_str.strip() == ctx.ground_truth else 0.0
            """,
        "configs/eval/calc.toml": """
            [experiment]
            rollout = "calc"
            entrypoint = "main.py"
            model_path = "mock/calculator"
            dataset = "calc"

            [evaluation]
            limit = 3
            """,
        "data/calc.jsonl": "".join(
            json.dumps({"user_prompt": f"What is {i} + {i}?", "ground_truth": str(2 * i)}) + "\n"
            for i in range(4)
        ),
    }
    for name, text in files.items():
        path = project / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return project


def run(command: list[str], cwd: Path, env: dict[str, str] | None = None) -> dict:  # type: ignore[type-arg]
    result = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=120, env=env)
    assert result.returncode == 0, result.stderr
    return envelopes.resource(result.stdout)


def check_user_project(osmosis: list[str], base: Path, env: dict[str, str] | None = None) -> None:
    project = user_project(base)
    seed = run(
        [
            *osmosis,
            "eval",
            "-m",
            "wf:Workflow",
            "-d",
            "data/calc.jsonl",
            "--model",
            "mock/calculator",
            "--eval-fn",
            "wf:score",
            "--json",
            "-o",
            "seed.json",
        ],
        project,
        env,
    )
    assert seed["summary"]["errored_runs"] == 0 and not seed["rows"][0]["runs"][0].get("fn_errors")
    assert seed["summary"]["eval_fns"]["wf:score"]["mean"] == 1.0
    config = run(
        [*osmosis, "eval", "run", "configs/eval/calc.toml", "--json", "-o", "run.json"],
        project,
        env,
    )
    assert config["summary"]["errored_runs"] == 0
    assert config["summary"]["eval_fns"]["grader"]["mean"] == 1.0


def test_user_cli_package_works_with_the_editable_install(tmp_path: Path) -> None:
    check_user_project(osmosis_command(), tmp_path)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    pytest.importorskip("pip", reason="building the wheel needs pip in this environment")
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(out), str(ROOT)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    (built,) = out.glob("osmosis_client-*.whl")
    yield built


def test_wheel_installs_only_unambiguous_names_and_ships_examples(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    tops = {n.split("/")[0] for n in names if not n.split("/")[0].endswith(".dist-info")}
    assert tops == {
        "osmosis_client",
        "osmosis_cli",
        "osmosis_local_runner",
        # the start-up hook that makes `import osmosis_ai` work anywhere (never a package
        # named osmosis_ai: a real one always wins)
        "_osmosis_ai_hook.py",
        "osmosis_ai_compat.pth",
    }
    assert zipfile.ZipFile(wheel).read("osmosis_ai_compat.pth") == b"import _osmosis_ai_hook\n"
    assert "osmosis_cli/_examples/quickstart/configs/eval/quickstart.toml" in names
    for package in ("osmosis_client", "osmosis_cli", "osmosis_local_runner"):
        assert f"{package}/py.typed" in names  # typed for a user's mypy and editor
    assert "osmosis_cli/_examples/multiply/rollouts/multiply-local-openai/main.py" in names
    entry_points = (
        zipfile.ZipFile(wheel)
        .read(next(n for n in names if n.endswith(".dist-info/entry_points.txt")))
        .decode()
    )
    assert "osmosis = osmosis_cli.main:main" in entry_points
    assert "osmosis-client = osmosis_cli.main:main" in entry_points  # never collides
    metadata = (
        zipfile.ZipFile(wheel)
        .read(next(n for n in names if n.endswith(".dist-info/METADATA")))
        .decode()
    )
    assert "License-Expression: Apache-2.0" in metadata
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)
    assert "Project-URL: Repository" in metadata
    assert "typer<0.30" not in metadata


def test_wheel_runs_a_user_project_and_the_quickstart(wheel: Path, tmp_path: Path) -> None:
    target = tmp_path / "site"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "-q",
            "--no-deps",
            "--target",
            str(target),
            str(wheel),
        ],
        check=True,
        capture_output=True,
        timeout=300,
    )
    env = {**os.environ, "PYTHONPATH": str(target)}  # the wheel's copy wins
    osmosis = [sys.executable, "-m", "osmosis_cli.main"]
    where = subprocess.run(
        [*osmosis[:1], "-c", "import osmosis_cli; print(osmosis_cli.__file__)"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert where.startswith(str(target))
    check_user_project(osmosis, tmp_path, env)
    init = subprocess.run(
        [*osmosis, "eval", "init", "demo", "--example", "quickstart"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert init.returncode == 0, init.stderr
    doc = run(
        [*osmosis, "eval", "run", "configs/eval/quickstart.toml", "--json"], tmp_path / "demo", env
    )
    assert doc["summary"]["total_runs"] == 60
    workspace = tmp_path / "ws"
    workspace.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=workspace, check=True)
    applied = run(  # the bundled templates work offline from the wheel
        [*osmosis, "--json", "template", "apply", "multiply-local-strands"], workspace, env
    )
    assert "rollouts/multiply-local-strands/main.py" in applied["files"]
