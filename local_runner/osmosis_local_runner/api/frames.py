"""Dataframes across runs: ``runs_df()`` (the run list), ``attempts_df(runs)`` (one row
per attempt) and ``calls_df(runs)`` (one row per model call, with its timing, tries and
usage) — pandas or polars, whichever is asked for (default: pandas when installed, else
polars). Read from disk row by row into columns: a run's rows are never all held as
objects, only the frame's columns."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from osmosis_local_runner.api.results import EvalResult, load_run
from osmosis_local_runner.results.documents.documents import ResultsFile
from osmosis_local_runner.results.statistics.frames import (
    Engine,
    attempt_rows,
    call_rows,
    columns_of,
    frame,
)

RunRef = str | Path | EvalResult


def runs_df(root: Path | None = None, *, engine: Engine | None = None) -> Any:
    """Every local run under ``root/.osmosis/evals`` (``eval list --local``'s columns,
    with tokens, truncation, cost, tags and the group it plots with), newest first."""
    from osmosis_local_runner.api.history import list_runs

    rows = [run.to_json() for run in list_runs(root)]
    for row in rows:
        row["tags"] = ",".join(row.get("tags") or [])
    return frame(columns_of(rows), engine)


def attempts_df(
    runs: RunRef | Sequence[RunRef], *, root: Path | None = None, engine: Engine | None = None
) -> Any:
    """One row per attempt of each run (a name, a run directory, a results document or
    an ``EvalResult``): run, row, attempt, model, success, skipped, error, duration,
    tokens by kind, finish reason, cost, prompt, expected, answer, and per eval fn
    ``score:FN`` and ``passed:FN``."""
    results = _results(runs, root)
    fns = sorted({fn for r in results for fn in r._file.eval_fns})
    return frame(columns_of(attempt_rows(_docs(results), fns)), engine)


def calls_df(
    runs: RunRef | Sequence[RunRef], *, root: Path | None = None, engine: Engine | None = None
) -> Any:
    """One row per model call of each run (kept with transcripts): run, row, attempt,
    call, when it started and how long it took (ms from the attempt's start), tries
    (failed ones + 1), error, and its usage (tokens by kind, finish reason, cost)."""
    return frame(columns_of(call_rows(_docs(_results(runs, root)))), engine)


def _results(runs: RunRef | Sequence[RunRef], root: Path | None) -> list[EvalResult]:
    given = [runs] if isinstance(runs, str | Path | EvalResult) else list(runs)
    return [r if isinstance(r, EvalResult) else load_run(r, root=root) for r in given]


def _docs(results: list[EvalResult]) -> list[tuple[str, ResultsFile]]:
    return [(result.name, result._file) for result in results]
