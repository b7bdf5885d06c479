"""What a tracker is sent of a run, tracker-neutral: its parameters, its summary
metrics (each eval fn's mean and pass@k, errors, tokens by kind, truncation, cost), a
table of its attempts (one schema for every row: transcripts as capped JSON text) and the
results document itself. Built once from the read API; every sink sends the same."""

from __future__ import annotations

import contextlib
import json
import math
import os
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from osmosis_local_runner.results.documents.documents import ResultsFile, pass_at_key
from osmosis_local_runner.results.reports.report_data import shown_path
from osmosis_local_runner.results.statistics.scoring import passed

#: attempts the table holds at most (the results document, sent whole, has them all)
MAX_TABLE_ROWS = 5_000
#: characters of a transcript (as JSON text) or an answer a table cell keeps
MAX_CELL = 20_000
#: the table's columns, the same for every run (a tracker joins tables by schema)
COLUMNS = (
    "row",
    "attempt",
    "model",
    "prompt",
    "expected",
    "answer",
    "score",
    "passed",
    "scores",
    "error",
    "transcript",
)
#: the run's settings sent as parameters (as the results document's config holds them)
PARAMS = (
    "model",
    "config_name",
    "dataset",
    "n_runs",
    "pass_threshold",
    "limit",
    "eval_fns",
    "rollout_mode",
    "base_url",
    "sampling",
    "series",
    "step",
)


#: the mean and its uncertainty, as each eval fn's metrics name them (``eval/FN/se``)
UNCERTAIN = {"mean": "mean", "stderr": "se", "ci_low": "ci_low", "ci_high": "ci_high"}


@dataclass(frozen=True)
class Payload:
    """One run as trackers see it (``prefix``: where its metrics go, ``eval/`` unless a
    suite entry's own)."""

    name: str
    run_id: str  # the local run's id: what makes logging it twice add nothing
    group: str  # the eval it is a run of: its config's name, or a suite entry's
    results: Path
    params: dict[str, str]
    metrics: dict[str, float]
    columns: tuple[str, ...] = COLUMNS
    rows: list[list[Any]] = field(default_factory=list)
    truncated_rows: int = 0  # attempts left out of the table (beyond MAX_TABLE_ROWS)
    #: the series the run belongs to: every run of it goes to one tracker run (a curve)
    series: str | None = None


def payload_of(
    doc: ResultsFile,
    name: str,
    run_id: str,
    *,
    prefix: str = "eval/",
    provenance: dict[str, Any] | None = None,
    group: str = "eval",
) -> Payload:
    """The run's payload, its metric keys under ``prefix`` (``eval/accuracy/mean``)."""
    summary, config = doc.summary, doc.config
    metrics: dict[str, float] = {}
    for fn, stats in (summary.get("eval_fns") or {}).items():
        for key, value in sorted((stats or {}).items()):
            if _finite(value) and (key in UNCERTAIN or pass_at_key(key) is not None):
                metrics[f"{prefix}{fn}/{UNCERTAIN.get(key, key)}"] = float(value)
    attempts = int(summary.get("total_runs") or 0)
    errored = int(summary.get("errored_runs") or 0)
    metrics |= {
        f"{prefix}attempts": float(attempts),
        f"{prefix}errored": float(errored),
        f"{prefix}error_rate": errored / max(attempts, 1),
        f"{prefix}duration_s": float(summary.get("total_duration_ms") or 0) / 1000,
        f"{prefix}tokens/total": float(summary.get("total_tokens") or 0),
    }
    metrics |= _usage(summary.get("usage"), prefix)
    root = project_of(doc.path)
    params = {key: _text(config[key]) for key in PARAMS if config.get(key) is not None}
    if isinstance(config.get("dataset"), str):  # its place in the project, not the machine's
        params["dataset"] = shown_path(Path(config["dataset"]), root)
    params["run_name"] = name
    params["status"] = str(summary.get("status") or "finished")
    params |= {k: _text(v) for k, v in (provenance or {}).items() if v is not None}
    rows, left = _table(doc)
    series = config.get("series") if isinstance(config.get("series"), str) else None
    return Payload(
        name,
        run_id,
        group,
        doc.path,
        params,
        metrics,
        rows=rows,
        truncated_rows=left,
        series=series,
    )


def project_of(results: Path) -> Path:
    """The project a run belongs to: the folder above ``.osmosis/evals/NAME/`` for a named
    run, else the current directory."""
    run = results.resolve().parent
    if run.parent.name == "evals" and run.parent.parent.name == ".osmosis":
        return run.parent.parent.parent
    return Path.cwd()


@contextlib.contextmanager
def published_copy(results: Path) -> Iterator[Path]:
    """The results document as it may leave the machine: every mention of the project's
    own folder made relative (``/home/ada/proj/data/x.jsonl`` → ``data/x.jsonl``), copied
    line by line (the document may be large); removed afterwards."""
    root = str(project_of(results))
    prefixes = [json.dumps(root + os.sep)[1:-1], root + os.sep]  # as JSON writes it, and raw
    with tempfile.TemporaryDirectory(prefix="osmosis-publish-") as scratch:
        copy = Path(scratch) / results.name
        with open(results, encoding="utf-8") as source, open(copy, "w", encoding="utf-8") as out:
            for line in source:
                for prefix in prefixes:
                    line = line.replace(prefix, "")
                out.write(line)
        yield copy


def _usage(usage: Any, prefix: str) -> dict[str, float]:
    """Tokens by kind, truncation and cost (a run kept before they were counted: none)."""
    if not isinstance(usage, dict):
        return {}
    found = {
        f"{prefix}tokens/{kind}": float(usage.get(f"{kind}_tokens") or 0)
        for kind in ("input", "output", "reasoning", "cache_read", "cache_write")
    }
    if _finite(usage.get("truncation_rate")):
        found[f"{prefix}truncation_rate"] = float(usage["truncation_rate"])
    if _finite(usage.get("cost_usd")):  # unknown price: no made-up zero
        found[f"{prefix}cost_usd"] = float(usage["cost_usd"])
    if _finite(usage.get("cached_calls")):  # answered from the call cache: free
        found[f"{prefix}calls/cached"] = float(usage["cached_calls"])
        found[f"{prefix}calls/made"] = float(usage.get("calls") or 0)
    for kind in ("output_tokens", "reasoning_tokens"):
        spread = (usage.get("per_attempt") or {}).get(kind) or {}
        if _finite(spread.get("mean")):
            found[f"{prefix}{kind}_per_attempt"] = float(spread["mean"])
    return found


def _table(doc: ResultsFile) -> tuple[list[list[Any]], int]:
    rows: list[list[Any]] = []
    left = 0
    for cells in attempt_cells(doc, cap=MAX_CELL):
        if len(rows) < MAX_TABLE_ROWS:
            rows.append(cells)
        else:
            left += 1
    return rows, left


def attempt_cells(doc: ResultsFile, *, cap: int | None = None) -> Iterator[list[Any]]:
    """Each attempt as the table's cells (:data:`COLUMNS`), streamed from the document;
    ``cap``: the longest text a cell keeps (None: whole)."""
    first = doc.eval_fns[0] if doc.eval_fns else None

    def text(value: str | None) -> str:
        if not value:
            return ""
        return value if cap is None or len(value) <= cap else value[: cap - 1] + "…"

    for row in doc.rows(transcripts=True):
        for a in row.runs:
            score = a.scores.get(first) if first else None
            yield [
                row.index,
                a.run_index,
                a.model_tag or "primary",
                text(row.user_prompt),
                text(row.expected),
                text(a.answer),
                score,
                None if score is None else passed(a, first or "", doc.pass_threshold),
                json.dumps(a.scores, sort_keys=True),
                a.error or "",
                text(a.transcript),
            ]


def _finite(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True)[:500]
