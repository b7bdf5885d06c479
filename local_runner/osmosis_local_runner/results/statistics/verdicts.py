"""Which rows of a run did not pass, and why: a row passes when more than half of its
(non-skipped) attempts pass; one that does not is an error when one of its attempts
errored (or its eval fn raised), else a failure. Shared by the terminal's failing rows,
JUnit, step summaries and the report — and light to import: a run that passed
everywhere is told from its summary, without reading a row."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from osmosis_local_runner.results.documents.documents import (
    ResultsFile,
    Row,
    excerpt,
    majority_passes,
)
from osmosis_local_runner.results.documents.records import AttemptRecord
from osmosis_local_runner.results.statistics.scoring import passed

WORST_SHOWN = 5


@dataclass
class RowVerdict:
    """One row's outcome for one eval fn."""

    status: str  # "passed", "failed", "error", "skipped"
    attempts: int
    passing: int
    errored: int
    mean: float | None
    error: str | None
    answer: str
    duration_ms: float
    expected: str | None = None
    prompt: str | None = None

    @classmethod
    def of(cls, row: Row, fn: str, threshold: float) -> RowVerdict:
        runs = row.scored()
        attempts, passing = row.passes(fn, threshold)
        failed_runs = [r for r in runs if not r.success or (r.fn_errors and fn in r.fn_errors)]
        first_error = next((r.error or (r.fn_errors or {}).get(fn) for r in failed_runs), None)
        mean = row.mean_score(fn)
        if not attempts:
            status = "skipped"
        elif majority_passes(attempts, passing):
            status = "passed"
        elif failed_runs:
            status = "error"
        else:
            status = "failed"
        return cls(
            status=status,
            attempts=attempts,
            passing=passing,
            errored=len(failed_runs),
            mean=mean,
            error=first_error,
            answer=excerpt(_telling_answer(runs, fn, threshold, status == "passed"), 500),
            duration_ms=sum(r.duration_ms for r in row.runs if r.model_tag is None),
            expected=row.expected,
            prompt=row.prompt(),
        )


def _telling_answer(
    runs: Sequence[AttemptRecord], fn: str, threshold: float, row_passed: bool
) -> str | None:
    """The answer that shows the row's verdict: a passing attempt's when the row passed,
    else the lowest-scoring attempt's (any answer when none of those has one)."""
    telling = [r for r in runs if passed(r, fn, threshold) == row_passed and r.answer]
    if not row_passed:
        telling.sort(key=lambda r: float(r.scores.get(fn, 0.0)))
    found = telling[0] if telling else next((r for r in runs if r.answer), None)
    return found.answer if found else None


@dataclass
class Failures:
    """The rows of a run's first eval fn that did not pass: the worst few, and counts."""

    rows: list[tuple[Row, RowVerdict]]  # lowest mean score first, at most the limit
    failed: int  # rows that did not pass (failed or errored)
    errored: int  # of them, rows with an errored attempt
    total: int  # rows with a verdict (not skipped)
    #: every row that did not pass, in row order (at most MAX_INDICES: a command line)
    indices: list[int] = field(default_factory=list)


MAX_INDICES = 10_000


def worst_rows(doc: ResultsFile, limit: int = WORST_SHOWN) -> Failures:
    """One pass over the rows: the ``limit`` worst that did not pass, and the counts."""
    found = Failures([], 0, 0, 0)
    if not doc.eval_fns:
        return found
    fn = doc.eval_fns[0]
    if passed_everywhere(doc, fn):
        found.total = int(doc.summary.get("total_rows") or 0)
        return found
    for row in doc.rows():
        verdict = RowVerdict.of(row, fn, doc.pass_threshold)
        found.total += verdict.status != "skipped"
        if verdict.status not in ("failed", "error"):
            continue
        found.failed += 1
        found.errored += verdict.status == "error"
        if len(found.indices) < MAX_INDICES:
            found.indices.append(row.index)
        found.rows.append((row, verdict))
        if len(found.rows) > 2 * limit:  # keep it small however many rows fail
            found.rows.sort(key=_worst_first)
            del found.rows[limit:]
    found.rows.sort(key=_worst_first)
    del found.rows[limit:]
    return found


def _worst_first(item: tuple[Row, RowVerdict]) -> tuple[float, int]:
    return item[1].mean or 0.0, item[0].index


def passed_everywhere(doc: ResultsFile, fn: str) -> bool:
    """Whether every attempt of ``fn`` passed, as the summary records it (pass@1 is the
    share of passing attempts) — then no row can fail, and none need be read."""
    summary = doc.summary
    stats = (summary.get("eval_fns") or {}).get(fn) or {}
    return bool(
        stats.get("pass_at_1") == 1.0
        and not summary.get("errored_runs")
        and not summary.get("skipped_runs")
        and not summary.get("unscored_runs")
    )
