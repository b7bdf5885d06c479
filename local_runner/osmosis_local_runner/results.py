"""The results document of cli.md: built from attempt records, written atomically."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from osmosis_client._fs import atomic_write

from .journal import AttemptRecord
from .scoring import describe, ks_for, mean_pass_at_k

_ROW_KEYS = frozenset({"row_key", "row_index"})  # row-level in the document


def passed(record: AttemptRecord, fn: str, threshold: float) -> bool:
    """Errored attempts never pass, whatever their (zero) score."""
    return record.success and record.scores.get(fn, 0.0) >= threshold


def summarize(
    rows: Mapping[int, Sequence[AttemptRecord]],
    eval_fns: Sequence[str],
    *,
    n: int,
    pass_threshold: float,
) -> dict[str, Any]:
    per_fn: dict[str, Any] = {}
    for fn in eval_fns:
        scores = [r.scores.get(fn, 0.0) for runs in rows.values() for r in runs]
        stats: dict[str, Any] = describe(scores)
        counts = [
            (len(runs), sum(passed(r, fn, pass_threshold) for r in runs)) for runs in rows.values()
        ]
        for k in ks_for(n):
            stats[f"pass_at_{k}"] = mean_pass_at_k(counts, k)
        per_fn[fn] = stats
    all_runs = [r for runs in rows.values() for r in runs]
    return {
        "total_rows": len(rows),
        "total_runs": len(all_runs),
        "errored_runs": sum(not r.success for r in all_runs),
        "eval_fns": per_fn,
        "total_tokens": sum(r.tokens for r in all_runs),
    }


def build_document(
    config: Mapping[str, Any],
    rows: Mapping[int, Sequence[AttemptRecord]],
    eval_fns: Sequence[str],
    *,
    n: int,
    pass_threshold: float,
    duration_ms: int,
    status: str,
) -> dict[str, Any]:
    summary = summarize(rows, eval_fns, n=n, pass_threshold=pass_threshold)
    summary["total_duration_ms"] = duration_ms
    summary["status"] = status
    return {
        "config": dict(config),
        "summary": summary,
        "rows": [
            {
                "row_index": index,
                "runs": [
                    {k: v for k, v in r.to_json().items() if k not in _ROW_KEYS}
                    for r in sorted(rows[index], key=lambda r: r.run_index)
                ],
            }
            for index in sorted(rows)
        ],
    }


def write_document(path: Path, document: Mapping[str, Any]) -> None:
    """All or nothing: temp file + fsync + rename."""
    indent = 2 if len(document.get("rows", ())) <= 5000 else None
    atomic_write(path, (json.dumps(document, indent=indent) + "\n").encode())
