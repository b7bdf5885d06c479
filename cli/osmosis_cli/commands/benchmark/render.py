"""Benchmarks and their runs as the published CLI shows them (published-cli-0.3.8-train.md
§4.2-4.5): the ``--json`` items and details, the plain rows and ``Label: value`` lines."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from osmosis_cli.terminal.numbers import labelled
from osmosis_cli.terminal.times import DASH, ago, duration, parse_time, when

if TYPE_CHECKING:
    from osmosis_client.platform.benchmark.benchmark_models import (
        Benchmark,
        BenchmarkDetail,
        BenchmarkRun,
        BenchmarkRunDetail,
    )

RUN_KEYS = ("run_count", "running_count", "last_run_at", "last_run_status", "last_run_name")


def percent(value: float | None) -> str:
    return DASH if value is None else f"{value * 100:.1f}%"


def benchmark_item(bench: Benchmark) -> dict[str, Any]:
    data = bench.model_dump(mode="json")
    return {"id": data.pop("id"), "name": data.pop("name"), "key": bench.key, **data}


def sync_label(bench: Benchmark) -> str | None:
    """How a benchmark that is not ready reads (None: it is ready)."""
    if bench.sync_status == "pending":
        return "Queued · Waiting to start"
    if bench.sync_status == "syncing":
        return f"Syncing · {bench.synced_task_count} / {bench.task_count} tasks"
    if bench.sync_status == "failed":
        return f"Failed · {bench.sync_error or 'Failed to sync tasks'}"
    return None


def tasks_label(bench: Benchmark, *, detail: bool = False) -> str:
    if bench.sync_status == "failed":
        return "unavailable"
    if bench.sync_status != "ready":
        return f"{bench.synced_task_count} / {bench.task_count} syncing" if detail else DASH
    return f"{bench.task_count:,}"


def benchmark_row(bench: Benchmark) -> list[str]:
    last = sync_label(bench)
    if last is None:
        if bench.last_run_name:
            status = (bench.last_run_status or "unknown").title()
            last = f"{status} · {ago(bench.last_run_at)} · {bench.last_run_name}"
        else:
            last = "No benchmark runs yet"
    return [bench.name, bench.key, last, tasks_label(bench)]


def run_item(run: BenchmarkRun, *, progress: bool = True) -> dict[str, Any]:
    found: dict[str, Any] = {
        "id": run.id,
        "name": run.name,
        "status": run.status,
        "benchmark_id": run.benchmark_id,
        "benchmark_name": run.benchmark_name,
        "agent_count": run.agent_count,
        "best_pass_at_1": run.best_pass_at_1,
        "ingested_results": run.ingested_results,
        "expected_results": run.expected_results,
        "creator_name": run.creator_name,
        "creator_email": run.creator_email,
        "created_at": run.created_at,
        "started_at": run.started_at,
        "completed_at": run.completed_at,
    }
    if run.platform_url:
        found["platform_url"] = run.platform_url
    if progress:
        found["progress"] = run.progress
    return found


def results_label(run: BenchmarkRun) -> str:
    if not run.expected_results:
        return DASH
    return f"{run.ingested_results} / {run.expected_results} results"


def run_row(run: BenchmarkRun) -> list[str]:
    return [
        run.name or str(run.id),
        f"[{run.status or 'unknown'}]",
        results_label(run),
        run.benchmark_name or DASH,
        str(run.agent_count),
        percent(run.best_pass_at_1),
        when(run.created_at),
        run.creator_name or DASH,
    ]


def benchmark_lines(detail: BenchmarkDetail, runs: list[BenchmarkRun], total: int) -> list[str]:
    """``benchmark info``'s plain lines: the benchmark, its leaderboard, its runs."""
    b = detail.benchmark
    sets = ", ".join(
        f"{s.name} ({s.task_count}{', recommended' if s.recommended else ''})" for s in b.task_sets
    )
    if b.requires_harness:
        harness = f"Required (default: {b.default_harness or DASH})"
    elif b.supports_harness:
        harness = f"Optional (default: {b.default_harness or 'official scaffold'})"
    else:
        harness = "Official scaffold only"
    if b.requires_judge_model:
        judge = f"Required (default: {b.judge_model_default or DASH})"
    else:
        judge = "API key only (pinned grader)" if b.requires_judge_api_key else DASH
    lines = [
        f"Name: {b.name}",
        f"Key: {b.key}",
        f"Description: {b.description or DASH}",
        f"Source: {b.source_url or b.source_ref}",
        f"Runner: {b.runner_family}",
        f"Tasks: {tasks_label(b, detail=True)}",
        "Categories: " + (", ".join(f"{c.name} ({c.task_count})" for c in b.categories) or DASH),
        f"Named Task Sets: {sets or DASH}",
        f"Harness: {harness}",
        f"LLM Judge: {judge}",
        f"Pass Threshold: {b.pass_threshold:g}",
        f"Runs: {total}",
        "Leaderboard:",
    ]
    board = [leader_line(entry) for entry in detail.leaderboard]
    lines += board or [
        "No eligible benchmark runs. Rankings will appear here once a run "
        "finishes on the full dataset with scores."
    ]
    lines.append(f"Runs ({len(runs)} of {total}):")
    lines += [
        f"{r.name} · [{r.status}] · {results_label(r)} · best pass@1 "
        f"{percent(r.best_pass_at_1)} · {when(r.created_at)}"
        for r in runs
    ]
    return lines


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def leader_line(entry: dict[str, Any]) -> str:
    """``#1 · openai/gpt-5.2 (codex) · pass@1 62.0% (55.0–69.0) · $0.43/task · …``."""
    rank = f"#{entry.get('rank', '?')}{'*' if entry.get('tied') else ''}"
    agent = f"{entry.get('model', DASH)} ({entry.get('harness') or 'default'})"
    if entry.get("task_set") == "parity":
        agent += " [parity]"
    parts = [rank, agent]
    given = entry.get("pass_at_1")
    point: dict[str, Any] = given if isinstance(given, dict) else {}
    value = _number(point.get("value"))
    if value is not None:
        low, high = _number(point.get("ci_low")), _number(point.get("ci_high"))
        interval = ""
        if low is not None and high is not None:
            interval = f" ({low * 100:.1f}–{high * 100:.1f})"
        parts.append(f"pass@1 {value * 100:.1f}%{interval}")
    ks = [k for k in entry.get("pass_at_k") or [] if isinstance(k, dict)]
    deepest = _number(ks[-1].get("value")) if ks else None
    if deepest is not None and ks[-1].get("k") != 1:  # pass@1 is said once (0.3.8: twice)
        parts.append(f"pass@{ks[-1].get('k')} {deepest * 100:.1f}%")
    for key, shown in (
        ("cost_per_task", "${:.2f}/task"),
        ("mean_duration_seconds", "{:.0f}s/task"),
        ("tokens_per_task", "{:.1f}k tokens/task"),
    ):
        number = _number(entry.get(key))
        if number is not None:
            parts.append(shown.format(number / 1000 if key == "tokens_per_task" else number))
    return " · ".join(parts)


def run_detail_data(detail: BenchmarkRunDetail) -> dict[str, Any]:
    return {
        "benchmark_run": run_item(detail.benchmark_run, progress=False),
        "configuration": detail.configuration,
        "agents": detail.agents,
        "progress": detail.benchmark_run.progress,
        "totals": detail.totals,
        "agent_metrics": detail.agent_metrics,
    }


def run_lines(detail: BenchmarkRunDetail) -> list[str]:
    """``benchmark runs info``'s plain lines."""
    run, config = detail.benchmark_run, detail.configuration
    started, completed = parse_time(run.started_at), parse_time(run.completed_at)
    took = (completed - started).total_seconds() if started and completed else None
    lines = [
        f"Name: {run.name}",
        f"ID: {run.id}",
        f"Status: {(run.status or 'unknown').title()}",
        f"Benchmark: {run.benchmark_name or DASH}",
        f"Progress: {results_label(run)}",
        f"Duration: {duration(took)}",
        f"Best Pass@1: {percent(run.best_pass_at_1)}",
        f"Agents: {run.agent_count}",
        f"Submitted: {when(run.created_at)}",
        f"Submitted By: {run.creator_name or DASH}",
        f"Started: {when(run.started_at)}",
        f"Completed: {when(run.completed_at)}",
        "Configuration:",
    ]
    for key, label in (
        ("source", "Source"),
        ("version", "Version"),
        ("digest", "Digest"),
        ("task_filters", "Tasks"),
        ("config", "Settings"),
    ):
        value = config.get(key)
        if value in (None, {}, [], ""):  # nothing set is not shown as "{}"
            continue
        if isinstance(value, dict):
            shown = ", ".join(f"{k}={_text(v)}" for k, v in sorted(value.items()))
        else:
            shown = _text(value)
        lines.append(f"  {label}: {shown}")
    lines.append("Agents:")
    for index, agent in enumerate(detail.agents, 1):
        model = agent.get("model_display_name") or agent.get("model") or agent.get("model_ref")
        status = agent.get("status") or DASH
        lines.append(f"  Agent {index}: {agent.get('harness') or 'default'} · {model} · {status}")
    totals = list(
        labelled({k: v for k, v in detail.totals.items() if not isinstance(v, dict | list)})
    )
    if totals:
        lines.append("Results:")
        lines += [f"  {label}: {shown}" for label, shown in totals]
    return lines


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


__all__ = [
    "benchmark_item",
    "benchmark_lines",
    "benchmark_row",
    "run_detail_data",
    "run_item",
    "run_lines",
    "run_row",
]
