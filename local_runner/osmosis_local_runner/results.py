"""The results document of cli.md: built from attempt records, written atomically (0600:
it holds prompts and model outputs)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from osmosis_client._fs import atomic_write

from .journal import AttemptRecord
from .scoring import describe, ks_for, mean_pass_at_k

RESULTS_MODE = 0o600


def passed(record: AttemptRecord, fn: str, threshold: float) -> bool:
    """Errored attempts never pass, nor does an eval fn that raised, whatever the score."""
    return record.success and fn not in record.fn_errors and record.scores.get(fn, 0.0) >= threshold


def summarize(
    rows: Mapping[int, Sequence[AttemptRecord]],
    eval_fns: Sequence[str],
    *,
    n: int,
    pass_threshold: float,
) -> dict[str, Any]:
    """Totals, and per eval fn: mean, std, min, max and pass@k — every statistic of a fn
    from the same per-attempt scores."""
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
                "row_digest": rows[index][0].row_digest,
                "runs": [r.run_json() for r in sorted(rows[index], key=lambda r: r.run_index)],
            }
            for index in sorted(rows)
        ],
    }


def error_verdict(summary: Mapping[str, Any], max_error_rate: float | None) -> str | None:
    """Why a finished run counts as failed (every attempt errored, or more than
    ``max_error_rate`` of them), or None."""
    total, errored = summary.get("total_runs") or 0, summary.get("errored_runs") or 0
    if not total:
        return None
    if errored == total:
        return f"every attempt errored ({errored} of {total})"
    if max_error_rate is not None and errored / total > max_error_rate:
        return (
            f"{errored} of {total} attempts errored ({errored / total:.1%}), "
            f"above the maximum error rate {max_error_rate:g}"
        )
    return None


def dump_document(document: Mapping[str, Any]) -> bytes:
    """Strict JSON (no NaN/Infinity): the head indented, then one row per line — readable,
    grep-able, and written by the C encoder (``indent=`` would force the slow one)."""
    encode = json.JSONEncoder(allow_nan=False, separators=(", ", ": ")).encode
    head = {k: v for k, v in document.items() if k != "rows"}
    parts = [
        f"  {json.dumps(k)}: {json.dumps(v, indent=2, allow_nan=False)}" for k, v in head.items()
    ]
    text = "{\n" + ",\n".join(part.replace("\n", "\n  ") for part in parts)
    if "rows" in document:
        rows = ",\n    ".join(encode(row) for row in document["rows"])
        text += ',\n  "rows": [\n    ' + rows + "\n  ]" if document["rows"] else ',\n  "rows": []'
    return (text + "\n}\n").encode()


def write_document(path: Path, document: Mapping[str, Any]) -> None:
    """All or nothing: temp file + fsync + rename."""
    atomic_write(path, dump_document(document), mode=RESULTS_MODE)
