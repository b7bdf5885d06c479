"""``osmosis eval compare --reviewed``: people's verdicts in place of the grader's."""

from __future__ import annotations

from pathlib import Path

from tests.helpers import quickstart_run
from tests.osmosis_cli.conftest import Invoke

RUN = quickstart_run(3)


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
        assert (
            invoke(
                "eval",
                "run",
                "configs/eval/quickstart.toml",
                "--model",
                model,
                "-q",
                "--limit",
                "3",
                "--name",
                name,
            ).exit_code
            == 0
        )
    result = invoke("eval", "compare", "base", "head", "--markdown", "--fail-if-worse", "0.05")
    assert result.exit_code == 4, result.stderr  # the verdict still decides the exit
    assert result.stdout, result.stderr
    text = result.stdout
    assert text.startswith("## osmosis eval compare: `base` → `head`")
    assert "❌ **" in text and "| grader |" in text
    assert "\t" not in text  # Markdown, not the plain table


def test_report_reviewed_scores_as_people_judged_and_says_so(
    invoke: Invoke, quickstart_project: Path
) -> None:
    """The same report twice: as graded, then with a reviewer's verdict in place of the
    grader's — its summary recomputed, the page saying how many attempts it moved; the
    grader's disagreement still shown against what the grader said."""
    import json
    import re

    from osmosis_local_runner.api import load_run

    assert invoke(*RUN, "--name", "a").exit_code == 0
    load_run("a").review(1, 0, verdict="fail", reason="no working shown")
    assert invoke("eval", "report", "a", "-o", "graded.html").exit_code == 0
    result = invoke("--json", "eval", "report", "a", "-o", "reviewed.html", "--reviewed")
    assert result.exit_code == 0, result.stderr

    def data(name: str) -> dict:  # type: ignore[type-arg]
        page = (quickstart_project / name).read_text()
        found = re.search(r'<script type="application/json" id="data">(.*?)</script>', page, re.S)
        assert found, "the page embeds its data"
        return json.loads(found.group(1))  # type: ignore[no-any-return]

    graded, reviewed = data("graded.html")["runs"][0], data("reviewed.html")["runs"][0]
    assert graded["summary"]["eval_fns"]["grader"]["mean"] == 1.0
    assert reviewed["summary"]["eval_fns"]["grader"]["mean"] == 8 / 9
    assert reviewed["summary"]["reviewed_attempts"] == 1
    assert (
        "1 attempt(s) scored as people reviewed them"
        in (quickstart_project / "reviewed.html").read_text()
    )
    assert "scored as people" not in (quickstart_project / "graded.html").read_text()
    assert reviewed["agreement"]["disagree"][0]["grader"] is True  # as graded, not reviewed


def test_compare_markdown_lists_the_worst_slices_and_links_the_whole(
    invoke: Invoke, quickstart_project: Path
) -> None:
    for name, model in (("base", "mock/calculator"), ("head", "mock/flaky-calculator")):
        assert (
            invoke(
                "eval",
                "run",
                "configs/eval/quickstart.toml",
                "--model",
                model,
                "-q",
                "--name",
                name,
            ).exit_code
            == 0
        )
    result = invoke(
        "eval",
        "compare",
        "base",
        "head",
        "--markdown",
        "--by",
        "difficulty",
        "--link",
        "https://acme.github.io/evals/compare/base--head.html",
    )
    assert result.exit_code == 0, result.stderr
    text = result.stdout
    assert "By difficulty, the worst first:" in text
    table = text.split("By difficulty, the worst first:")[1].split("\n\n")[1].splitlines()[2:]
    diffs = [float(line.split("|")[4]) for line in table if line.startswith("|")]
    assert diffs == sorted(diffs) and len(diffs) >= 2  # the worst first
    assert text.rstrip().endswith(
        "[The whole comparison, row by row](https://acme.github.io/evals/compare/base--head.html)"
    )
