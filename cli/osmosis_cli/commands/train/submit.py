"""``osmosis train submit CONFIG``: a training run pinned to the pushed commit, with the
published flags and envelope (published-cli-0.3.8-train.md §2.6). What a submit pins,
checks and sends is ``osmosis_client.platform.training.training_submission``'s; this asks and
renders."""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from osmosis_cli import submitting
from osmosis_cli.commands.train.info import config_items
from osmosis_cli.context import result_scope, state
from osmosis_cli.terminal.commands import runnable
from osmosis_cli.terminal.declare import arg
from osmosis_cli.terminal.errors import current_output, handle_errors

if TYPE_CHECKING:
    from osmosis_cli.terminal.output import Output
    from osmosis_client.platform.training.training_submission import SubmittedTraining, TrainingPlan


@dataclass(kw_only=True)
class SubmitOptions(submitting.PinnedSubmit):
    config_path: Path = arg(metavar="CONFIG", help="configs/training/NAME.toml")


@handle_errors
def submit(ctx: typer.Context, opts: SubmitOptions) -> None:
    """Submit a training run pinned to your pushed commit (the rollout is never imported)."""
    from osmosis_client.platform.training.training_submission import (
        plan_training,
        submit_planned_training,
    )

    out = current_output()
    planned = partial(plan_training, opts.config_path, opts.rules())
    with submitting.pinned_scope(state(ctx), out, opts, planned) as pinned:
        plan, client, workspace = pinned.plan, pinned.client, pinned.workspace
        submitted = pinned.send(
            lambda values: submit_planned_training(client, plan, secrets=values),
            summary=lambda: _summary(out, plan, pinned.where),
            question="Submit this training run?",
            operation="train.submit",
        )
    if submitted is not None:
        _report(out, submitted, plan, workspace)


def _summary(out: Output, plan: TrainingPlan, where: str) -> None:
    exp, pin = plan.config.experiment, plan.pin
    out.info(f"Workspace:  {where}")
    out.info(f"Config:     {plan.path}")
    out.info(f"Rollout:    rollouts/{exp.rollout}/{exp.entrypoint}")
    out.info(f"Model:      {exp.model_path}")
    out.info(f"Dataset:    {exp.dataset}")
    out.info(f"Commit:     {pin.commit_sha or f'branch {pin.branch}'}")
    # every value the request carries, read off the payload itself (what is shown is sent)
    payload = plan.config.to_submit_payload(pin.commit_sha)
    for key, label in SENT_SECTIONS.items():
        if payload.get(key):
            out.info(f"{label:<11} {', '.join(config_items(payload[key]))}")
    if not any(payload.get(key) for key in ("training_config", "sampling_config")):
        out.info("Training:   the platform's defaults (no [training] or [sampling] values set)")


#: the payload's sections as the summary names them
SENT_SECTIONS = {
    "training_config": "Training:",
    "sampling_config": "Sampling:",
    "checkpoints_config": "Checkpoints:",
    "advanced_config": "Advanced:",
    "env_config": "Env:",
}


def _report(
    out: Output, submitted: SubmittedTraining, plan: TrainingPlan, workspace: str | None
) -> None:
    created, pin, exp = submitted.run, submitted.pin, submitted.config.experiment
    resource = {
        "id": created.id,
        "name": created.name,
        "status": created.status,
        "model_name": exp.model_path,
        "dataset_name": exp.dataset,
        "created_at": created.created_at,
        "url": created.platform_url,
        "commit_sha": pin.commit_sha,
        **_scope(plan, workspace),
        "config": submitting.config_keys(exp, pin),
    }
    steps = [{"action": "train_info", "name": created.name}, {"action": "train_list"}]
    lines = [
        f"Status: {created.status}",
        f"Rollout: {exp.rollout}",
        f"Model: {exp.model_path}",
        f"Dataset: {exp.dataset}",
    ]
    if not created.platform_url:
        lines.append("Check status with: " + runnable("osmosis", "train", "info", created.name))
    submitting.report_submitted(
        out,
        "train.submit",
        resource=resource,
        steps=steps,
        lines=lines,
        message=f"Training run submitted: {created.name}",
        url=created.platform_url,
    )


def _scope(plan: TrainingPlan, workspace: str | None) -> dict[str, object]:
    """The published scope keys: a source submit carries the Git keys always, and the
    workspace too when one was named (published-cli-0.3.8-train.md §2.6)."""
    keys: dict[str, object] = {
        "git": {"identity": plan.repo.origin_repo, "remote_url": _shown(plan.repo.origin_url)},
        "workspace_directory": str(plan.repo.root),
    }
    if workspace:
        keys.update(result_scope(workspace))
    return keys


def _shown(url: str | None) -> str | None:
    """The origin as it may be printed: a token in its userinfo never is."""
    from osmosis_client._redact import redact_url

    return redact_url(url) if url and "://" in url else url
