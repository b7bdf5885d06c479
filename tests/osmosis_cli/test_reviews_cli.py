"""``osmosis eval compare --reviewed``: people's verdicts in place of the grader's."""

from __future__ import annotations

from pathlib import Path

from tests.osmosis_cli.conftest import Invoke

RUN = ["eval", "run", "configs/eval/quickstart.toml", "--model", "mock/calculator", "-q",
       "--limit", "3"]  # fmt: skip


def test_compare_reviewed_uses_the_reviews_and_says_so(
    invoke: Invoke, quickstart_project: Path
) -> None:
    from osmosis_local_runner.api import load_run

    for name in ("a", "b"):
        assert invoke(*RUN, "--name", name).exit_code == 0
    load_run("b").review(0, 0, verdict="fail", reason="guessed")
    plain = invoke("--json", "eval", "compare", "a", "b").data()
    reviewed = invoke("--json", "eval", "compare", "a", "b", "--reviewed").data()
    assert plain["eval_fns"]["grader"]["mean_b"] == 1.0
    assert reviewed["eval_fns"]["grader"]["mean_b"] < 1.0


def test_compare_markdown_is_a_pull_requests_comment(
    invoke: Invoke, quickstart_project: Path
) -> None:
    for name, model in (("base", "mock/calculator"), ("head", "mock/echo")):
        assert invoke("eval", "run", "configs/eval/quickstart.toml", "--model", model, "-q",
                      "--limit", "3", "--name", name).exit_code == 0  # fmt: skip
    result = invoke("eval", "compare", "base", "head", "--markdown", "--fail-if-worse", "0.05")
    assert result.exit_code == 4, result.stderr  # the verdict still decides the exit
    assert result.stdout, result.stderr
    text = result.stdout
    assert text.startswith("## osmosis eval compare: `base` → `head`")
    assert "❌ **" in text and "| grader |" in text
    assert "\t" not in text  # Markdown, not the plain table
