"""Command groups import a command's module only when it is looked up, and list the
summaries of ``osmosis_cli.main``'s table — which must name every command there is."""

from __future__ import annotations

import ast
import subprocess
import sys
from typing import Any

import pytest
import typer

from osmosis_cli.main import EVAL, ROOT, command
from osmosis_cli.terminal.lazy import Entry, LazyCommands, make_lazy


def registered(target: str) -> set[str]:
    """The commands a ``module:function`` target registers, or a ``module`` target's
    ``__all__`` (its commands by name, ``list_`` for ``list``)."""
    import importlib

    module, _, function = target.partition(":")
    found = importlib.import_module(module)
    if not function:
        return {name.removesuffix("_") for name in found.__all__}
    app = typer.Typer()
    getattr(found, function)(app)
    return set(typer.main.get_group(app).commands)


@pytest.mark.parametrize("table", [ROOT, EVAL], ids=["osmosis", "eval"])
def test_the_table_names_every_command_its_targets_register(table: list[Entry]) -> None:
    targets = {entry.target for entry in table}
    named = {entry.name for entry in table}
    assert set().union(*(registered(t) for t in targets)) == named
    for entry in table:
        assert entry.name in registered(entry.target), entry


@pytest.mark.parametrize("table", [ROOT, EVAL], ids=["osmosis", "eval"])
def test_every_summary_fits_its_help_line(table: list[Entry]) -> None:
    width = 80 - 6 - max(len(entry.name) for entry in table)  # click's 80-column layout
    long = [e.summary for e in table if len(e.summary) > width or "\n" in e.summary]
    assert long == []


def test_a_loaded_group_lists_the_tables_lines_for_its_commands() -> None:
    auth = command().commands["auth"]
    login = next(entry for entry in ROOT if entry.name == "login")
    assert auth.commands["login"].get_short_help_str(80) == login.summary
    eval_group = command().get_command(None, "eval")
    assert list(eval_group.commands) == [entry.name for entry in EVAL]


def test_a_lazy_table_lists_without_importing() -> None:
    lazy = LazyCommands([Entry("a", "json:dumps", "A."), Entry("b", "json:dumps", "B.")])
    assert list(lazy) == ["a", "b"] and "a" in lazy and "z" not in lazy
    assert lazy.summary("b") == "B." and lazy.summary("z") is None
    with pytest.raises(KeyError):
        lazy["z"]
    group = make_lazy(typer.main.get_group(typer.Typer()), [Entry("x", "nope:nope", "X.")])
    assert list(group.commands) == ["x"]  # "nope" is never imported to list it
    with pytest.raises(ModuleNotFoundError):
        group.commands["x"]


MODULES = "[m for m in sys.modules if m.startswith('osmosis_cli.commands.')]"


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["--help"], set()),
        (["eval", "--help"], {"osmosis_cli.commands.eval"}),  # the group, none of its commands
        (["eval", "run", "--help"], {"osmosis_cli.commands.eval.local.commands"}),
        (["auth", "--help"], {"osmosis_cli.commands.auth"}),
    ],
)
def test_help_imports_only_what_it_shows(argv: list[str], expected: set[str]) -> None:
    code = (
        "import sys\nfrom osmosis_cli.main import main\n"
        f"sys.argv = ['osmosis', *{argv!r}]\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        f"print(sorted({MODULES}))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    imported = ast.literal_eval(out.stdout.strip().splitlines()[-1])
    assert expected <= set(imported)
    others = {"hosted", "results", "submit", "compare", "agent_loop", "dataset", "rollout"}
    assert not others & {part for m in imported for part in m.split(".")[2:]}
    if argv[0] == "--help":
        assert imported == []
    if argv[1:] == ["--help"] and argv[0] == "eval":
        assert imported == ["osmosis_cli.commands.eval"]


def test_help_reads_in_sections_for_a_newcomer(invoke: Any) -> None:
    """Issue 34: the root lists what people need first (the 0.2 commands last, in their
    own section); eval separates local, results and hosted; eval run groups its flags;
    every command's help names --json / --plain; accepted no-ops stay out of the help."""
    root = invoke("--help").stdout
    headings = [line for line in root.splitlines() if line and not line.startswith(" ")]
    sections = [h for h in headings if h.endswith(":") and h != "Options:"]
    assert sections[0] == "Evaluate:" and sections[-1].startswith("Commands of the 0.2 SDK")
    assert root.index("  eval ") < root.index("  serve ") and root.index("  eval ") < root.index(
        "  login "
    )
    evals = invoke("eval", "--help").stdout
    assert evals.index("Run locally") < evals.index("  run ") < evals.index("Run on the platform")
    assert evals.index("Run on the platform") < evals.index("  submit ")
    run = invoke("eval", "run", "--help").stdout
    for heading in (
        "What to run:",
        "Model:",
        "Concurrency and limits:",
        "Output and results:",
        "Server mode (published-SDK rollouts):",
    ):
        assert heading in run
    assert run.index("Model:") < run.index("--base-url") < run.index("Concurrency and limits:")
    assert "--log-samples" not in run and "-y, --yes" not in run
    for argv in (["eval", "run"], ["eval", "compare"], ["dataset", "upload"], ["login"]):
        assert "--json (one JSON document on stdout) or --plain" in invoke(*argv, "--help").stdout
