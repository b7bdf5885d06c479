"""The statistics of a grader against people: Cohen's κ of pass/fail verdicts with its
bootstrap interval and the confusion matrix (``summary_of``), Krippendorff's α of scores,
another grader's agreement paired with this one's on the same reviewed attempts, and a
judge against itself (its verdicts when the same attempts are graded again).

Every interval is a seeded percentile bootstrap over the reviewed attempts; a paired
difference resamples the attempts once for both graders, so what they share cancels.
"""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from osmosis_local_runner.results.statistics.stats import (
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
    found: list[float | None] = []
    for _ in range(BOOTSTRAP_RESAMPLES):
        left, remaining, drawn = total, total, Counter[Pair]()
        for cell in CELLS:
            frequency = counts[cell]
            count = left if frequency == remaining else binomial(rng, left, frequency / remaining)
            drawn[cell] = count
            left -= count
            remaining -= frequency
        found.append(kappa(drawn))
    return _percentile_interval(found, BOOTSTRAP_RESAMPLES)


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


@dataclass(frozen=True)
class Judged:
    """One reviewer's last judgement of one attempt, beside the grader's."""

    row: int
    attempt: int
    author: str
    grader: bool  # the grader passed it
    person: bool  # the reviewer passed it
    grader_score: float | None
    person_score: float | None  # the reviewer's score, when one was given

    @property
    def key(self) -> tuple[int, int]:
        return (self.row, self.attempt)


#: resamples of these bootstraps (each recomputes a κ or an α over the reviewed attempts)
RESAMPLES = 2_000
T = TypeVar("T")


def _bootstrap(
    items: Sequence[T], statistic: Callable[[Sequence[T]], float | None]
) -> list[float] | None:
    """The 95 % percentile interval of ``statistic`` over resamples of ``items``."""
    if len(items) < 2:
        return None
    rng = random.Random(BOOTSTRAP_SEED)
    found = [statistic([items[rng.randrange(len(items))] for _ in items]) for _ in range(RESAMPLES)]
    return _percentile_interval(found, RESAMPLES)


def _percentile_interval(found: list[float | None], resamples: int) -> list[float] | None:
    """The 95 % percentile interval of a bootstrap's values; None when most resamples
    had nothing to measure (one class only, every value the same)."""
    values = sorted(value for value in found if value is not None)
    if len(values) < resamples // 2:
        return None
    alpha = 1.0 - CONFIDENCE
    return [percentile(values, alpha / 2.0), percentile(values, 1.0 - alpha / 2.0)]


def interval_alpha(units: Sequence[tuple[float, float]]) -> float | None:
    """Krippendorff's α of two coders' scores (interval metric, every unit coded by
    both): ``1 − D_o / D_e`` with ``D_o = Σ 2(a − b)² / n`` and ``D_e = 2·SS / (n − 1)``
    over the ``n = 2·units`` values. None when every value is the same."""
    values = [v for unit in units for v in unit]
    n = len(values)
    if n < 4:
        return None
    centre = math.fsum(values) / n
    spread = math.fsum((v - centre) ** 2 for v in values)
    if spread == 0.0:
        return None
    observed = math.fsum(2.0 * (a - b) ** 2 for a, b in units) / n
    expected = 2.0 * spread / (n - 1)
    return 1.0 - observed / expected


def score_alpha(judged: Sequence[Judged]) -> dict[str, Any] | None:
    """The grader's scores against the reviewers' (where a reviewer gave one): α and its
    interval; None when fewer than two attempts have both."""
    units = [
        (j.grader_score, j.person_score)
        for j in judged
        if j.grader_score is not None
        and j.person_score is not None
        and math.isfinite(j.grader_score)
        and math.isfinite(j.person_score)
    ]
    if len(units) < 2:
        return None
    pairs: list[tuple[float, float]] = [(float(a), float(b)) for a, b in units]
    return {
        "reviewed": len(pairs),
        "metric": "interval",
        "alpha": interval_alpha(pairs),
        "alpha_ci": _bootstrap(pairs, interval_alpha),
    }


def _kappa_of(pairs: Sequence[Pair]) -> float | None:
    return kappa(Counter(pairs))


def against_summary(
    judged: Sequence[Judged], name: str, verdicts: Mapping[tuple[int, int], bool]
) -> dict[str, Any]:
    """Another grader (``name``) on the same reviewed attempts: its agreement with the
    reviewers, and the paired differences of κ and raw agreement from this grader's
    (candidate − grader), with the attempts where only one of them agrees."""
    items = [(j.grader, verdicts[j.key], j.person) for j in judged if j.key in verdicts]

    def difference(sample: Sequence[tuple[bool, bool, bool]]) -> float | None:
        mine = _kappa_of([(g, p) for g, _, p in sample])
        theirs = _kappa_of([(c, p) for _, c, p in sample])
        return None if mine is None or theirs is None else theirs - mine

    total = len(items)
    agree_mine = sum(g == p for g, _, p in items)
    agree_theirs = sum(c == p for _, c, p in items)
    return {
        "grader": name,
        **summary_of([(c, p) for _, c, p in items]),
        "kappa_difference": difference(items),
        "kappa_difference_ci": _bootstrap(items, difference),
        "agreement_difference": (agree_theirs - agree_mine) / total if total else None,
        "only_candidate_agrees": sum(c == p != g for g, c, p in items),
        "only_grader_agrees": sum(g == p != c for g, c, p in items),
    }


def self_consistency(
    judged: Sequence[Judged], repeats: Sequence[Mapping[tuple[int, int], bool]]
) -> dict[str, Any]:
    """A judge against itself: its verdicts on the reviewed attempts, graded again
    ``len(repeats)`` times — how often the first two gradings agree, their κ and its
    interval, and how often every grading agrees."""
    keys = list(dict.fromkeys(j.key for j in judged))
    keys = [k for k in keys if all(k in r for r in repeats)]
    pairs: list[Pair] = [(repeats[0][k], repeats[1][k]) for k in keys] if len(repeats) > 1 else []
    counts = Counter(pairs)
    return {
        "repeats": len(repeats),
        "attempts": len(keys),
        "agreement": sum(a == b for a, b in pairs) / len(pairs) if pairs else None,
        "kappa": kappa(counts) if pairs else None,
        "kappa_ci": kappa_interval(counts) if pairs else None,
        "all_agree": sum(len({r[k] for r in repeats}) == 1 for k in keys) / len(keys)
        if keys
        else None,
    }


__all__ = [
    "Judged",
    "Pair",
    "against_summary",
    "interval_alpha",
    "kappa",
    "kappa_interval",
    "score_alpha",
    "self_consistency",
    "summary_of",
]
