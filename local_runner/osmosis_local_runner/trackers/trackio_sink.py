"""Trackio (local first, W&B-like): a run of its own in the project named (``TRACKIO_DIR``
says where its database lives), or — inside an active one (a training script's
``trackio.init``) — metrics and the attempts table at the training step in it; the runs of
a series go to the series' one Trackio run (named after it, resumed), at their steps. The
results document goes as an artifact."""

from __future__ import annotations

from typing import Any

from osmosis_local_runner.trackers.payload import Payload

DEFAULT_PROJECT = "osmosis-evals"


def send(payload: Payload, project: str | None, step: int | None) -> dict[str, Any]:
    import trackio
    from trackio import context_vars

    active = context_vars.current_run.get()
    if active is not None and project in (None, getattr(active, "project", None)):
        _log(trackio, active, payload, step, f"osmosis/evals/{payload.name}/")
        return {"run_id": str(active.name), "into": "active"}
    series = payload.series
    run = trackio.init(
        project=project or DEFAULT_PROJECT,
        name=series or payload.name,
        config=None if series else payload.params,
        resume="allow" if series else "never",
        embed=False,
        auto_log_cpu=False,
        auto_log_gpu=False,
    )
    try:
        _log(trackio, run, payload, step, "")
    finally:
        run.finish()  # type: ignore[no-untyped-call]
        # ours, finished: never the "active run" of a later call, nor finished again by
        # Trackio's exit hook (which printed on stdout after a --json document)
        context_vars.current_run.set(None)
    return {"run_id": str(run.name), "into": "series" if series else "own"}


def _log(trackio: Any, run: Any, payload: Payload, step: int | None, where: str) -> None:
    table = trackio.Table(columns=list(payload.columns), data=payload.rows)
    run.log({**payload.metrics, f"{where}rows": table}, step=step)
    artifact = trackio.Artifact(f"osmosis-eval-{payload.name}", type="eval-results")
    artifact.add_file(str(payload.results), name="results.json")
    trackio.log_artifact(artifact)
