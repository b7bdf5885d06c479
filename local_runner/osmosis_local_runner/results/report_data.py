"""The report's data, computed here from the documents (the page only formats it): the
runs with pass@k over every k ≤ n, the rows aligned across runs by content with what was
expected and each run's telling answer, the per-row B − A of two runs, and every
statistic by each dataset column worth slicing by (2 to 50 values, not an identifier)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from datetime import datetime, timezone
from typing import Any

from osmosis_client.errors import InvalidInputError
from osmosis_local_runner.results.ci_reports import RowVerdict
from osmosis_local_runner.results.documents import ResultsFile, Row, excerpt, text_of
from osmosis_local_runner.results.scoring import mean_pass_at_k, passed
from osmosis_local_runner.results.slices import MAX_SLICES, slice_columns, slice_value
from osmosis_local_runner.results.sources import Source

#: run colours (colour-blind safe: Okabe–Ito)
COLOURS = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000")
#: the longest message text kept in the page (a transcript is for reading, not archiving)
MAX_MESSAGE = 20_000
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


def _messages(record_messages: list[Any] | None) -> list[dict[str, Any]] | None:
    if record_messages is None:
        return None
    shown = []
    for message in record_messages:
        if not isinstance(message, dict):
            continue
        item: dict[str, Any] = {
            "role": str(message.get("role", "?")),
            "content": text_of(message.get("content"))[:MAX_MESSAGE],
        }
        calls = message.get("tool_calls")
        if isinstance(calls, list) and calls:
            functions = [
                call["function"]
                for call in calls
                if isinstance(call, dict) and isinstance(call.get("function"), dict)
            ]
            item["tool_calls"] = [
                {
                    "name": str(function.get("name", "?")),
                    "arguments": str(function.get("arguments", ""))[:MAX_MESSAGE],
                }
                for function in functions
            ]
        if message.get("name"):
            item["name"] = str(message["name"])
        shown.append(item)
    return shown


def _cell(row: Row, doc: ResultsFile, transcripts: bool) -> dict[str, Any]:
    verdicts = {fn: RowVerdict.of(row, fn, doc.pass_threshold) for fn in doc.eval_fns}
    return {
        "row": row.index,
        "mean": {fn: v.mean for fn, v in verdicts.items()},
        "passing": {fn: [v.attempts, v.passing] for fn, v in verdicts.items()},
        "status": {fn: v.status for fn, v in verdicts.items()},
        "answer": {fn: excerpt(v.answer, 300) for fn, v in verdicts.items()},
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
                "messages": _messages(r.messages()) if transcripts else None,
            }
            for r in sorted(row.runs, key=lambda r: (r.model_tag or "", r.run_index))
        ],
    }


def _run(source: Source, position: int) -> dict[str, Any]:
    doc = source.results
    return {
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


def build_data(sources: Sequence[Source], *, by: str | None = None) -> dict[str, Any]:
    """The page's data: runs, rows aligned across runs by content, slices."""
    runs = [_run(source, i) for i, source in enumerate(sources)]
    table: dict[tuple[str, int], dict[str, Any]] = {}
    order: list[tuple[str, int]] = []
    columns: dict[str, set[str]] = defaultdict(set)  # column → values seen (capped)
    passes: list[dict[str, list[tuple[int, int]]]] = [defaultdict(list) for _ in sources]
    for position, source in enumerate(sources):
        doc = source.results
        seen: dict[str, int] = defaultdict(int)
        for row in doc.rows():
            digest = row.digest or f"#{row.index}"
            key = (digest, seen[digest])
            seen[digest] += 1
            entry = table.get(key)
            if entry is None:
                entry = table[key] = _entry(row, len(sources))
                order.append(key)
            cell = entry["cells"][position] = _cell(row, doc, transcripts=True)
            for fn, (attempts, passing) in cell["passing"].items():
                passes[position][fn].append((attempts, passing))
            for column, value in row.metadata.items():
                values = columns[column]
                if len(values) <= MAX_SLICES:
                    values.add(slice_value({column: value}, column))
                entry["meta"].setdefault(column, slice_value(row.metadata, column))
    for run, counts in zip(runs, passes, strict=True):
        run["pass_at_k"] = {
            fn: [[k, mean_pass_at_k(rows, k)] for k in ks_up_to(run["n"])]
            for fn, rows in counts.items()
        }
    # a slice holds rows: 2 to 50 values, two rows a value on average (not an identifier)
    candidates = sorted(
        c
        for c, values in columns.items()
        if 2 <= len(values) <= MAX_SLICES and len(values) * 2 <= len(order)
    )
    chosen = _chosen(by, runs, candidates, columns)
    rows = [table[key] for key in order]
    for entry in rows:
        entry["meta"] = {c: entry["meta"].get(c, slice_value(None, c)) for c in candidates}
        _diff(entry)
    return {
        "generated": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "runs": runs,
        "rows": rows,
        "columns": candidates,
        "slice_by": chosen,
        "slices": slices_data(sources, candidates),
    }


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


def slices_data(sources: Sequence[Source], columns: Sequence[str]) -> dict[str, Any]:
    """Per column: each run's slices (rows, mean, pass@1, pass@n per fn) and, for two
    runs, eval compare --by's paired B − A per value."""
    if not columns:
        return {}
    per_run = []
    for source in sources:
        doc = source.results
        found = slice_columns(
            ((row.metadata, row.runs) for row in doc.rows()), columns, doc.eval_fns,
            doc.pass_threshold,
        )  # fmt: skip
        per_run.append({c: s.to_json(doc.eval_fns, doc.n) for c, s in found.items()})
    data: dict[str, Any] = {c: {"runs": [run[c] for run in per_run]} for c in columns}
    if len(sources) == 2:
        for column, compared in _compared(sources, columns).items():
            data[column]["compare"] = compared
    return data


def _compared(sources: Sequence[Source], columns: Sequence[str]) -> dict[str, Any]:
    from osmosis_local_runner.results.compare import compare
    from osmosis_local_runner.results.compare_slices import compare_by

    try:
        comparison = compare(sources[0].results.path, sources[1].results.path, by=columns)
    except InvalidInputError:
        return {}
    return {column: compare_by(comparison, column).to_json() for column in columns}
