"""Training configs (``configs/training/*.toml``, published-cli-0.3.8-train.md §2.7):
load, validate every key **and value**, report all problems at ``FILE:LINE:COL``.

The published CLI checks key names only, so ``lr = "fast"`` or ``total_epochs = -3``
reach the platform; here each hyperparameter has a type and a range, and a bad value
is refused before any request. No defaults are added: a key left out is not sent, and
the platform decides. Nothing here touches the network or imports the rollout.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictStr,
)

from osmosis_client.platform.config_check import (
    Collector,
    check_sent_values,
    check_tables,
    parse_toml,
    read_config_text,
    strict_message,
    suggest,
)
from osmosis_client.platform.config_values import Count, Positive, Temperature, TopP
from osmosis_client.platform.eval.eval_config import (
    check_env_and_secrets,
    check_experiment,
    find_root,
)
from osmosis_client.platform.eval.eval_model import (
    Experiment,
    Secrets,
    shared_sections,
)

#: names the platform sets in a training run's environment (the template lists them)
PLATFORM_ENV = frozenset(
    {
        "GITHUB_CLONE_URL",
        "GITHUB_TOKEN",
        "ENTRYPOINT_SCRIPT",
        "REPOSITORY_PATH",
        "TRAINING_RUN_ID",
        "ROLLOUT_NAME",
        "ROLLOUT_PORT",
    }
)


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class Training(_Section):
    lr: Positive | None = None
    total_epochs: Count | None = None
    n_samples_per_prompt: Count | None = None
    rollout_batch_size: Count | None = None
    max_prompt_length: Count | None = None
    max_response_length: Count | None = None
    agent_workflow_timeout_s: Positive | None = None
    grader_timeout_s: Positive | None = None


class Sampling(_Section):
    rollout_temperature: Temperature | None = None
    rollout_top_p: TopP | None = None


class Checkpoints(_Section):
    eval_interval: Count | None = None
    checkpoint_save_freq: Count | None = None


SECTIONS: dict[str, type[BaseModel]] = {
    "experiment": Experiment,
    "training": Training,
    "sampling": Sampling,
    "checkpoints": Checkpoints,
    "secrets": Secrets,
}
FREE_SECTIONS = ("advanced", "env")
TOP_KEYS = [*SECTIONS, *FREE_SECTIONS]
#: the payload key of each section sent as it is written
PAYLOAD_KEYS = {
    "training": "training_config",
    "sampling": "sampling_config",
    "checkpoints": "checkpoints_config",
}


class TrainingConfig(BaseModel):
    """A validated training config. ``path`` and ``root`` say where it came from."""

    model_config = ConfigDict(frozen=True, protected_namespaces=())

    experiment: Experiment
    training: Training = Field(default_factory=Training)
    sampling: Sampling = Field(default_factory=Sampling)
    checkpoints: Checkpoints = Field(default_factory=Checkpoints)
    advanced: dict[str, Any] = Field(default_factory=dict)
    env: dict[str, StrictStr] = Field(default_factory=dict)
    secrets: Secrets = Field(default_factory=Secrets)
    path: Path | None = Field(default=None, exclude=True)
    root: Path | None = Field(default=None, exclude=True)

    @property
    def rollout_dir(self) -> Path:
        return (self.root or Path.cwd()) / "rollouts" / self.experiment.rollout

    def to_submit_payload(self, commit_sha: str | None) -> dict[str, Any]:
        """The ``POST /api/cli/training-runs`` body (§2.9): keys left out of the file are
        not sent, empty sections are omitted; ``commit_sha`` (else the config's branch)
        says which source the platform runs."""
        payload: dict[str, Any] = {"experiment_config": self.experiment.to_payload(commit_sha)}
        for section, key in PAYLOAD_KEYS.items():
            model: BaseModel = getattr(self, section)
            values = model.model_dump(include=model.model_fields_set)
            if values:
                payload[key] = values
        return {**payload, **shared_sections(self.advanced, self.env, self.secrets.required)}


def _check_structure(data: Mapping[str, Any], out: Collector) -> None:
    for key, value in data.items():
        if key not in TOP_KEYS:
            hint = suggest(key, TOP_KEYS)
            if key == "rollout":  # the template's commented [rollout.env]/[rollout.secrets]
                hint = " (put env vars in [env] and secret names in [secrets].required)"
            out.add([key], f"Unrecognized section{hint}")
        elif not isinstance(value, dict):
            out.add([key], "must be a table")
    if "experiment" not in data:
        out.add(["experiment"], "the [experiment] section is required")


def _reserved_for_the_platform(key: str) -> str | None:
    if key.startswith("_OSMOSIS_"):
        return "names starting with _OSMOSIS_ are reserved by the platform"
    if key in PLATFORM_ENV:
        return "is set by the platform in a training run; choose another name"
    return None


def parse_training_config(text: str, *, path: Path, root: Path | None = None) -> TrainingConfig:
    """Validate TOML ``text``; raise :class:`ConfigError` listing every problem."""
    shown = str(path)
    data = parse_toml(text, shown)
    root = root or find_root(path)
    out = Collector.for_text(shown, text)
    _check_structure(data, out)
    check_tables(data, SECTIONS, out, lambda err, model: strict_message(err, model.model_fields))
    if isinstance(data.get("experiment"), dict):
        check_experiment(data["experiment"], root, out)
    check_env_and_secrets(data, out, _reserved_for_the_platform)
    for section in ("advanced", "env"):
        check_sent_values(data.get(section), [section], out)
    out.raise_if_any(error="Invalid training config")
    return TrainingConfig.model_validate({**data, "path": path, "root": root})


def load_training_config(path: str | Path, *, root: Path | None = None) -> TrainingConfig:
    """Read and validate a training config file."""
    path = Path(path)
    return parse_training_config(read_config_text(path), path=path, root=root)


__all__ = [
    "Checkpoints",
    "Sampling",
    "Training",
    "TrainingConfig",
    "load_training_config",
    "parse_training_config",
]
