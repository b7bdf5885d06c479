"""A run's files in the published CLI's layout (published-cli-0.3.8.md §6.2–6.3 and
[C] §6), written beside our results document so the published tools, agent skills and
``eval upload`` read our runs: ``index.jsonl`` (= ``summary.jsonl``), ``events.jsonl``,
``progress.json``, ``metrics.json`` and the ``trajectories/row_R_run_K.json`` copies.

Where the published runner is loose we are exact (its §8 #14): ``graded`` counts the
attempts that got a reward, ``passed + failed = completed`` always, a failed attempt
never counts as passed whatever it carries.
"""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import statistics
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from osmosis_client._fs import atomic_write
from osmosis_local_runner.results.documents.records import AttemptRecord, compact
from osmosis_local_runner.results.statistics.scoring import pass_at_k

_HEX32 = re.compile(r"[0-9a-f]{32}")


@dataclass(frozen=True)
class RunFacts:
    """What the published files say about the run besides its attempts."""

    run_name: str
    local_run_id: str
    dataset_name: str
    model_name: str
    rollout_name: str
    started_at: str
    completed_at: str | None
    status: str  # running | finished | incomplete
    duration_ms: int
    pass_threshold: float
    n: int
    total_dataset_rows: int
    fn: str = "grader"  # the eval fn whose score is the reward


def rollout_id(record: AttemptRecord, local_run_id: str) -> str:
    """The attempt's rollout id: the server's when it is the published shape (32 lower
    hex), else a stable one derived from the run and the attempt."""
    given = (record.extra or {}).get("rollout_id")
    if isinstance(given, str) and _HEX32.fullmatch(given):
        return given
    seed = f"{local_run_id}:{record.row_index}:{record.run_index}"
    return uuid.uuid5(uuid.NAMESPACE_URL, seed).hex


def status_of(record: AttemptRecord) -> str:
    if record.skipped:
        return "skipped"
    return "success" if record.success else "failed"


def index_rows(
    records: Mapping[int, Sequence[AttemptRecord]], selection: Sequence[int], facts: RunFacts
) -> list[dict[str, Any]]:
    """One row per attempt, sorted by (row, run); ``row_index`` is the position in the
    selection (the published meaning), ``source_row_index`` the row in the file."""
    position = {source: i for i, source in enumerate(selection)}
    rows = []
    for source in sorted(records):
        for record in sorted(records[source], key=lambda r: r.run_index):
            if record.model_tag is not None or source not in position:
                continue
            row: dict[str, Any] = {
                "row_index": position[source],
                "run_index": record.run_index,
                "rollout_id": rollout_id(record, facts.local_run_id),
                "status": status_of(record),
                "duration_ms": round(record.duration_ms),
                "tokens": record.tokens,
                "source_row_index": source,
            }
            trajectory = (record.extra or {}).get("trajectory")
            if isinstance(trajectory, str):
                row["trajectory_filename"] = Path(trajectory).name
            reward = record.scores.get(facts.fn)
            if record.success and not record.skipped and _finite(reward):
                row["reward"] = reward
            if not record.success:
                category = (record.extra or {}).get("err_category")
                row["error_type"] = category if isinstance(category, str) else "rollout_failed"
            rows.append(row)
    return rows


def metrics(rows: Sequence[Mapping[str, Any]], facts: RunFacts) -> dict[str, Any]:
    """``metrics.json``: skipped attempts are out of every statistic."""
    completed = [r for r in rows if r["status"] != "skipped"]
    rewards = [float(r["reward"]) for r in completed if "reward" in r]
    passed = sum(1 for r in completed if r.get("reward", -math.inf) >= facts.pass_threshold)
    summary: dict[str, Any] = {
        "total_samples": len(rows),
        "completed_samples": len(completed),
        "graded": len(rewards),
        "passed": passed,
        "failed": len(completed) - passed,
        "skipped": len(rows) - len(completed),
        "pass_rate": passed / len(completed) if completed else None,
        "pass_threshold": facts.pass_threshold,
        "tokens_used": sum(int(r.get("tokens") or 0) for r in rows),
    }
    if rewards:
        summary["reward_stats"] = {
            "mean": statistics.fmean(rewards),
            "median": statistics.median(rewards),
            "std": statistics.pstdev(rewards),
            "min": min(rewards),
            "max": max(rewards),
        }
    if facts.n >= 2:
        summary["n_runs"] = facts.n
        summary["pass_at_k"] = _pass_at_k(completed, facts)
    eval_run = {
        "id": facts.local_run_id,
        "status": facts.status,
        "name": facts.run_name,
        "dataset_name": facts.dataset_name,
        "model_name": facts.model_name,
        "rollout_name": facts.rollout_name,
        "duration_ms": facts.duration_ms,
        "started_at": facts.started_at,
    }
    if facts.completed_at:
        eval_run["completed_at"] = facts.completed_at
    return {"eval_run": eval_run, "summary": summary}


def _pass_at_k(completed: Sequence[Mapping[str, Any]], facts: RunFacts) -> list[dict[str, Any]]:
    """Per row, the unbiased estimate for k = 1, 2, 4, … ≤ n, averaged over the rows with
    at least k attempts."""
    by_row: dict[int, list[bool]] = {}
    for r in completed:
        by_row.setdefault(r["row_index"], []).append(
            r.get("reward", -math.inf) >= facts.pass_threshold
        )
    points = []
    k = 1
    while k <= facts.n:
        values = [pass_at_k(len(p), sum(p), k) for p in by_row.values() if len(p) >= k]
        if values:
            points.append({"k": k, "value": statistics.fmean(values)})
        k *= 2
    return points


def write_projections(
    run_dir: Path,
    records: Mapping[int, Sequence[AttemptRecord]],
    selection: Sequence[int],
    facts: RunFacts,
) -> dict[str, Any]:
    """Write the published files of ``run_dir`` (each atomically); returns metrics."""
    rows = index_rows(records, selection, facts)
    published = [{k: v for k, v in r.items() if k != "source_row_index"} for r in rows]
    index = "".join(compact(r) + "\n" for r in published).encode()
    for name in ("index.jsonl", "summary.jsonl"):
        atomic_write(run_dir / name, index, mode=0o600)
    events = "".join(json.dumps(r, sort_keys=True) + "\n" for r in rows).encode()
    atomic_write(run_dir / "events.jsonl", events, mode=0o600)
    progress = {
        "total_runs": len(selection) * facts.n,
        "sampled_rows": len(selection),
        "total_dataset_rows": facts.total_dataset_rows,
    }
    atomic_write(run_dir / "progress.json", _json(progress), mode=0o600)
    document = metrics(rows, facts)
    atomic_write(run_dir / "metrics.json", _json(document), mode=0o600)
    _project_trajectories(run_dir, rows)
    _write_log(run_dir, records, document, facts)
    return document


def _write_log(
    run_dir: Path,
    records: Mapping[int, Sequence[AttemptRecord]],
    document: Mapping[str, Any],
    facts: RunFacts,
) -> None:
    """``logs.txt``: ``<ISO> <LEVEL> [<step>] <message>``, one line per failed attempt
    and the run's outcome (the published form)."""
    when = facts.completed_at or facts.started_at
    lines = [f"{facts.started_at} INFO [run] {facts.run_name}: started"]
    for source in sorted(records):
        for r in sorted(records[source], key=lambda r: r.run_index):
            if not r.success and r.model_tag is None:
                error = " ".join(str(r.error or "failed").split())[:2000]
                lines.append(f"{when} ERROR [rollout] row {source} run {r.run_index}: {error}")
    summary = document["summary"]
    lines.append(
        f"{when} INFO [run] {facts.run_name}: {facts.status}, {summary['passed']} passed, "
        f"{summary['failed']} failed, {summary['skipped']} skipped"
    )
    atomic_write(run_dir / "logs.txt", ("\n".join(lines) + "\n").encode(), mode=0o600)


def write_running(run_dir: Path, facts: RunFacts) -> None:
    """``metrics.json`` with status ``running``, at the start (as published)."""
    atomic_write(run_dir / "metrics.json", _json(metrics([], facts)), mode=0o600)


def _project_trajectories(run_dir: Path, rows: Sequence[Mapping[str, Any]]) -> None:
    target = run_dir / "trajectories"
    for row in rows:
        name = row.get("trajectory_filename")
        source = run_dir / "rollout_trials" / row["rollout_id"] / str(name)
        if not name or not source.is_file():
            continue
        target.mkdir(exist_ok=True)
        dest = target / f"row_{row['row_index']}_run_{row['run_index']}.json"
        try:
            dest.unlink(missing_ok=True)
            os.link(source, dest)  # a copy that costs no space
        except OSError:
            shutil.copyfile(source, dest)


def _json(value: Any) -> bytes:
    return (json.dumps(value, indent=2, ensure_ascii=False, allow_nan=False) + "\n").encode()


def _finite(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
