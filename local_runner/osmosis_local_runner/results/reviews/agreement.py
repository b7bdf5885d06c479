"""A grader checked against people: how often the first eval fn's verdict (pass / fail,
at the run's threshold) agrees with the verdicts reviewers gave (``eval view``'s review,
``EvalResult.review``). Reported as the facts a reader needs to trust a κ — how many
attempts were reviewed, each side's pass rate (κ is low when one class is rare), the raw
agreement, Cohen's κ = (p_o − p_e) / (1 − p_e) with its 95 % percentile-bootstrap
interval over the reviewed attempts (seeded), the confusion matrix — overall and per
reviewer. An LLM judge is often the training's reward too: this is how far to trust it."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from osmosis_local_runner.results.reviews.agreement_stats import Judged, Pair, summary_of


def reviewed_attempts(doc: Any, reviews: Iterable[Any], fn: str | None = None) -> list[Judged]:
    """Every reviewer's last judgement (a verdict or a score) of each attempt of ``doc``,
    beside eval fn ``fn``'s (default: the first) verdict and score as graded."""
    from osmosis_local_runner.results.reviews.reviews import reviewed_pass
    from osmosis_local_runner.results.statistics.scoring import passed

    fn = checked_fn(doc, fn)
    if getattr(doc, "reviewed", None):  # the grader's own verdicts, as the document holds
        doc = type(doc)(doc.path)
    said: dict[tuple[str, int, int], Any] = {}
    for review in reviews:  # each reviewer's last judgement of an attempt
        judged = review.verdict is not None or review.score is not None
        if judged and review.row is not None and review.attempt is not None:
            said[(review.author, review.row, review.attempt)] = review
    by_attempt: dict[tuple[int, int], list[Any]] = defaultdict(list)
    for (_, row, attempt), review in said.items():
        by_attempt[(row, attempt)].append(review)
    found: list[Judged] = []
    for row in doc.rows_at({row for row, _ in by_attempt}, transcripts=False):
        for record in row.runs:
            for review in by_attempt.get((row.index, record.run_index), []):
                found.append(
                    Judged(
                        row.index,
                        record.run_index,
                        review.author,
                        passed(record, fn, doc.pass_threshold),
                        reviewed_pass(review, doc.pass_threshold),
                        record.scores.get(fn) if record.success else 0.0,
                        review.score,
                    )
                )
    return found


def checked_fn(doc: Any, fn: str | None) -> str:
    """``fn``, or the run's first eval fn; refused when the run has no such fn."""
    from osmosis_client.errors import InvalidInputError

    fn = fn or (doc.eval_fns[0] if doc.eval_fns else None)
    if fn is None or fn not in doc.eval_fns:
        raise InvalidInputError(
            f"the run has no eval fn {fn!r}",
            hint=f"its eval fns: {', '.join(doc.eval_fns)}",
            code="USAGE",
        )
    return fn


def grader_agreement(
    doc: Any,
    reviews: Iterable[Any],
    fn: str | None = None,
    *,
    candidate: tuple[str, Mapping[tuple[int, int], bool]] | None = None,
    repeats: Sequence[Mapping[tuple[int, int], bool]] = (),
) -> dict[str, Any]:
    """The agreement of eval fn ``fn`` (default: the first) with the people who reviewed
    ``doc``'s attempts (the last judgement of each reviewer on an attempt), overall and
    per reviewer; with scores, Krippendorff's α of the grader's scores and theirs.

    ``candidate``: another grader's name and verdicts on the reviewed attempts — its
    agreement beside this one's, paired (``against``). ``repeats``: one grader's verdicts
    on the reviewed attempts, graded again and again — how often it agrees with itself
    (``self_consistency``)."""
    from osmosis_local_runner.results.reviews.agreement_stats import (
        against_summary,
        score_alpha,
        self_consistency,
    )

    judged = reviewed_attempts(doc, reviews, fn)
    per: dict[str, list[Pair]] = defaultdict(list)
    for one in judged:
        per[one.author].append((one.grader, one.person))
    found: dict[str, Any] = {
        "fn": checked_fn(doc, fn),
        **summary_of([(one.grader, one.person) for one in judged]),
        "reviewers": {author: summary_of(p) for author, p in sorted(per.items())},
    }
    scored = score_alpha(judged)
    if scored is not None:
        found["scores"] = scored
    if candidate is not None:
        found["against"] = against_summary(judged, *candidate)
    if repeats:
        found["self_consistency"] = self_consistency(judged, repeats)
    return found


__all__ = ["checked_fn", "grader_agreement", "reviewed_attempts"]
