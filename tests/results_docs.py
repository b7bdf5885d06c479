"""Results documents built directly, for the tests of what reads them."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from osmosis_local_runner.results.documents.document import document_head, write_document
from osmosis_local_runner.results.documents.records import AttemptRecord


def attempt(
    row: int,
    run: int,
    score: float | None,
    *,
    digest: str | None = None,
    fn: str = "grader",
    answer: str | None = None,
    error: str | None = None,
    prompt: str | None = None,
    transcript: bool = True,
    skipped: bool = False,
) -> AttemptRecord:
    answer = answer if answer is not None else f"answer {row}.{run}"
    messages = [{"role": "user", "content": prompt or f"question {row}"}]
    if error is None:
        messages.append({"role": "assistant", "content": answer})
    return AttemptRecord(
        row_index=row,
        run_index=run,
        row_digest=digest or f"d{row}",
        success=error is None,
        scores={} if skipped else {fn: 0.0 if error else float(score or 0.0)},
        duration_ms=100 + run,
        tokens=10,
        error=error,
        answer=None if error else answer,
        transcript=json.dumps(messages) if transcript else None,
        skipped=skipped,
    )


def write(
    path: Path,
    scores: Mapping[int, Sequence[float]],
    *,
    fn: str = "grader",
    threshold: float = 1.0,
    model: str = "mock/a",
    digests: Mapping[int, str] | None = None,
    extra: Mapping[int, Sequence[AttemptRecord]] | None = None,
    dataset: str = "data.jsonl",
    metadata: Mapping[int, Mapping[str, Any]] | None = None,
    slice_by: str | None = None,
) -> Path:
    """A document whose row ``i`` has one attempt per score in ``scores[i]``."""
    rows: dict[int, list[AttemptRecord]] = {}
    for index, values in scores.items():
        digest = (digests or {}).get(index)
        rows[index] = [attempt(index, k, v, digest=digest, fn=fn) for k, v in enumerate(values)]
    for index, records in (extra or {}).items():
        rows[index] = list(records)
    for index, columns in (metadata or {}).items():
        facts = json.dumps({"expected": f"truth {index}", "metadata": dict(columns)})
        for record in rows[index]:
            record.row_facts = facts
    n = max((len(v) for v in rows.values()), default=1)
    config: dict[str, Any] = {
        "model": model,
        "n_runs": n,
        "pass_threshold": threshold,
        "eval_fns": [fn],
        "limit": None,
        "batch_size": 1,
        "seed": 0,
        "dataset": dataset,
    }
    if slice_by is not None:
        config["slice_by"] = slice_by
    head = document_head(
        config, rows, [fn], n=n, pass_threshold=threshold, duration_ms=1234, status="finished"
    )
    write_document(path, head, rows)
    return path
