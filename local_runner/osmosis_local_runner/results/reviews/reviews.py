"""People's review of a run: an attempt's verdict (pass / fail, or a score, with a
reason), comments and tags on rows and on the run — what catches a grader's bugs and
reward hacking before training on the grader.

Stored beside the run, append-only (``reviews.jsonl`` in a run's directory, else
``<results>.reviews.jsonl``): one JSON line per review with its author and time; the
journal and the results are never rewritten. The latest verdict of an attempt wins;
comments and tags accumulate. A review line that cannot be read is skipped.
"""

from __future__ import annotations

import getpass
import json
import math
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Literal, TypedDict

from typing_extensions import Unpack

from osmosis_client.errors import InvalidInputError
from osmosis_local_runner.results.documents.beside import beside

Verdict = Literal["pass", "fail"]
#: a review's text fields: short notes, not documents
MAX_TEXT = 4000
MAX_FILE = 64 << 20


@dataclass(frozen=True)
class Review:
    """One review line. ``row`` None: of the run; ``attempt`` None: of the row."""

    at: str
    author: str
    row: int | None = None
    attempt: int | None = None
    verdict: Verdict | None = None
    score: float | None = None
    reason: str | None = None
    comment: str | None = None
    tag: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if v is not None}


def reviews_path(results: Path) -> Path:
    """Where a run's reviews live: its directory's ``reviews.jsonl`` (a named run), else
    beside its results document."""
    return beside(results, "reviews.jsonl")


class Said(TypedDict, total=False):
    """What a review says, as ``EvalResult.review`` and :func:`make_review` take it:
    a verdict or a score of an attempt, with a reason (the grader was wrong), a comment
    or a tag (on a row or the run), and who says so (default: this user)."""

    verdict: Literal["pass", "fail"] | None
    score: float | None
    reason: str | None
    comment: str | None
    tag: str | None
    author: str | None


def make_review(row: int | None = None, attempt: int | None = None, **said: Unpack[Said]) -> Review:
    """A review checked: something said, a verdict or score only of an attempt, a score
    finite, texts short. Raises :class:`InvalidInputError` naming what is wrong."""
    verdict, score = said.get("verdict"), said.get("score")
    reason, comment, tag = said.get("reason"), said.get("comment"), said.get("tag")

    def refuse(what: str) -> InvalidInputError:
        return InvalidInputError(f"a review {what}", code="REVIEW")

    if verdict is not None and verdict not in ("pass", "fail"):
        raise refuse(f"verdict must be 'pass' or 'fail', not {verdict!r}")
    if score is not None and (
        isinstance(score, bool) or not isinstance(score, int | float) or not math.isfinite(score)
    ):
        raise refuse(f"score must be a finite number, not {score!r}")
    if (verdict is not None or score is not None) and (row is None or attempt is None):
        raise refuse("verdict or score needs the row and the attempt it judges")
    for name, value in (("row", row), ("attempt", attempt)):
        whole = isinstance(value, int) and not isinstance(value, bool)
        if value is not None and (not whole or value < 0):
            raise refuse(f"{name} must be a whole number >= 0, not {value!r}")
    texts = {"reason": reason, "comment": comment, "tag": tag}
    for name, text in texts.items():
        if text is not None and (not isinstance(text, str) or len(text) > MAX_TEXT):
            raise refuse(f"{name} must be text of at most {MAX_TEXT} characters")
    if tag is not None and (not tag.strip() or len(tag) > 64 or "\n" in tag):
        raise refuse("tag must be one short line")
    if verdict is None and score is None and not comment and tag is None:
        raise refuse("says nothing: give a verdict, a score, a comment or a tag")
    when = datetime.now(timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")
    return Review(
        when,
        _author(said.get("author")),
        row,
        attempt,
        verdict,
        None if score is None else float(score),
        reason,
        comment,
        tag.strip() if tag else None,
    )


def _author(given: str | None) -> str:
    if given and given.strip():
        return given.strip()[:100]
    try:
        return getpass.getuser()
    except (OSError, KeyError):
        return "someone"


def add_review(results: Path, review: Review) -> Path:
    """Append ``review`` to the run's reviews (created 0644; never through a link)."""
    from osmosis_client._fs import open_nofollow

    path = reviews_path(results)
    line = (json.dumps(review.to_json(), ensure_ascii=False) + "\n").encode()
    fd = open_nofollow(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        os.write(fd, line)  # one write per line: lines never interleave
    finally:
        os.close(fd)
    return path


def read_reviews(results: Path) -> list[Review]:
    """Every readable review of the run, in the order written."""
    from osmosis_client._fs import read_capped

    raw = read_capped(reviews_path(results), MAX_FILE)
    found = []
    for line in (raw or b"").splitlines():
        try:
            data = json.loads(line)
            found.append(make_review_from(data))
        except (ValueError, TypeError, InvalidInputError):
            continue
    return found


def make_review_from(data: Mapping[str, Any]) -> Review:
    if not isinstance(data, dict) or not isinstance(data.get("at"), str):
        raise ValueError("not a review")
    known = {
        k: data.get(k)
        for k in ("row", "attempt", "verdict", "score", "reason", "comment", "tag", "author")
    }
    return Review(**{**asdict(make_review(**known)), "at": data["at"]})


def verdicts(reviews: Iterable[Review]) -> dict[tuple[int, int], Review]:
    """Each reviewed attempt's latest verdict (or score), by (row, attempt)."""
    found: dict[tuple[int, int], Review] = {}
    for review in reviews:
        if (
            review.row is not None
            and review.attempt is not None
            and (review.verdict is not None or review.score is not None)
        ):
            found[(review.row, review.attempt)] = review
    return found


def reviewed_pass(review: Review, threshold: float) -> bool:
    """Whether a reviewed attempt passes: its verdict, else its score against the run's
    pass threshold."""
    if review.verdict is not None:
        return review.verdict == "pass"
    return review.score is not None and review.score >= threshold


def as_reviewed(
    runs: list[dict[str, Any]],
    row: int,
    judged: Mapping[tuple[int, int], Review],
    fns: Sequence[str],
    threshold: float,
) -> list[dict[str, Any]]:
    """A row's attempts with the reviewed ones read as the reviewers judged them: the
    first eval fn's score (the one graded by the grader under review) is the review's
    score, else one that passes or fails by the verdict; the attempt counts as graded."""
    shown = []
    for run in runs:
        review = judged.get((row, run.get("run_index")))  # type: ignore[arg-type]
        if review is None or not fns:
            shown.append(run)
            continue
        if review.score is not None:
            value = review.score
        else:
            value = max(threshold, 1.0) if review.verdict == "pass" else min(0.0, threshold - 1)
        scores = dict(run.get("scores") or {})
        scores[fns[0]] = value
        shown.append(
            {**run, "success": True, "skipped": False, "fn_errors": None, "scores": scores}
        )
    return shown


def use_reviews(doc: Any, results: Path) -> int:
    """``ResultsFile.use_reviews``: the reviews written beside ``results`` applied."""
    doc.reviewed = verdicts(read_reviews(results)) or None
    if doc.reviewed:
        doc.summary = doc.head["summary"] = reviewed_summary(doc)
    return len(doc.reviewed or ())


def reviewed_summary(doc: Any) -> dict[str, Any]:
    """A document's summary with its reviewed attempts counted as judged (``doc``: a
    ``ResultsFile`` using reviews): every eval fn's statistics recomputed from the
    rows, the rest (time, usage, status) as the run recorded it."""
    from osmosis_local_runner.results.documents.document import summarize

    rows = {row.index: row.runs for row in doc.rows(transcripts=False)}
    cluster_by = doc.config.get("cluster_by")
    fresh = summarize(
        rows,
        doc.eval_fns,
        n=doc.n,
        pass_threshold=doc.pass_threshold,
        cluster_by=cluster_by if isinstance(cluster_by, str) else None,
    )
    kept = {k: v for k, v in doc.summary.items() if k != "slices"}  # slices: as graded
    return {
        **kept,
        **{k: fresh[k] for k in ("eval_fns", "errored_runs", "unscored_runs")},
        "reviewed_attempts": len(doc.reviewed or ()),
    }


def agreement(doc: Any, reviews: Iterable[Review]) -> dict[str, Any]:
    """Where reviewers and the grader (the first eval fn) disagree: how many attempts
    were reviewed, and each disagreement (row, attempt, the grader's and the reviewer's
    verdicts, the reason and who said it)."""
    from osmosis_local_runner.results.statistics.scoring import passed

    if doc.reviewed:  # the grader's verdicts, as the document holds them
        doc = type(doc)(doc.path)
    judged = verdicts(reviews)
    fn = doc.eval_fns[0] if doc.eval_fns else None
    disagree = []
    if judged and fn is not None:
        rows = {row for row, _ in judged}
        for found in doc.rows_at(rows, transcripts=False):
            for record in found.runs:
                review = judged.get((found.index, record.run_index))
                if review is None:
                    continue
                grader = passed(record, fn, doc.pass_threshold)
                person = reviewed_pass(review, doc.pass_threshold)
                if grader != person:
                    disagree.append(
                        {
                            "row": found.index,
                            "attempt": record.run_index,
                            "grader": grader,
                            "reviewer": person,
                            "reason": review.reason,
                            "author": review.author,
                        }
                    )
    return {"fn": fn, "reviewed": len(judged), "disagree": disagree}


__all__ = [
    "Review",
    "add_review",
    "agreement",
    "as_reviewed",
    "make_review",
    "read_reviews",
    "reviewed_pass",
    "reviews_path",
    "verdicts",
]
