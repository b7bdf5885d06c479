"""Wire models of training runs (published-cli-0.3.8-train.md §2): the list row, the
detail, checkpoints and metrics."""

from __future__ import annotations

from typing import Any

from pydantic import Field, field_validator

from osmosis_client.platform.models import Page, Submitted, WireModel

#: training-run statuses by what they mean (published-cli-0.3.8-train.md §1.4)
PENDING = frozenset({"pending", "queued"})
SUCCESS = frozenset({"finished"})
ERROR = frozenset({"failed", "crashed"})
STOPPED = frozenset({"stopped", "killed", "unknown"})
TERMINAL = SUCCESS | ERROR | STOPPED


def _finite(value: Any) -> Any:
    """A finite, non-bool number, else None (as the published client reads them)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return value if float(value) - float(value) == 0.0 else None


class Named(WireModel):
    id: str | None = None
    name: str | None = None
    model_name: str | None = None  # the list row's model
    file_name: str | None = None  # the list row's dataset


class TrainingRun(Submitted):
    """A training run as listed (and the core of its detail)."""

    id: str
    name: str | None = None
    status: str | None = None
    model: Named | None = None
    dataset: Named | None = None
    rollout: Named | None = None
    current_step: int | None = None
    total_steps: int | None = None
    reward: float | None = None

    @field_validator("current_step", "total_steps", "reward", mode="before")
    @classmethod
    def _number(cls, value: Any) -> Any:
        return _finite(value)

    @property
    def terminal(self) -> bool:
        return self.status in TERMINAL

    @property
    def model_name(self) -> str | None:
        return (self.model.model_name or self.model.name) if self.model else None

    @property
    def dataset_name(self) -> str | None:
        return (self.dataset.file_name or self.dataset.name) if self.dataset else None

    @property
    def rollout_name(self) -> str | None:
        return self.rollout.name if self.rollout else None


class TrainingRunPage(Page):
    training_runs: list[TrainingRun]


class TrainingRunCore(TrainingRun):
    examples_processed_count: int | None = None
    notes: str | None = None


class TrainingRunDetail(WireModel):
    """``GET /api/cli/training-runs/{name}``: the run, what it trained on, its config."""

    training_run: TrainingRunCore
    model: Named | None = None
    dataset: Named | None = None
    rollout: Named | None = None
    config: dict[str, Any] | None = None
    entrypoint: str | None = None
    branch: str | None = None
    commit_sha: str | None = None
    env_config: dict[str, Any] | None = None
    resolved_secret_scopes: dict[str, str] | None = None
    is_internal_user: bool = False

    @field_validator("config", mode="before")
    @classmethod
    def _config(cls, value: Any) -> Any:
        return value if isinstance(value, dict) else None


class Checkpoint(WireModel):
    id: str
    checkpoint_step: int = 0
    status: str | None = None
    checkpoint_name: str | None = None
    created_at: str | None = None


class Checkpoints(WireModel):
    training_run_name: str | None = None
    checkpoints: list[Checkpoint] = Field(default_factory=list)


class MetricSummary(WireModel):
    key: str
    title: str
    initial: float | None = None
    latest: float | None = None
    delta: float | None = None
    min: float | None = None
    max: float | None = None

    @field_validator("initial", "latest", "delta", "min", "max", mode="before")
    @classmethod
    def _number(cls, value: Any) -> Any:
        return _finite(value)


class MetricsOverview(WireModel):
    duration_ms: float | None = None
    metric_summaries: list[MetricSummary] = Field(default_factory=list)
    examples_processed_count: int | None = None
    latest_step: int | None = None
    total_steps: int | None = None


class DataPoint(WireModel):
    step: int
    value: float | None
    timestamp: float  # epoch milliseconds

    @field_validator("value", mode="before")
    @classmethod
    def _number(cls, value: Any) -> Any:
        return _finite(value)


class Metric(WireModel):
    metric_key: str
    title: str
    data_points: list[DataPoint] = Field(default_factory=list)


class TrainingMetrics(WireModel):
    """``GET /api/cli/training-runs/{id}/metrics``."""

    status: str
    overview: MetricsOverview
    metrics: list[Metric] = Field(default_factory=list)


__all__ = [
    "Checkpoint",
    "Checkpoints",
    "TrainingMetrics",
    "TrainingRun",
    "TrainingRunDetail",
    "TrainingRunPage",
]
