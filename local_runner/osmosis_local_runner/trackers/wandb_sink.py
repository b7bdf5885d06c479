"""Weights & Biases (and Trackio, whose API is W&B's): a run of its own in the project
named, or — inside an active run (``wandb.run``, a training script's) — metrics and
the attempts table at the training step in it. The results document goes as an
artifact. A run of its own takes an id made from the local run's, so a resent run is
the same W&B run. The runs of a series go to the series' one W&B run (its id made from the
series' name, resumed), each at its step on its own axis (``eval/step``, declared with
``define_metric``: W&B's own step must only grow, a series' steps may come in any order)."""

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
    if payload.series is not None:
        return _into_series(wandb, payload, name, entity or None, step)
    run = wandb.init(
        project=name,
        entity=entity or None,
        name=payload.name,
        id=tracker_id(payload.run_id),
        config=payload.params,
        job_type="eval",
        resume="allow",
        reinit="create_new",
        # no key yet: W&B's login prompt gives up after this, never holds the run's end
        settings=wandb.Settings(login_timeout=LOGIN_TIMEOUT),
    )
    try:
        _log(wandb, run, payload, step, "")
    finally:
        run.finish()
    return {"run_id": run.id, "into": "own", **_url(run)}


def _into_series(
    wandb: Any, payload: Payload, project: str, entity: str | None, step: int | None
) -> dict[str, Any]:
    assert payload.series is not None
    run = wandb.init(
        project=project,
        entity=entity,
        name=payload.series,
        id=tracker_id(f"series-{payload.series}"),
        job_type="eval-series",
        resume="allow",
        reinit="create_new",
        settings=wandb.Settings(login_timeout=LOGIN_TIMEOUT),
    )
    try:
        run.define_metric(STEP_KEY)
        run.define_metric("eval/*", step_metric=STEP_KEY)
        table = wandb.Table(columns=list(payload.columns), data=payload.rows)
        values = {**payload.metrics, f"osmosis/evals/{payload.name}/rows": table}
        run.log({**values, STEP_KEY: step if step is not None else 0})
        artifact = wandb.Artifact(f"osmosis-eval-{tracker_id(payload.name)}", type="eval-results")
        artifact.add_file(str(payload.results), name="results.json")
        run.log_artifact(artifact)
    finally:
        run.finish()
    return {"run_id": run.id, "into": "series", **_url(run)}


#: a series' own step axis in W&B
STEP_KEY = "eval/step"


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
