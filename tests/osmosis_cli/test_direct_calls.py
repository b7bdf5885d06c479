"""Commands driven without a command line (gh's ``runF`` seam,
``osmosis_cli.direct``): an options object in, one library call, rendering
out — and the flag parsing tested alone, with a recording run function."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import respx
from typer.testing import CliRunner

from osmosis_cli.commands.eval.hosted.runs import ListOptions, list_runs
from osmosis_cli.commands.eval.local.run import RunOptions, run
from osmosis_cli.direct import call
from osmosis_cli.terminal.declare import Command, options_command
from osmosis_local_runner import load_run

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "quickstart"
CONFIG = Path("configs/eval/quickstart.toml")


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "qs"
    shutil.copytree(EXAMPLE, root, ignore=shutil.ignore_patterns(".osmosis"))
    monkeypatch.chdir(root)
    return root


def test_eval_run_called_directly_writes_the_run_the_library_loads(project: Path) -> None:
    outcome = call(run, RunOptions(config_path=CONFIG, name="direct", limit=2), output="json")
    assert outcome.exit_code == 0, outcome.stderr
    document = outcome.document()
    assert document["resource"]["run_name"] == "direct"
    loaded = load_run("direct", root=project)
    assert loaded.status == "finished" and loaded.name == "direct"
    again = call(run, RunOptions(config_path=CONFIG, name="direct", limit=2), output="json")
    assert again.exit_code == 0 and "already complete" in again.document()["message"]


def test_a_bad_option_is_one_line_and_exit_2_without_argv(project: Path) -> None:
    outcome = call(run, RunOptions(config_path=Path("configs/eval/missing.toml")))
    assert outcome.exit_code == 2
    assert "Traceback" not in outcome.stderr and len(outcome.stderr.strip().splitlines()) <= 2


def test_the_parsing_alone_with_a_recording_run() -> None:
    seen: list[RunOptions] = []

    def recorder(ctx: Any, opts: RunOptions) -> None:
        seen.append(opts)

    import typer

    app = typer.Typer()
    app.command("run", cls=Command)(options_command(RunOptions, recorder))
    app.command("other")(lambda: None)  # two commands: "run" is a subcommand, as in the CLI
    argv = ["run", "x.toml", "--name", "a", "--rows", "1,3-4", "--max-in-flight", "7", "--n", "2"]
    result = CliRunner().invoke(app, argv)
    assert result.exit_code == 0, result.output
    (opts,) = seen
    assert (opts.config_path, opts.name, opts.rows_spec, opts.n) == (
        Path("x.toml"),
        "a",
        "1,3-4",
        2,
    )
    settings = opts.run_settings()
    assert settings.batch_size == 7  # --max-in-flight is the window
    assert settings.rows == frozenset({1, 3, 4}) and settings.n == 2


def test_eval_list_called_directly_with_a_workspace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OSMOSIS_TOKEN", "t")
    with respx.mock(base_url="https://platform.test") as router:
        route = router.get("/api/cli/eval-runs").respond(
            200, json={"eval_runs": [], "total_count": 0, "has_more": False, "next_offset": None}
        )
        outcome = call(
            list_runs,
            ListOptions(),
            output="json",
            workspace="acme",
            platform_url="https://platform.test",
        )
    assert outcome.exit_code == 0, outcome.stderr
    assert route.calls.last.request.headers["X-Osmosis-Workspace"] == "acme"
    assert json.loads(outcome.stdout)["items"] == []
