"""The report's data, computed here from the documents (the page only formats it): the
runs with pass@k over every k ≤ n, the rows aligned across runs by content with what was
expected and each run's telling answer, the per-row B − A of two runs, and every
statistic by each dataset column worth slicing by (2 to 50 values, not an identifier)."""

from __future__ import annotations

import contextlib
import heapq
from array import array
from collections import Counter, defaultdict
from collections.abc import Sequence
from datetime import datetime, timezone
from functools import partial
from pathlib import Path
from typing import Any

from osmosis_client.errors import InvalidInputError
from osmosis_local_runner.results.compare.pairing import Side
from osmosis_local_runner.results.documents.documents import (
    ResultsFile,
    Row,
    excerpt,
    majority_passes,
)
from osmosis_local_runner.results.documents.records import AttemptRecord
from osmosis_local_runner.results.documents.sources import Source
from osmosis_local_runner.results.reports.report_transcripts import (
    MAX_MESSAGE,
    calls_of,
    explanations_of,
    messages_of,
)
from osmosis_local_runner.results.statistics.scoring import counted_mean, pass_at_k, passed
from osmosis_local_runner.results.statistics.slices import MAX_SLICES, slice_columns, slice_value
from osmosis_local_runner.results.statistics.verdicts import RowVerdict

#: run colours (colour-blind safe: Okabe–Ito)
COLOURS = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000")
#: pass@k is drawn for every k up to this, then at doubling k up to n
EVERY_K = 50


def ks_up_to(n: int) -> list[int]:
    """Every k ≤ n (at doubling steps past EVERY_K), always n itself."""
    ks = list(range(1, min(n, EVERY_K) + 1))
    k = EVERY_K * 2
    while k < n:
        ks.append(k)
        k *= 2
    if n > EVERY_K:
        ks.append(n)
    return ks


def _cell(row: Row, doc: ResultsFile, transcripts: bool) -> dict[str, Any]:
    verdicts = {fn: RowVerdict.of(row, fn, doc.pass_threshold) for fn in doc.eval_fns}
    runs = sorted(row.runs, key=lambda r: (r.model_tag or "", r.run_index))
    return {
        "row": row.index,
        "mean": {fn: v.mean for fn, v in verdicts.items()},
        "passing": {fn: [v.attempts, v.passing] for fn, v in verdicts.items()},
        "status": {fn: v.status for fn, v in verdicts.items()},
        "answer": {fn: excerpt(v.answer, 300) for fn, v in verdicts.items()},
        "error": _first_errors(runs, doc.eval_fns),
        "attempts": [
            {
                "run": r.run_index,
                "ok": r.success,
                "skip": r.skipped,
                "tag": r.model_tag,
                "scores": r.scores,
                "pass": {fn: passed(r, fn, doc.pass_threshold) for fn in doc.eval_fns},
                "fn_errors": r.fn_errors,
                "error": r.error,
                "answer": (r.answer or "")[:MAX_MESSAGE],
                "ms": r.duration_ms,
                "tokens": r.tokens,
                "usage": r.usage,
                "messages": messages_of(r.messages(), calls_of(r)) if transcripts else None,
                "calls": calls_of(r) if transcripts else None,
                "explanations": explanations_of(r),
                "grading": (r.extra or {}).get("grading"),
            }
            for r in runs
        ],
    }


def _first_errors(runs: Sequence[AttemptRecord], fns: list[str]) -> dict[str, str]:
    """Per eval fn, the first error among a row's attempts (the attempt's own, else the
    fn's), so the table shows why a row errored without opening it."""
    errors: dict[str, str] = {}
    for r in runs:
        for fn in fns:
            message = r.error or (r.fn_errors or {}).get(fn)
            if message and fn not in errors:
                errors[fn] = excerpt(str(message), 300)
    return errors


def _kappa(doc: Any, reviews: list[Any]) -> dict[str, Any]:
    """The grader against people in numbers (κ, its interval, base rates), when reviewed."""
    if not reviews or not doc.eval_fns:
        return {}
    from osmosis_local_runner.results.reviews.agreement import grader_agreement

    found = grader_agreement(doc, reviews)
    keys = ("kappa", "kappa_ci", "agreement", "grader_pass_rate", "reviewer_pass_rate")
    return {f"stats_{key}": found[key] for key in keys}


def _run(source: Source, position: int) -> dict[str, Any]:
    from osmosis_local_runner.results.reviews.reviews import agreement, read_reviews

    doc = source.results
    reviews = read_reviews(doc.path)
    return {
        "reviews": [r.to_json() for r in reviews[-5000:]],
        "agreement": {**agreement(doc, reviews), **_kappa(doc, reviews)},
        "label": source.label,
        "path": str(doc.path),
        "model": doc.model,
        "n": doc.n,
        "threshold": doc.pass_threshold,
        "fns": doc.eval_fns,
        "summary": doc.summary,
        "colour": COLOURS[position % len(COLOURS)],
        "slice_by": doc.config.get("slice_by"),
    }


#: rows the page lists at most (the most telling first); statistics cover every row
ROWS_SHOWN = 5_000
#: of those, rows whose transcripts the page carries (the most telling first)
TRANSCRIPTS_SHOWN = 1_000


def build_data(
    sources: Sequence[Source], *, by: str | None = None, relative_to: Path | None = None
) -> dict[str, Any]:
    """The page's data: runs, rows aligned across runs by content (every statistic over
    every row; the rows listed and their transcripts bounded, the most telling first),
    slices. ``_charts`` holds what the charts draw (never serialized)."""
    runs = [_run(source, i) for i, source in enumerate(sources)]
    if relative_to is not None:  # a page to publish: no path of the building machine
        for run in runs:
            run["path"] = shown_path(Path(run["path"]), relative_to)
    sides = [Side(s.results, s.results.eval_fns, columns=MAX_SLICES) for s in sources]
    slots, where = _align(sides)
    for run, side in zip(runs, sides, strict=True):
        run["pass_at_k"] = {
            fn: [[k, counted_mean(counts, partial(pass_at_k, k=k), k)] for k in ks_up_to(run["n"])]
            for i, fn in enumerate(side.fns)
            if (counts := Counter((row[i][1], row[i][2]) for row in side.stats))
        }
    values: dict[str, set[str]] = defaultdict(set)
    for side in sides:
        for column, seen in side.values.items():
            values[column] |= seen
    # a slice holds rows: 2 to 50 values, two rows a value on average (not an identifier)
    candidates = sorted(
        c for c, v in values.items() if 2 <= len(v) <= MAX_SLICES and len(v) * 2 <= slots
    )
    chosen = _chosen(by, runs, candidates, values)
    shown = _most_telling(sides, where, slots, min(ROWS_SHOWN, slots))
    rows = _rows(sources, sides, where, shown, candidates)
    comparison = _comparison(sides)
    return {
        "generated": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "runs": runs,
        "rows": rows,
        "total_rows": slots,
        "transcripts_shown": min(TRANSCRIPTS_SHOWN, len(rows)),
        "columns": candidates,
        "slice_by": chosen,
        "slices": slices_data(sources, candidates, comparison),
        "_charts": {"means": [_means(side) for side in sides], "comparison": comparison},
    }


def _align(sides: Sequence[Side]) -> tuple[int, list[array[int]]]:
    """Rows across runs by content (the k-th copy of a row with the k-th): how many
    distinct rows, and per run each row's position in it (-1: not in that run)."""
    slot_of: dict[str, int] = {}
    slots_of_sides = []
    for side in sides:
        seen: dict[str, int] = {}
        slots = array("q")
        for index, digest in zip(side.index, side.digest, strict=True):
            base = digest or f"#{index}"
            k = seen.get(base, 0)
            seen[base] = k + 1
            key = base if k == 0 else f"{base}\0{k}"
            slots.append(slot_of.setdefault(key, len(slot_of)))
        slots_of_sides.append(slots)
    count = len(slot_of)
    del slot_of
    where = []
    for slots in slots_of_sides:
        places = array("q", [-1]) * count
        for position, slot in enumerate(slots):
            places[slot] = position
        where.append(places)
    return count, where


def _status(stats: tuple[float | None, int, int, int]) -> int:
    """How telling a row's verdict is: 0 errored, 1 failed, 2 passed or skipped."""
    _, attempts, passing, errored = stats
    if not attempts or majority_passes(attempts, passing):
        return 2
    return 0 if errored else 1


def _most_telling(
    sides: Sequence[Side], where: Sequence[array[int]], slots: int, limit: int
) -> list[int]:
    """The rows the page lists: those that errored, then flipped, then failed, then the
    largest B − A (two runs) — in row order."""
    if limit >= slots:
        return list(range(slots))

    def rank(slot: int) -> tuple[int, int, float, int]:
        statuses, means = [], []
        for side, places in zip(sides, where, strict=True):
            position = places[slot]
            if position >= 0 and side.fns:
                stats = side.stats[position][0]
                statuses.append(_status(stats))
                means.append(stats[0])
        flipped = 0 if 2 in statuses and min(statuses, default=2) < 2 else 1
        gap = 0.0
        if len(means) == 2 and None not in means:
            gap = -abs(means[1] - means[0])  # type: ignore[operator]
        return (min(statuses, default=2), flipped, gap, slot)

    return sorted(heapq.nsmallest(limit, range(slots), key=rank))


def _rows(
    sources: Sequence[Source],
    sides: Sequence[Side],
    where: Sequence[array[int]],
    shown: Sequence[int],
    candidates: Sequence[str],
) -> list[dict[str, Any]]:
    """The listed rows, read again (only they are parsed); transcripts for the first
    TRANSCRIPTS_SHOWN of them in the order they were ranked."""
    entries: dict[int, dict[str, Any]] = {}
    talking = set(shown[:TRANSCRIPTS_SHOWN]) if len(shown) > TRANSCRIPTS_SHOWN else set(shown)
    for number, (source, side) in enumerate(zip(sources, sides, strict=True)):
        slot_of_index = {
            side.index[where[number][slot]]: slot for slot in shown if where[number][slot] >= 0
        }
        doc = source.results
        for row in doc.rows_at(set(slot_of_index)):
            slot = slot_of_index[row.index]
            entry = entries.get(slot)
            if entry is None:
                entry = entries[slot] = _entry(row, len(sources))
                entry["meta"] = {c: slice_value(row.metadata, c) for c in candidates}
            entry["cells"][number] = _cell(row, doc, transcripts=slot in talking)
    rows = [entries[slot] for slot in shown if slot in entries]
    for entry in rows:
        _diff(entry)
    return rows


def _means(side: Side) -> list[float]:
    """Every row's mean score of the run's first eval fn (what the histogram bins)."""
    return [m for row in side.stats if row and (m := row[0][0]) is not None]


def _entry(row: Row, runs: int) -> dict[str, Any]:
    return {
        "prompt": excerpt(row.prompt(), 300),
        "expected": None if row.expected is None else excerpt(row.expected, 300),
        "meta": {},
        "cells": [None] * runs,
    }


def _diff(entry: dict[str, Any]) -> None:
    """Two runs: each fn's per-row B − A (both rows scored)."""
    cells = entry["cells"]
    if len(cells) != 2 or cells[0] is None or cells[1] is None:
        return
    diff = {}
    for fn, a in cells[0]["mean"].items():
        b = cells[1]["mean"].get(fn)
        if a is not None and b is not None and (b - a) - (b - a) == 0.0:
            diff[fn] = b - a  # (beyond a float's range, near ±1.8e308: not shown)
    entry["diff"] = diff


def _chosen(
    by: str | None, runs: list[dict[str, Any]], candidates: list[str], seen: dict[str, set[str]]
) -> str | None:
    """The column the page opens sliced by: ``--by``, else a run's ``slice_by``."""
    if by is not None:
        if by not in seen:
            raise InvalidInputError(
                f"no row has a column {by!r} to slice by",
                hint="slice by one of its columns: " + (", ".join(sorted(seen)) or "(none)"),
                code="NO_SUCH_COLUMN",
            )
        if by not in candidates:
            candidates.append(by)  # asked for: shown even with one value or very many
            candidates.sort()
        return by
    return next((r["slice_by"] for r in runs if r["slice_by"] in candidates), None)


def slices_data(
    sources: Sequence[Source], columns: Sequence[str], comparison: Any = None
) -> dict[str, Any]:
    """Per column: each run's slices (rows, mean, pass@1, pass@n per fn) over every row
    and, for two runs, eval compare --by's paired B − A per value."""
    if not columns:
        return {}
    per_run = []
    means: dict[str, list[dict[str, list[float]]]] = {c: [] for c in columns}
    for source in sources:
        doc = source.results
        found = slice_columns(
            ((row.metadata, row.runs) for row in doc.rows(transcripts=False)),
            columns,
            doc.eval_fns,
            doc.pass_threshold,
        )
        per_run.append({c: s.to_json(doc.eval_fns, doc.n) for c, s in found.items()})
        for column, sliced in found.items():
            means[column].append({s.value: list(s.row_means) for s in sliced.slices})
    data: dict[str, Any] = {c: {"runs": [run[c] for run in per_run]} for c in columns}
    data["_means"] = means  # what the charts draw per value (never serialized)
    if comparison is not None:
        from osmosis_local_runner.results.compare.compare_slices import compare_by
        from osmosis_local_runner.results.statistics.slices import NoSuchColumn

        for column in columns:
            with contextlib.suppress(NoSuchColumn):
                data[column]["compare"] = compare_by(comparison, column).to_json()
    return data


def _comparison(sides: Sequence[Side]) -> Any:
    """Two runs: eval compare's comparison of the sides read (their slices are the
    columns' values), or None."""
    if len(sides) != 2:
        return None
    from osmosis_local_runner.results.compare.compare import compare_sides, shared_fns

    try:
        shared = shared_fns(sides[0].doc, sides[1].doc, None)
        return compare_sides(sides[0], sides[1], shared)
    except InvalidInputError:
        return None


def shown_path(path: Path, root: Path) -> str:
    """``path`` as a published page names it: relative to ``root``, else its name alone
    (a scratch copy, a document elsewhere) — never a machine path."""
    from osmosis_client._fs import relative_to

    return (relative_to(path, root) or Path(path.name)).as_posix()
