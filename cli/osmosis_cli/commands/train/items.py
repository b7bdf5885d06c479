"""A training run as the published list shows it: the ``--json`` item and the plain row
(``train list``; ``train info`` builds on the item)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from osmosis_cli.terminal.times import when

if TYPE_CHECKING:
    from osmosis_client.platform.training.training_models import TrainingRun

DASH = "–"


def item(run: TrainingRun) -> dict[str, Any]:
    """A run as the published list prints it (nulls of the optional keys left out)."""
    found: dict[str, Any] = {
        "id": run.id,
        "name": run.name,
        "status": run.status,
        "model_id": run.model.id if run.model else None,
        "model_name": run.model_name,
        "dataset_id": run.dataset.id if run.dataset else None,
        "dataset_name": run.dataset_name,
        "rollout_id": run.rollout.id if run.rollout else None,
        "rollout_name": run.rollout_name,
        "creator_name": run.creator_name,
        "creator_email": run.creator_email,
        "created_at": run.created_at,
        "started_at": run.started_at,
        "completed_at": run.completed_at,
    }
    for key in ("platform_url", "current_step", "total_steps", "reward"):
        if getattr(run, key) is not None:
            found[key] = getattr(run, key)
    summary: dict[str, Any] = {}
    if run.reward is not None:
        summary["reward"] = run.reward
    if run.total_steps:
        done = min(max(run.current_step or 0, 0), run.total_steps)
        summary["progress"] = {"completed": done, "total": run.total_steps, "unit": "steps"}
    found["summary"] = summary
    return found


def row(run: TrainingRun) -> list[str]:
    return [
        run.name or "(unnamed)",
        f"[{run.status or 'unknown'}]",
        run.model_name or DASH,
        run.rollout_name or DASH,
        DASH if run.reward is None else f"{run.reward:.2f}",
        when(run.created_at),
        run.creator_name or DASH,
    ]
