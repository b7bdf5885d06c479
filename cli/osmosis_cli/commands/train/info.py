"""``osmosis train info NAME [-o PATH] [--overwrite]``: a training run, its checkpoints
and metrics (published-cli-0.3.8-train.md §2.3) — the metrics saved as the published
CLI saves them (by default for people, with ``-o`` for programs), except that ``~`` is
expanded and a file that cannot be saved is an error (exit 2), not a warning."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from osmosis_cli.terminal.commands import runnable

if TYPE_CHECKING:
    from osmosis_cli.terminal.output import Output
    from osmosis_client import Client
    from osmosis_client.platform.training.training_models import (
        Checkpoint,
        TrainingMetrics,
        TrainingRunDetail,
    )

DASH = "–"
PENDING_NOTE = "Metrics are not yet available for pending or queued training runs."


def fetch(
    client: Client, name: str
) -> tuple[TrainingRunDetail, list[Checkpoint], TrainingMetrics | None, str | None]:
    """The run; unless pending, its checkpoints (none when they cannot be read) and its
    metrics (or why they are missing)."""
    from osmosis_client.errors import AuthError, OsmosisError
    from osmosis_client.platform.training.training_models import PENDING

    detail = client.training_runs.get(name)
    run = detail.training_run
    if run.status in PENDING:
        return detail, [], None, PENDING_NOTE
    try:
        checkpoints = client.training_runs.checkpoints(name).checkpoints
    except AuthError:
        raise
    except OsmosisError:
        checkpoints = []
    try:
        return detail, checkpoints, client.training_runs.metrics(run.id), None
    except AuthError:
        raise
    except OsmosisError as exc:
        return detail, checkpoints, None, exc.message


def show(
    out: Output,
    found: tuple[TrainingRunDetail, list[Checkpoint], TrainingMetrics | None, str | None],
    *,
    output: str | None,
    overwrite: bool,
    scope: dict[str, Any],
    root: Path,
) -> None:
    from osmosis_cli.commands.train.items import item
    from osmosis_client.platform.training.training_export import (
        export_metrics,
        metrics_path,
        save_metrics,
    )
    from osmosis_client.platform.training.training_models import PENDING, TERMINAL

    detail, checkpoints, metrics, error = found
    run = detail.training_run
    export = export_metrics(detail, metrics) if metrics is not None else None
    saved: Path | None = None
    if export is not None and (output is not None or not (out.json_mode or out.plain)):
        forced = overwrite or output is None  # the default file is refreshed in place
        path = metrics_path(detail, output, root)
        saved = save_metrics(export, path, overwrite=forced, top=root if output is None else None)
    listed = item(run)
    summary = listed.pop("summary")
    listed.update(examples_processed_count=run.examples_processed_count, notes=run.notes)
    data: dict[str, Any] = {
        "training_run": listed,
        "summary": summary,
        "checkpoints": [c.model_dump(mode="json") for c in checkpoints],
        "in_progress": run.status not in TERMINAL and run.status not in PENDING,
        "metrics_available": export is not None,
        "metrics_error": error,
        "metrics": export,
        "output_path": str(saved) if saved is not None else None,
        "save_warning": None,
        **scope,
    }
    if run.platform_url:
        data["platform_url"] = run.platform_url
    terminal = out.stdout_is_tty and not out.plain
    lines = _lines(detail, checkpoints, metrics, error, saved, terminal=terminal)
    if out.detail_result(data, lines=lines):
        return
    for line in lines:
        out.print(line)


def _lines(
    detail: TrainingRunDetail,
    checkpoints: list[Checkpoint],
    metrics: TrainingMetrics | None,
    error: str | None,
    saved: Path | None,
    *,
    terminal: bool = False,
) -> list[str]:
    from osmosis_cli.terminal.times import when
    from osmosis_client.platform.training.training_models import PENDING

    run = detail.training_run
    lines = [f"Name: {run.name or DASH}"]
    lines += [f"ID: {run.id}"] if detail.is_internal_user else []
    lines.append(f"Status: {(run.status or 'unknown').title()}")
    if run.status in PENDING:
        lines.append("Progress: Waiting to start...")
    elif run.total_steps:
        lines.append(
            f"Progress: {min(run.current_step or 0, run.total_steps)} / {run.total_steps} steps"
        )
    if metrics is not None and metrics.overview.duration_ms:
        minutes = int(metrics.overview.duration_ms // 60_000)
        lines.append(f"Duration: {minutes // 60}h {minutes % 60}m")
    if run.examples_processed_count is not None:
        lines.append(f"Examples Processed: {run.examples_processed_count:,}")
    lines += [
        f"Submitted: {when(run.created_at)}",
        f"Submitted By: {run.creator_name or DASH}",
        f"Dataset: {detail.dataset.name if detail.dataset else run.dataset_name or DASH}",
        f"Base Model: {detail.model.name if detail.model else run.model_name or DASH}",
        f"Rollout: {detail.rollout.name if detail.rollout else run.rollout_name or DASH}",
    ]
    for label, value in (
        ("Started", when(run.started_at) if run.started_at else None),
        ("Completed", when(run.completed_at) if run.completed_at else None),
        ("Notes", run.notes),
    ):
        lines += [f"{label}: {value}"] if value else []
    if error:
        lines.append(f"Metrics: {error}")
    elif metrics is not None and not metrics.metrics and not metrics.overview.metric_summaries:
        lines.append("Metrics: No metric data found.")
    elif metrics is not None:
        lines += _trend_lines(metrics, terminal)
    return lines + _setup_lines(detail, checkpoints, saved)


def _setup_lines(
    detail: TrainingRunDetail, checkpoints: list[Checkpoint], saved: Path | None
) -> list[str]:
    """The configuration, the checkpoints and what to do next."""
    from osmosis_client.platform.training.training_export import newest_checkpoint
    from osmosis_client.platform.training.training_models import ERROR

    run = detail.training_run
    lines = ["Configuration:", f"Entrypoint: {detail.entrypoint or DASH}"]
    if detail.config:
        lines.append("Config: " + ", ".join(config_items(detail.config)))
    lines += [f"Branch: {detail.branch}"] if detail.branch else []
    lines += [f"Commit: {detail.commit_sha[:7]}"] if detail.commit_sha else []
    for c in checkpoints:
        lines.append(
            f"Checkpoint: {c.checkpoint_name or c.id} step {c.checkpoint_step}"
            + (f" [{c.status}]" if c.status else "")
        )
    lines += [f"View: {run.platform_url}"] if run.platform_url else []
    if run.status in ERROR:
        lines.append("See logs with: " + runnable("osmosis", "train", "logs", run.name or run.id))
    newest = newest_checkpoint(checkpoints)
    if newest is not None:
        lines.append(
            f"Deploy the newest checkpoint with: osmosis model deploy {newest.checkpoint_name}"
        )
    lines += [f"Saved metrics to {saved}"] if saved is not None else []
    return lines


def _trend_lines(metrics: TrainingMetrics, terminal: bool) -> list[str]:
    """``Title: initial → latest (±delta)``, and on a terminal the course as a sparkline."""
    from osmosis_cli.terminal.spark import sparkline
    from osmosis_client.platform.training.training_export import trends

    lines = ["Metrics:"]
    arrow = "→" if terminal else "->"
    for t in trends(metrics):
        shown = f"{_number(t.initial)} {arrow} {_number(t.latest)}"
        if t.delta is not None:
            shown += f" ({t.delta:+.4g})"
        if terminal and len(t.values) > 1:
            shown += f"  {sparkline(t.values)}"
        lines.append(f"  {t.title}: {shown}")
    return lines


def _number(value: float | None) -> str:
    return DASH if value is None else f"{value:.4g}"


def config_items(config: dict[str, Any], prefix: str = "") -> list[str]:
    """``key=value`` sorted, ``model_path`` and nulls left out, nested keys dotted."""
    found = []
    for key in sorted(config):
        value = config[key]
        if value is None or (not prefix and key == "model_path"):
            continue
        if isinstance(value, dict):
            found += config_items(value, f"{prefix}{key}.")
        else:
            shown = value if isinstance(value, str) else json.dumps(value)
            found.append(f"{prefix}{key}={shown}")
    return found
