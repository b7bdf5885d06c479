"""The viewer's JSON API over the library's read API (``EvalResult``, ``compare_runs``):
a run's summary; its rows page by page, filtered; one row's attempts with transcripts and
model calls; a comparison. What a script or another front end reads, and what a page
could take in place of its embedded data."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from osmosis_local_runner.api.results import EvalResult, RowResult
from osmosis_local_runner.results.documents.documents import ResultsFile

#: a page of rows holds at most this many
MAX_PAGE = 200
STATUSES = ("passed", "failed", "error")


def run_json(doc: ResultsFile, name: str, reviewed: Path) -> dict[str, Any]:
    """A run's config, summary and reviews (``reviewed``: the run's results path, where
    its reviews are kept; an unfinished run's ``doc`` is a copy elsewhere)."""
    from osmosis_local_runner.results.reviews.reviews import read_reviews

    return {
        "name": name,
        "status": doc.summary.get("status"),
        "config": dict(doc.config),
        "summary": dict(doc.summary),
        "reviews": [r.to_json() for r in read_reviews(reviewed)],
    }


def rows_json(
    doc: ResultsFile,
    *,
    offset: int = 0,
    limit: int = 50,
    status: str | None = None,
    query: str | None = None,
) -> dict[str, Any]:
    """Rows ``offset`` … ``offset + limit`` of those that match: ``status`` — a row with
    an attempt that ``passed``, ``failed`` (graded, not passing) or ended in an ``error``
    (first eval fn); ``query`` — found in its prompt, expected answer or an attempt's
    answer, error or transcript (case-insensitive). Streamed: memory is a page's."""
    fn = doc.eval_fns[0] if doc.eval_fns else None
    threshold = doc.pass_threshold
    needle = (query or "").lower()
    limit = max(1, min(limit, MAX_PAGE))
    shown: list[dict[str, Any]] = []
    matched = 0
    for row in EvalResult(doc.path).rows(transcripts=bool(needle)):
        if not _matches(row, fn, threshold, status, needle):
            continue
        if offset <= matched < offset + limit:
            shown.append(_row_item(row, fn, threshold))
        matched += 1
    more = matched > offset + limit
    return {
        "rows": shown,
        "matched": matched,
        "offset": offset,
        "next_offset": offset + limit if more else None,
    }


def row_json(doc: ResultsFile, index: int) -> dict[str, Any] | None:
    """One row whole: every attempt with its transcript, usage and model calls."""
    from osmosis_local_runner.results.reports.report_transcripts import calls_of

    for row in doc.rows_at({index}):
        item: dict[str, Any] = {
            "index": row.index,
            "prompt": row.prompt(),
            "expected": row.expected,
            "metadata": dict(row.metadata),
        }
        item["attempts"] = [
            {
                "run": r.run_index,
                "success": r.success,
                "scores": dict(r.scores),
                "error": r.error,
                "answer": r.answer,
                "duration_ms": r.duration_ms,
                "usage": r.usage,
                "messages": r.messages(),
                "calls": calls_of(r),
            }
            for r in row.runs
        ]
        return item
    return None


def compare_json(a: Path, b: Path) -> dict[str, Any]:
    from osmosis_local_runner.api.comparing import compare_runs

    return compare_runs(a, b).comparison.to_json(None)


def _passed(attempt: Any, fn: str | None, threshold: float) -> bool:
    if fn is None or not attempt.success or attempt.skipped:
        return False
    return float(attempt.scores.get(fn, 0.0)) >= threshold


def _matches(
    row: RowResult, fn: str | None, threshold: float, status: str | None, needle: str
) -> bool:
    attempts = row.attempts
    if status == "passed" and not any(_passed(a, fn, threshold) for a in attempts):
        return False
    if status == "failed" and not any(
        a.success and not _passed(a, fn, threshold) for a in attempts
    ):
        return False
    if status == "error" and not any(not a.success for a in attempts):
        return False
    if needle:
        said = [row.prompt or "", row.expected or ""]
        for a in attempts:
            said += [a.answer or "", a.error or "", a.transcript or ""]
        return needle in "\n".join(said).lower()
    return True


def _row_item(row: RowResult, fn: str | None, threshold: float) -> dict[str, Any]:
    return {
        "index": row.index,
        "prompt": row.prompt,
        "expected": row.expected,
        "attempts": [
            {
                "run": a.run_index,
                "success": a.success,
                "passed": _passed(a, fn, threshold),
                "scores": a.scores,
                "error": a.error,
                "answer": a.answer,
            }
            for a in row.attempts
        ],
    }


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, allow_nan=False, default=str)


__all__ = ["MAX_PAGE", "compare_json", "dumps", "row_json", "rows_json", "run_json"]
