"""What a tracker is sent of a run, tracker-neutral: its parameters, its summary
metrics (each eval fn's mean and pass@k, errors, tokens by kind, truncation, cost), a
table of its attempts (one schema for every row: transcripts as capped JSON text) and the
results document itself. Built once from the read API; every sink sends the same."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from osmosis_local_runner.api.results import EvalResult

#: attempts the table holds at most (the results document, sent whole, has them all)
MAX_TABLE_ROWS = 5_000
#: characters of a transcript (as JSON text) or an answer a table cell keeps
MAX_CELL = 20_000
#: the table's columns, the same for every run (a tracker joins tables by schema)
COLUMNS = ("row", "attempt", "model", "prompt", "expected", "answer", "score", "passed",
           "scores", "error", "transcript")  # fmt: skip
#: the run's settings sent as parameters (as the results document's config holds them)
PARAMS = ("model", "config_name", "dataset", "n_runs", "pass_threshold", "limit", "eval_fns",
          "rollout_mode", "base_url", "sampling")  # fmt: skip


@dataclass(frozen=True)
class Payload:
    """One run as trackers see it (``prefix``: where its metrics go, ``eval/`` unless a
    suite entry's own)."""

    name: str
    run_id: str  # the local run's id: what makes logging it twice add nothing
    results: Path
    params: dict[str, str]
    metrics: dict[str, float]
    columns: tuple[str, ...] = COLUMNS
    rows: list[list[Any]] = field(default_factory=list)
    truncated_rows: int = 0  # attempts left out of the table (beyond MAX_TABLE_ROWS)


def payload_of(
    result: EvalResult,
    run_id: str,
    *,
    prefix: str = "eval/",
    provenance: dict[str, Any] | None = None,
) -> Payload:
    """The run's payload, its metric keys under ``prefix`` (``eval/accuracy/mean``)."""
    summary, config = result.summary, result.config
    metrics: dict[str, float] = {}
    for fn, stats in summary.eval_fns.items():
        if stats.mean is not None:
            metrics[f"{prefix}{fn}/mean"] = stats.mean
        for k, value in sorted(stats.pass_at_k.items()):
            metrics[f"{prefix}{fn}/pass_at_{k}"] = value
    attempts = max(summary.total_runs, 1)
    metrics |= {
        f"{prefix}attempts": float(summary.total_runs),
        f"{prefix}errored": float(summary.errored_runs),
        f"{prefix}error_rate": summary.errored_runs / attempts,
        f"{prefix}duration_s": summary.duration_ms / 1000,
        f"{prefix}tokens/total": float(summary.total_tokens),
    }
    usage = summary.usage
    if usage is not None:
        for kind in ("input", "output", "reasoning", "cache_read", "cache_write"):
            metrics[f"{prefix}tokens/{kind}"] = float(getattr(usage, f"{kind}_tokens"))
        metrics[f"{prefix}truncation_rate"] = usage.truncation_rate
        if usage.cost_usd is not None:
            metrics[f"{prefix}cost_usd"] = usage.cost_usd
        for kind in ("output_tokens", "reasoning_tokens"):
            spread = usage.per_attempt.get(kind)
            if spread is not None:
                metrics[f"{prefix}{kind}_per_attempt"] = spread.mean
    params = {
        key: _text(config.get(key))
        for key in PARAMS
        if config.get(key) is not None
    }
    params["run_name"] = result.name or result.path.stem
    params["status"] = summary.status
    params |= {k: _text(v) for k, v in (provenance or {}).items() if v is not None}
    rows, left = _table(result)
    return Payload(result.name or result.path.stem, run_id, result.path, params, metrics,
                   rows=rows, truncated_rows=left)  # fmt: skip


def _table(result: EvalResult) -> tuple[list[list[Any]], int]:
    fns = list(result.summary.eval_fns)
    first = fns[0] if fns else None
    threshold = result.config.get("pass_threshold", 1.0)
    threshold = float(threshold) if isinstance(threshold, int | float) else 1.0
    rows: list[list[Any]] = []
    left = 0
    for row in result.rows(transcripts=True):
        for a in row.attempts:
            if len(rows) >= MAX_TABLE_ROWS:
                left += 1
                continue
            score = a.scores.get(first) if first else None
            rows.append([
                row.index, a.run_index, a.model_tag or "primary", _cap(row.prompt),
                _cap(row.expected), _cap(a.answer), score,
                None if score is None else bool(a.success and score >= threshold),
                json.dumps(a.scores, sort_keys=True), a.error or "", _cap(a.transcript),
            ])  # fmt: skip
    return rows, left


def _cap(text: str | None) -> str:
    if not text:
        return ""
    return text if len(text) <= MAX_CELL else text[: MAX_CELL - 1] + "…"


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True)[:500]
