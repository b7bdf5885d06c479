"""``eval rescore``: grade a run's saved transcripts again with new or fixed eval fns.

No model is called. Every attempt that finished keeps its transcript, answer, tokens
and timing and gets new scores; an attempt that errored (the rollout failed) stays
errored with 0 for every new fn; a skipped one stays skipped. The dataset rows come from
the run's dataset file (or ``--dataset``) and must be the rows the run saw (checked by
digest). The new document is a results document like any other, plus
``"rescored_from"``.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Callable, Collection, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from osmosis_client.errors import InvalidInputError
from osmosis_client.llm.cache import SCOPE
from osmosis_local_runner.results.documents.document import (
    check_results_path,
    document_head,
    write_document,
)
from osmosis_local_runner.results.documents.documents import ResultsFile
from osmosis_local_runner.results.documents.records import AttemptRecord
from osmosis_local_runner.run.execute.dataset import Dataset, Row
from osmosis_local_runner.run.execute.discovery import load_eval_fn
from osmosis_local_runner.run.execute.eval_fns import EvalFn
from osmosis_local_runner.run.execute.grading import grade
from osmosis_local_runner.run.execute.scheduler import (
    LoopWatchdog,
    ReadAhead,
    WindowStats,
    run_window,
)
from osmosis_local_runner.run.execute.user_code import guard_exits
from osmosis_local_runner.run.request.spec import RunResult


def load_fns(specs: Sequence[str]) -> list[EvalFn]:
    """The eval fns of ``MODULE:FN`` specs; ``NAME=MODULE:FN`` names one in the new
    document as ``NAME`` (e.g. ``grader=rewards.py:fixed``: compared with the original
    run's ``grader`` by ``eval compare``, which pairs eval fns by name)."""
    fns = [_named_fn(spec) for spec in specs]
    names = [fn.name for fn in fns]
    duplicate = next((name for name in names if names.count(name) > 1), None)
    if duplicate is not None:
        raise InvalidInputError(f"eval fn {duplicate} is given twice", code="USAGE")
    return fns


def _named_fn(spec: str) -> EvalFn:
    name, sep, ref = spec.partition("=")
    if not sep or not name.strip() or any(c in name for c in ":/\\"):
        return load_eval_fn(spec, graders=True)  # no name given (a path has no "=")
    return replace(load_eval_fn(ref.strip(), graders=True), name=name.strip())


def _dataset_path(source: ResultsFile, given: Path | None) -> Path:
    if given is not None:
        return given
    recorded = source.config.get("dataset")
    if isinstance(recorded, str) and recorded and Path(recorded).is_file():
        return Path(recorded)
    raise InvalidInputError(
        f"the run's dataset {recorded!r} is not found from here",
        hint="name the dataset the run used, or work from the run's directory",
        code="RESCORE_DATASET_NOT_FOUND",
    )


def _records(source: ResultsFile) -> dict[int, list[AttemptRecord]]:
    records: dict[int, list[AttemptRecord]] = {}
    for row in source.rows():
        for record in row.runs:
            if record.success and not record.skipped and record.transcript is None:
                raise InvalidInputError(
                    f"{source.path} has no transcripts (row {row.index}): rescore re-grades the "
                    "saved conversations",
                    hint="run again keeping transcripts",
                    code="NO_TRANSCRIPTS",
                )
        records[row.index] = row.runs
    return records


def _dataset_rows(path: Path, records: dict[int, list[AttemptRecord]]) -> dict[int, Row]:
    dataset = Dataset(path)
    dataset.validate()
    rows = {row.index: row for row in dataset.rows(set(records))}
    for index, runs in sorted(records.items()):
        row = rows.get(index)
        expected = runs[0].row_digest if runs else ""
        if row is None or (expected and row.digest != expected):
            raise InvalidInputError(
                f"row {index} of {path} is not the row the run graded (the dataset changed)",
                hint="name the dataset the run used",
                code="DATASET_CHANGED",
            )
    return rows


async def _regrade(
    record: AttemptRecord, fns: Sequence[EvalFn], row: Row, timeout: float | None
) -> AttemptRecord:
    names = [fn.name for fn in fns]
    if record.skipped:
        return replace(record, scores={}, fn_errors=None)
    if not record.success:
        return replace(record, scores={name: 0.0 for name in names}, fn_errors=None)
    grades = await grade(fns, record.messages() or [], row, record.run_index, timeout=timeout)
    extra = {k: v for k, v in (record.extra or {}).items() if k != "explanations"}
    if grades.explanations:  # the new grading's, never the old one's
        extra["explanations"] = grades.explanations
    return replace(
        record,
        scores=grades.scores,
        fn_errors=grades.fn_errors or None,
        success=grades.error is None,
        error=grades.error,
        extra=extra or None,
    )


def rescore(
    path: Path,
    specs: Sequence[str],
    output: Path,
    *,
    dataset: Path | None = None,
    batch_size: int = 16,
    on_note: Callable[[str], None] | None = None,
    cache: bool = False,
) -> RunResult:
    """``path``'s attempts graded again with the eval fns ``specs``, written to
    ``output``; ``cache``: a judge's model calls answered from the call cache when their
    input is the same (docs/cache.md)."""
    source = ResultsFile(path)
    data_path = _dataset_path(source, dataset)
    check_results_path(output, {"results document": path, "dataset": data_path})
    with contextlib.suppress(OSError):
        if output.exists() and os.path.samefile(output, path):
            raise InvalidInputError(f"{output} is the document being rescored", code="RESULTS_PATH")
    fns = load_fns(specs)
    records = _records(source)
    rows = _dataset_rows(data_path, records)
    timeout = source.config.get("grader_timeout_s")
    timeout = float(timeout) if isinstance(timeout, int | float) and timeout > 0 else None
    if on_note is not None:
        attempts = sum(len(runs) for runs in records.values())
        on_note(
            f"Re-grading {attempts:,} attempts of {len(records):,} rows with "
            f"{', '.join(fn.name for fn in fns)}"
        )

    new: dict[int, list[AttemptRecord]] = {index: [] for index in records}

    async def execute(record: AttemptRecord) -> None:
        new[record.row_index].append(await _regrade(record, fns, rows[record.row_index], timeout))

    async def main() -> None:
        items = (r for index in sorted(records) for r in records[index])
        with guard_exits(), LoopWatchdog.watching(asyncio.get_running_loop()):
            await run_window(ReadAhead(items, batch_size), batch_size, execute)

    from osmosis_local_runner.run.execute.caching import using_cache

    with using_cache(cache, note=on_note) if cache else contextlib.nullcontext():
        asyncio.run(main())
    for runs in new.values():
        runs.sort(key=lambda r: (r.run_index, r.model_tag or ""))
    head = _head(source, path, [fn.name for fn in fns], new)
    write_document(output, head, new)
    return RunResult(head, output, WindowStats(), new)


def _head(
    source: ResultsFile, path: Path, names: list[str], records: dict[int, list[AttemptRecord]]
) -> dict[str, Any]:
    config = {**source.config, "eval_fns": names}
    summary = source.summary
    baseline = config.get("baseline_model")
    head = document_head(
        config,
        records,
        names,
        n=source.n,
        pass_threshold=source.pass_threshold,
        duration_ms=int(summary.get("total_duration_ms") or 0),
        status=str(summary.get("status") or "finished"),
        baseline=baseline if isinstance(baseline, str) else None,
    )
    head["rescored_from"] = str(path)
    return head


def regrade_attempts(
    path: Path,
    spec: str,
    keys: Collection[tuple[int, int]],
    *,
    times: int = 1,
    dataset: Path | None = None,
    batch_size: int = 16,
    cache: bool = False,
) -> tuple[str, list[dict[tuple[int, int], AttemptRecord]]]:
    """Some attempts of a run (``keys``: row, attempt) graded again with the eval fn
    ``spec`` (``MODULE:FN`` or ``NAME=MODULE:FN``), ``times`` times over — the attempts a
    reviewer judged, when another grader is checked against people or a judge against
    itself. No model is called but the judge's; nothing is written. Returns the fn's
    name and, per time, each attempt's new record. ``cache``: the judge's calls answered
    from the call cache when their input is the same — each time its own sample (a
    judge graded again from the cache would agree with itself for nothing)."""
    source = ResultsFile(path)
    (fn,) = load_fns([spec])
    wanted = set(keys)
    records: dict[int, list[AttemptRecord]] = {}
    for row in source.rows_at({row for row, _ in wanted}):
        runs = [r for r in row.runs if (row.index, r.run_index) in wanted and not r.model_tag]
        missing = [r for r in runs if r.success and not r.skipped and r.transcript is None]
        if missing:
            raise InvalidInputError(
                f"{source.path} has no transcripts (row {row.index}): grading again needs "
                "the saved conversations",
                hint="run again keeping transcripts",
                code="NO_TRANSCRIPTS",
            )
        if runs:
            records[row.index] = runs
    rows = _dataset_rows(_dataset_path(source, dataset), records)
    timeout = source.config.get("grader_timeout_s")
    timeout = float(timeout) if isinstance(timeout, int | float) and timeout > 0 else None
    graded: list[dict[tuple[int, int], AttemptRecord]] = [{} for _ in range(times)]

    async def execute(item: tuple[int, AttemptRecord]) -> None:
        time, record = item
        if times > 1:  # each grading its own sample, in the cache too
            SCOPE.set(("regrade", time))
        new = await _regrade(record, [fn], rows[record.row_index], timeout)
        graded[time][(record.row_index, record.run_index)] = new

    async def main() -> None:
        items = ((t, r) for t in range(times) for runs in records.values() for r in runs)
        with guard_exits(), LoopWatchdog.watching(asyncio.get_running_loop()):
            await run_window(ReadAhead(items, batch_size), batch_size, execute)

    from osmosis_local_runner.run.execute.caching import using_cache

    with using_cache(cache) if cache else contextlib.nullcontext():
        asyncio.run(main())
    return fn.name, graded
