"""A grader checked against people: how often the first eval fn's verdict (pass / fail,
at the run's threshold) agrees with the verdicts reviewers gave (``eval view``'s review,
``EvalResult.review``). Reported as the facts a reader needs to trust a κ — how many
attempts were reviewed, each side's pass rate (κ is low when one class is rare), the raw
agreement, Cohen's κ = (p_o − p_e) / (1 − p_e) with its 95 % percentile-bootstrap
interval over the reviewed attempts (seeded), the confusion matrix — overall and per
reviewer. An LLM judge is often the training's reward too: this is how far to trust it."""

from __future__ import annotations

import random
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

from osmosis_local_runner.results.stats import (
    BOOTSTRAP_RESAMPLES,
    BOOTSTRAP_SEED,
    CONFIDENCE,
    binomial,
    percentile,
)

Pair = tuple[bool, bool]  # (the grader passed it, the reviewer passed it)
CELLS: tuple[Pair, ...] = ((True, True), (True, False), (False, True), (False, False))


def kappa(counts: Counter[Pair]) -> float | None:
    """Cohen's κ of two raters' pass/fail verdicts (None: no pair, or chance agreement is
    certain — both raters gave one class only)."""
    total = sum(counts.values())
    if not total:
        return None
    observed = (counts[(True, True)] + counts[(False, False)]) / total
    grader = (counts[(True, True)] + counts[(True, False)]) / total
    person = (counts[(True, True)] + counts[(False, True)]) / total
    chance = grader * person + (1 - grader) * (1 - person)
    return None if chance >= 1.0 else (observed - chance) / (1.0 - chance)


def kappa_interval(counts: Counter[Pair]) -> list[float] | None:
    """κ's 95 % percentile bootstrap over the reviewed attempts (resampled as the counts
    of the four cells, multinomial; seeded)."""
    total = sum(counts.values())
    if total < 2:
        return None
    rng = random.Random(BOOTSTRAP_SEED)
    found = []
    for _ in range(BOOTSTRAP_RESAMPLES):
        left, remaining, drawn = total, total, Counter[Pair]()
        for cell in CELLS:
            frequency = counts[cell]
            count = left if frequency == remaining else binomial(rng, left, frequency / remaining)
            drawn[cell] = count
            left -= count
            remaining -= frequency
        value = kappa(drawn)
        if value is not None:
            found.append(value)
    if len(found) < BOOTSTRAP_RESAMPLES // 2:
        return None  # most resamples had one class only: no interval to speak of
    found.sort()
    alpha = 1.0 - CONFIDENCE
    return [percentile(found, alpha / 2.0), percentile(found, 1.0 - alpha / 2.0)]


def summary_of(pairs: Sequence[Pair]) -> dict[str, Any]:
    """Reviewed count, base rates, raw agreement, κ and its interval, confusion matrix."""
    counts = Counter(pairs)
    total = len(pairs)
    value = kappa(counts)
    return {
        "reviewed": total,
        "grader_pass_rate": sum(g for g, _ in pairs) / total if total else None,
        "reviewer_pass_rate": sum(p for _, p in pairs) / total if total else None,
        "agreement": (counts[(True, True)] + counts[(False, False)]) / total if total else None,
        "kappa": value,
        "kappa_ci": kappa_interval(counts) if value is not None else None,
        "confusion": {
            "grader_pass_reviewer_pass": counts[(True, True)],
            "grader_pass_reviewer_fail": counts[(True, False)],
            "grader_fail_reviewer_pass": counts[(False, True)],
            "grader_fail_reviewer_fail": counts[(False, False)],
        },
    }


def grader_agreement(doc: Any, reviews: Iterable[Any], fn: str | None = None) -> dict[str, Any]:
    """The agreement of eval fn ``fn`` (default: the first) with the people who reviewed
    ``doc``'s attempts (the last verdict of each reviewer on an attempt), overall and per
    reviewer."""
    from osmosis_client.errors import InvalidInputError
    from osmosis_local_runner.results.reviews import reviewed_pass
    from osmosis_local_runner.results.scoring import passed

    if getattr(doc, "reviewed", None):  # the grader's own verdicts, as the document holds
        doc = type(doc)(doc.path)
    fn = fn or (doc.eval_fns[0] if doc.eval_fns else None)
    if fn is None or fn not in doc.eval_fns:
        raise InvalidInputError(
            f"the run has no eval fn {fn!r}", hint=f"its eval fns: {', '.join(doc.eval_fns)}",
            code="USAGE",
        )  # fmt: skip
    said: dict[tuple[str, int, int], Any] = {}
    for review in reviews:  # each reviewer's last verdict on an attempt
        if review.verdict is not None and review.row is not None and review.attempt is not None:
            said[(review.author, review.row, review.attempt)] = review
    by_attempt: dict[tuple[int, int], list[Any]] = defaultdict(list)
    for (_, row, attempt), review in said.items():
        by_attempt[(row, attempt)].append(review)
    overall: list[Pair] = []
    per: dict[str, list[Pair]] = defaultdict(list)
    for found in doc.rows_at({row for row, _ in by_attempt}, transcripts=False):
        for record in found.runs:
            for review in by_attempt.get((found.index, record.run_index), []):
                pair = (passed(record, fn, doc.pass_threshold),
                        reviewed_pass(review, doc.pass_threshold))  # fmt: skip
                overall.append(pair)
                per[review.author].append(pair)
    return {"fn": fn, **summary_of(overall),
            "reviewers": {author: summary_of(p) for author, p in sorted(per.items())}}  # fmt: skip


__all__ = ["grader_agreement", "kappa", "kappa_interval", "summary_of"]
