"""Weights & Biases (and Trackio, whose API is W&B's): a run of its own in the project
named, or — inside an active run (``wandb.run``, a training script's) — metrics and
the attempts table at the training step in it. The results document goes as an
artifact. A run of its own takes an id made from the local run's, so a resent run is
the same W&B run."""

from __future__ import annotations

import re
from typing import Any

from osmosis_local_runner.trackers.payload import Payload

DEFAULT_PROJECT = "osmosis-evals"
#: seconds W&B may wait at its login prompt (a terminal with no key) before failing
LOGIN_TIMEOUT = 30.0


def tracker_id(run_id: str) -> str:
    """A W&B run id from the local run's (letters, digits, ``-``; at most 64)."""
    return re.sub(r"[^A-Za-z0-9-]", "-", run_id)[:64]


def send(payload: Payload, project: str | None, step: int | None) -> dict[str, Any]:
    import wandb

    active = wandb.run
    if active is not None and (project is None or project in (active.project, _full(active))):
        _log(wandb, active, payload, step, f"osmosis/evals/{payload.name}/")
        return {"run_id": active.id, "into": "active", **_url(active)}
    entity, _, name = (project or DEFAULT_PROJECT).rpartition("/")
    run = wandb.init(
        project=name, entity=entity or None, name=payload.name, id=tracker_id(payload.run_id),
        config=payload.params, job_type="eval", resume="allow", reinit="create_new",
        # no key yet: W&B's login prompt gives up after this, never holds the run's end
        settings=wandb.Settings(login_timeout=LOGIN_TIMEOUT),
    )  # fmt: skip
    try:
        _log(wandb, run, payload, step, "")
    finally:
        run.finish()
    return {"run_id": run.id, "into": "own", **_url(run)}


def _log(wandb: Any, run: Any, payload: Payload, step: int | None, where: str) -> None:
    table = wandb.Table(columns=list(payload.columns), data=payload.rows)
    values = {**payload.metrics, f"{where}rows": table}
    if step is None:
        run.log(values)
    else:
        run.log(values, step=step)
    artifact = wandb.Artifact(f"osmosis-eval-{tracker_id(payload.name)}", type="eval-results")
    artifact.add_file(str(payload.results), name="results.json")
    run.log_artifact(artifact)


def _full(run: Any) -> str:
    return f"{run.entity}/{run.project}"


def _url(run: Any) -> dict[str, Any]:
    url = getattr(run, "url", None)
    return {"url": url} if isinstance(url, str) and url else {}
