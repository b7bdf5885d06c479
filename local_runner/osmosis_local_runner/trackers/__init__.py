"""Experiment trackers: a run's results sent to MLflow, Weights & Biases or Trackio
(``--log-to``, ``run_eval(log_to=…)``, ``osmosis eval push RUN --to …``).

A destination is ``mlflow`` / ``mlflow:URI``, ``wandb`` / ``wandb:[ENTITY/]PROJECT`` or
``trackio`` / ``trackio:PROJECT``; bare, it means the tracker run already active in the
process (a training script's), else the tracker's default. What became of each is kept
beside the run (``trackers.json``): a tracker that fails never fails the run, and a push
(``api.sharing.push_run``) sends it later — idempotent by the local run's id (sending
twice adds nothing)."""

from osmosis_local_runner.trackers.destinations import (
    KINDS,
    Destination,
    check_available,
    parse_destination,
)
from osmosis_local_runner.trackers.logging import Logged, log_results

__all__ = [
    "KINDS",
    "Destination",
    "Logged",
    "check_available",
    "log_results",
    "parse_destination",
]
