"""Submitting a training run (published-cli-0.3.8-train.md §2.6) by the same rules as a
hosted eval run: the config validated (every value typed), the source pinned to a pushed
commit with the submitted rollout clean, the workspace connected to this repository,
one Idempotency-Key per run. ``osmosis train submit`` is this module plus a
confirmation and rendering; a training script calls :func:`submit_training`.

The rollout is never imported here (the published CLI imports the entrypoint in its
own process, so a submit runs user code and fails on its import errors): what can be
checked without running it — the rollout folder and the entrypoint file exist — is.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from osmosis_client.errors import InvalidInputError
from osmosis_client.platform.eval.submission import PinRules, check_scope, pin_source

if TYPE_CHECKING:
    from osmosis_client.platform._client import Client
    from osmosis_client.platform.git import Pin, RepoState
    from osmosis_client.platform.models import CreatedRun
    from osmosis_client.platform.training.training_config import TrainingConfig

#: where training configs live in a workspace (the published CLI's rule)
CONFIG_DIR = Path("configs") / "training"


@dataclass(frozen=True)
class TrainingPlan:
    """What a training submit will send, before anything is sent."""

    path: Path
    repo: RepoState
    config: TrainingConfig
    pin: Pin
    warnings: tuple[str, ...]

    @property
    def secret_names(self) -> list[str]:
        return list(self.config.secrets.required)


@dataclass(frozen=True)
class SubmittedTraining:
    run: CreatedRun
    pin: Pin
    config: TrainingConfig


def check_location(path: Path, root: Path) -> None:
    """A training config lives under ``configs/training/`` of its workspace and is a
    ``.toml`` file, as the published CLI requires."""
    expected = (root / CONFIG_DIR).resolve()
    resolved = path.resolve()
    if not resolved.is_relative_to(expected):
        raise InvalidInputError(
            f"a training config must live under configs/training/ (got {resolved}; "
            f"expected under {expected})",
            hint="move the file into configs/training/ of the workspace",
            code="VALIDATION",
        )
    if resolved.suffix != ".toml":
        raise InvalidInputError(
            f"a training config must be a .toml file under configs/training/, got {resolved}",
            code="VALIDATION",
        )


def plan_training(path: str | Path, rules: PinRules | None = None) -> TrainingPlan:
    """Read and validate the config, pin its source; raises what the rules refuse."""
    from osmosis_client.platform.eval.eval_config import find_root
    from osmosis_client.platform.git import inspect_repo
    from osmosis_client.platform.training.training_config import load_training_config

    path = Path(path)
    root = find_root(path)
    check_location(path, root)
    config = load_training_config(path, root=root)
    repo = inspect_repo(path.resolve().parent)
    pin, warnings = pin_source(
        repo, config.experiment, config.rollout_dir, rules or PinRules(), path
    )
    return TrainingPlan(path, repo, config, pin, tuple(warnings))


def submit_planned_training(
    client: Client, plan: TrainingPlan, *, secrets: Mapping[str, str] | None = None
) -> SubmittedTraining:
    """Create the planned run, sending only the ``secrets`` its config requires (a value
    the platform echoes back is redacted from the error). ``check_scope`` first."""
    from osmosis_client.platform.resources.secrets import only_required, redacting

    mine = only_required(secrets, plan.config.secrets.required)
    key = str(uuid.uuid4())  # the transport's retries reuse it
    with redacting(mine.values()):
        created = client.training_runs.submit(plan.config, plan.pin.commit_sha, key, secrets=mine)
    return SubmittedTraining(created, plan.pin, plan.config)


def submit_training(
    client: Client,
    path: str | Path,
    *,
    rules: PinRules | None = None,
    secrets: Mapping[str, str] | None = None,
) -> SubmittedTraining:
    """Plan, check the workspace and submit in one call (unattended rules by default,
    as ``--yes``): what a training script does to start a run."""
    plan = plan_training(path, rules)
    check_scope(client, plan.repo.origin_repo)
    return submit_planned_training(client, plan, secrets=secrets)


__all__ = [
    "CONFIG_DIR",
    "SubmittedTraining",
    "TrainingPlan",
    "check_location",
    "plan_training",
    "submit_planned_training",
    "submit_training",
]
