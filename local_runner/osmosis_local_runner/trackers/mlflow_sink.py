"""MLflow: a run of its own in an experiment (``MLFLOW_EXPERIMENT_NAME``, else
``osmosis-evals``), or — inside an active run (``mlflow.active_run()``, a training
script's, or the run ``MLFLOW_RUN_ID`` names) — metrics at the training step and
artifacts under ``osmosis/evals/NAME/``. A run of a series goes to the series' one MLflow
run (tagged ``osmosis.series``, found or made), at its step: every checkpoint of a
training is one curve, whichever command sent it. Through ``MlflowClient`` with the
tracking URI given: no global state is changed. Each run carries the local run's id as a
tag, so sending it twice finds it and adds nothing."""

from __future__ import annotations

import os
import time
from typing import Any

from osmosis_local_runner.trackers.payload import Payload

#: the tag naming the local run a tracker run holds (what makes a push idempotent)
TAG = "osmosis.local_run_id"
DEFAULT_EXPERIMENT = "osmosis-evals"


def send(payload: Payload, uri: str | None, step: int | None) -> dict[str, Any]:
    """Log the run; what was done: ``run_id``, ``url`` (when the server has pages),
    ``into`` (``own`` | ``active`` | ``existing``: it was there already)."""
    import mlflow
    from mlflow.entities import Metric, Param, RunTag

    active = mlflow.active_run()
    if active is not None and (uri is None or uri == mlflow.get_tracking_uri()):
        return _into_active(payload, mlflow.MlflowClient(), active.info.run_id, step)
    uri = uri or mlflow.get_tracking_uri()
    client = mlflow.MlflowClient(tracking_uri=uri)
    if os.environ.get("MLFLOW_RUN_ID"):  # the run a training process was told to use
        return _into_active(payload, client, os.environ["MLFLOW_RUN_ID"], step)
    experiment = os.environ.get("MLFLOW_EXPERIMENT_NAME") or DEFAULT_EXPERIMENT
    found = client.get_experiment_by_name(experiment)
    experiment_id = found.experiment_id if found else client.create_experiment(experiment)
    if payload.series is not None:
        series_run = _series_run(client, experiment_id, payload.series)
        done = _into_active(payload, client, series_run, step)
        into = "existing" if done["into"] == "existing" else "series"
        return _done(uri, series_run, experiment_id, into)
    existing = client.search_runs(
        [experiment_id], filter_string=f"tags.`{TAG}` = '{payload.run_id}'", max_results=1
    )
    if existing:
        return _done(uri, existing[0].info.run_id, experiment_id, "existing")
    run = client.create_run(experiment_id, run_name=payload.name, tags={TAG: payload.run_id})
    run_id = run.info.run_id
    try:
        now = int(time.time() * 1000)
        client.log_batch(
            run_id,
            metrics=[Metric(k, v, now, step or 0) for k, v in payload.metrics.items()],
            params=[Param(k, v[:6000]) for k, v in payload.params.items()],
            tags=[RunTag("osmosis.kind", "eval")],
        )
        _artifacts(client, run_id, payload, "osmosis")
    except BaseException:
        client.set_terminated(run_id, "FAILED")
        raise
    client.set_terminated(run_id, "FINISHED")
    return _done(uri, run_id, experiment_id, "own")


#: the tag naming the series a run of MLflow holds the curve of
SERIES_TAG = "osmosis.series"


def _series_run(client: Any, experiment_id: str, series: str) -> str:
    """The series' MLflow run: found by its tag, else made (named after the series)."""
    quoted = series.replace("'", "\\'")
    found = client.search_runs(
        [experiment_id], filter_string=f"tags.`{SERIES_TAG}` = '{quoted}'", max_results=1
    )
    if found:
        return str(found[0].info.run_id)
    tags = {SERIES_TAG: series, "osmosis.kind": "eval-series"}
    return str(client.create_run(experiment_id, run_name=series, tags=tags).info.run_id)


def _into_active(payload: Payload, client: Any, run_id: str, step: int | None) -> dict[str, Any]:
    from mlflow.entities import Metric

    tag = f"osmosis.eval.{payload.name}"
    if client.get_run(run_id).data.tags.get(tag) == payload.run_id:
        return {"run_id": run_id, "into": "existing"}
    now = int(time.time() * 1000)
    client.log_batch(
        run_id, metrics=[Metric(k, v, now, step or 0) for k, v in payload.metrics.items()]
    )
    _artifacts(client, run_id, payload, f"osmosis/evals/{payload.name}")
    client.set_tag(run_id, tag, payload.run_id)
    return {"run_id": run_id, "into": "active"}


def _artifacts(client: Any, run_id: str, payload: Payload, where: str) -> None:
    """The attempts as a table (MLflow's table JSON, which its UI shows) and the results
    document as written."""
    table = {"columns": list(payload.columns), "data": payload.rows}
    client.log_dict(run_id, table, f"{where}/rows.json")
    client.log_artifact(run_id, str(payload.results), where)


def _done(uri: str, run_id: str, experiment_id: str, into: str) -> dict[str, Any]:
    from osmosis_client._redact import redact_url

    found: dict[str, Any] = {"run_id": run_id, "into": into}
    if uri.startswith(("http://", "https://")):  # a server: its page (never its password)
        page = f"{uri.rstrip('/')}/#/experiments/{experiment_id}/runs/{run_id}"
        found["url"] = redact_url(page)
    return found
