"""A training run's metrics as the published ``train info`` saves them
(published-cli-0.3.8-train.md §2.3): one JSON document — the run, a summary per metric,
every series with ISO timestamps — and where it goes.

Better than published: ``~`` in a path is expanded, and a file that cannot be saved is
an error (``FILE_EXISTS`` without ``overwrite``), never a warning after exit 0; files are
written atomically and never through a symlink.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from osmosis_client.errors import InvalidInputError
from osmosis_client.layout import METRICS
from osmosis_client.platform.training.training_models import (
    Checkpoint,
    TrainingMetrics,
    TrainingRunDetail,
)

#: the platform's metric keys → the names the export uses (others pass through)
KEY_MAP = {
    "rollout/raw_reward": "training_reward",
    "eval/validation/reward": "validation_reward",
    "train/entropy_loss": "entropy",
    "rollout/response_lengths": "response_length",
    "rollout/total_lengths": "total_length",
    "rollout/truncated_ratio": "truncation_ratio",
}
METRICS_DIR = METRICS


def _iso(epoch_ms: float) -> str:
    return datetime.fromtimestamp(epoch_ms / 1000, tz=timezone.utc).isoformat(
        timespec="microseconds"
    )


def export_metrics(detail: TrainingRunDetail, metrics: TrainingMetrics) -> dict[str, Any]:
    """The export document (what the file holds and ``--json`` shows as ``metrics``)."""
    run, overview = detail.training_run, metrics.overview
    facts = {
        "id": run.id,
        "status": run.status,
        "name": run.name,
        "base_model_name": detail.model.name if detail.model else run.model_name,
        "dataset_name": detail.dataset.name if detail.dataset else run.dataset_name,
        "rollout_name": detail.rollout.name if detail.rollout else run.rollout_name,
        "duration_ms": overview.duration_ms,
        "started_at": run.started_at,
        "completed_at": run.completed_at,
        "rows_processed": overview.examples_processed_count or run.examples_processed_count,
        "latest_step": overview.latest_step,
        "total_steps": overview.total_steps,
    }
    stats = ("initial", "latest", "delta", "min", "max")
    summary = {
        KEY_MAP.get(s.key, s.key): {k: getattr(s, k) for k in stats if getattr(s, k) is not None}
        for s in overview.metric_summaries
    }
    series = [
        {
            "key": KEY_MAP.get(m.metric_key, m.metric_key),
            "title": m.title,
            "data": [
                {"step": p.step, "value": p.value, "timestamp": _iso(p.timestamp)}
                for p in m.data_points
            ],
        }
        for m in metrics.metrics
    ]
    return {
        "training_run": {k: v for k, v in facts.items() if v is not None or k in ("id",)},
        "summary": summary,
        "metrics": series,
    }


@dataclass(frozen=True)
class Trend:
    """One metric of a training run, first to last: what ``train info`` shows."""

    key: str
    title: str
    initial: float | None
    latest: float | None
    delta: float | None
    #: the series' values in step order (for a sparkline)
    values: tuple[float, ...]


def trends(metrics: TrainingMetrics) -> list[Trend]:
    """Each metric's initial → latest: the platform's summary where it gave one, else
    read off the series; summaries first, in the platform's order."""
    series: dict[str, tuple[str, tuple[float, ...]]] = {}
    for m in metrics.metrics:
        points = sorted(m.data_points, key=lambda p: p.step)
        series[m.metric_key] = (m.title, tuple(p.value for p in points if p.value is not None))
    found = []
    for s in metrics.overview.metric_summaries:
        values = series.pop(s.key, (s.title, ()))[1]
        key = KEY_MAP.get(s.key, s.key)
        found.append(Trend(key, s.title, s.initial, s.latest, s.delta, values))
    for key, (title, values) in series.items():
        if values:
            first, last = values[0], values[-1]
            found.append(Trend(KEY_MAP.get(key, key), title, first, last, last - first, values))
    return found


def newest_checkpoint(checkpoints: list[Checkpoint]) -> Checkpoint | None:
    """The checkpoint to deploy: the latest step among the uploaded ones (any, when none
    says it is uploaded), named."""
    named = [c for c in checkpoints if c.checkpoint_name]
    ready = [c for c in named if (c.status or "").lower() in ("uploaded", "ready", "completed")]
    pool = ready or named
    return max(pool, key=lambda c: c.checkpoint_step) if pool else None


def default_name(detail: TrainingRunDetail) -> str:
    """``<name>_<id[:8]>.json``, the name's unsafe characters replaced by ``_``."""
    run = detail.training_run
    safe = re.sub(r"[^a-zA-Z0-9_-]", "_", run.name or "training-run")
    return f"{safe}_{run.id[:8]}.json"


def metrics_path(detail: TrainingRunDetail, given: str | None, root: Path) -> Path:
    """Where the export goes: ``given`` (a directory — existing, or ending in ``/`` —
    gets the default name; a file gets ``.json`` as its suffix), else
    ``root/.osmosis/metrics/<default name>``."""
    if given is None:
        return root / METRICS_DIR / default_name(detail)
    path = Path(given).expanduser()
    if given.endswith(("/", "\\")) or _is_dir(path):
        return path / default_name(detail)
    return path.with_suffix(".json")


def _is_dir(path: Path) -> bool:
    try:
        return path.is_dir()
    except OSError:  # a name too long, say: not a folder; saving there says why
        return False


def save_metrics(
    document: dict[str, Any], path: Path, *, overwrite: bool, top: Path | None = None
) -> Path:
    """Write the export (parents created, atomically, never through a symlink). ``top``:
    the folder the default place is under — no link may stand between it and ``path``
    (a planted ``.osmosis`` or ``.osmosis/metrics``). A place that cannot be written
    (under a file, a name too long, a read-only folder) is invalid input, said."""
    from osmosis_client._fs import atomic_write
    from osmosis_client.platform.eval.run_download import refuse_links

    if top is not None:
        refuse_links(top, path, "the metrics are", "remove the link, or save them elsewhere")
    try:
        if (path.exists() or path.is_symlink()) and not overwrite:
            raise InvalidInputError(
                f"{path} already exists",
                hint="replace it (overwrite=True), or choose another path",
                code="FILE_EXISTS",
            )
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, (json.dumps(document, indent=2, allow_nan=False) + "\n").encode())
    except OSError as exc:
        raise InvalidInputError(
            f"cannot save the metrics to {path}: {exc.strerror or exc}",
            hint="choose a path in a folder you can write",
            code="VALIDATION",
            data={"path": str(path)},
        ) from exc
    return path


__all__ = [
    "KEY_MAP",
    "Trend",
    "default_name",
    "export_metrics",
    "metrics_path",
    "newest_checkpoint",
    "save_metrics",
    "trends",
]
