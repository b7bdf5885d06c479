"""Review (issue 46): a person's verdict on an attempt, comments and tags — appended
beside the run with author and time, never rewriting it; the grader-agreement counts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from osmosis_client.errors import InvalidInputError
from osmosis_local_runner.api import load_run
from osmosis_local_runner.results.reviews.reviews import agreement, reviews_path


@pytest.fixture
def run_dir(quickstart_project: Path) -> Path:
    from osmosis_local_runner.api import run_eval

    run_eval("configs/eval/quickstart.toml", name="step-1", model="mock/calculator", limit=3)
    return quickstart_project / ".osmosis" / "evals" / "step-1"


def test_a_review_is_appended_beside_the_run_and_never_changes_it(run_dir: Path) -> None:
    before = (run_dir / "results.json").read_bytes()
    run = load_run("step-1")
    run.review(
        0, 1, verdict="fail", reason="the answer is right for the wrong reason", author="ada"
    )
    run.review(0, comment="prompt is ambiguous")
    run.review(tag="baseline")
    run.review(0, 1, score=0.5, reason="half credit", author="bo")  # the latest wins
    assert (run_dir / "results.json").read_bytes() == before
    assert reviews_path(run_dir / "results.json") == run_dir / "reviews.jsonl"
    lines = [json.loads(x) for x in (run_dir / "reviews.jsonl").read_text().splitlines()]
    assert [x.get("verdict") for x in lines] == ["fail", None, None, None]
    assert lines[0]["author"] == "ada" and lines[0]["at"].endswith("Z")
    assert lines[2] == {"at": lines[2]["at"], "author": lines[2]["author"], "tag": "baseline"}
    reviews = load_run("step-1").reviews()
    assert [r.tag for r in reviews] == [None, None, "baseline", None]
    found = agreement(run._file, reviews)
    assert found["reviewed"] == 1  # one attempt judged, twice: the latest (0.5 < 1) counts
    assert found["disagree"] == [
        {
            "row": 0,
            "attempt": 1,
            "grader": True,
            "reviewer": False,
            "reason": "half credit",
            "author": "bo",
        }
    ]


@pytest.mark.parametrize(
    ("given", "said"),
    [
        ({}, "says nothing"),
        ({"row": 0, "verdict": "pass"}, "needs the row and the attempt"),
        ({"row": 0, "attempt": 0, "verdict": "maybe"}, "'pass' or 'fail'"),
        ({"row": 0, "attempt": 0, "score": float("nan")}, "finite"),
        ({"row": -1, "comment": "x"}, ">= 0"),
        ({"tag": "two\nlines"}, "one short line"),
        ({"comment": "x" * 5000}, "at most 4000"),
    ],
)
def test_a_review_that_says_nothing_or_nonsense_is_refused(
    run_dir: Path, given: dict[str, object], said: str
) -> None:
    with pytest.raises(InvalidInputError, match=said):
        load_run("step-1").review(**given)  # type: ignore[arg-type]
    assert not (run_dir / "reviews.jsonl").exists()


def test_a_damaged_line_or_a_planted_link_is_skipped_not_fatal(run_dir: Path) -> None:
    run = load_run("step-1")
    run.review(tag="kept")
    with (run_dir / "reviews.jsonl").open("a") as handle:
        handle.write('{"torn\n[1, 2]\n{"at": "x", "verdict": "nope", "row": 0, "attempt": 0}\n')
    assert [r.tag for r in run.reviews()] == ["kept"]
    (run_dir / "reviews.jsonl").unlink()
    (run_dir / "reviews.jsonl").symlink_to("/dev/zero")
    assert run.reviews() == []
    with pytest.raises(OSError):
        run.review(tag="never through the link")


def test_compare_reviewed_counts_attempts_as_people_judged_them(
    quickstart_project: Path, run_dir: Path
) -> None:
    from osmosis_local_runner.api import compare_runs, run_eval

    run_eval("configs/eval/quickstart.toml", name="step-2", model="mock/calculator", limit=3)
    graded = compare_runs("step-1", "step-2").comparison.fns["grader"]
    assert graded.mean_b == 1.0  # the grader passed every attempt
    for attempt in range(3):  # a person finds row 2's answers right for the wrong reason
        load_run("step-2").review(2, attempt, verdict="fail", reason="copied the expected")
    reviewed = compare_runs("step-1", "step-2", reviewed=True).comparison.fns["grader"]
    assert reviewed.mean_a == 1.0 and reviewed.mean_b == pytest.approx(2 / 3)
    assert reviewed.flipped_to_fail == 1
    assert compare_runs("step-1", "step-2").comparison.fns["grader"].mean_b == 1.0  # as asked
