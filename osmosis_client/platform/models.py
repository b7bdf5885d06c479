"""Pydantic models of the platform's wire objects (platform-api.md).

Unknown fields are ignored (forward compatible); a missing required field
becomes a :class:`~osmosis_client.errors.ProtocolError` via :func:`parse`.
Tokens are ``SecretStr``: they never show in ``repr`` or logs.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Annotated, Any, TypeVar

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    SecretStr,
    ValidationError,
    field_validator,
)

from osmosis_client.errors import ProtocolError

DEFAULT_TOKEN_LIFETIME = timedelta(days=90)


class WireModel(BaseModel):
    model_config = ConfigDict(
        extra="ignore", populate_by_name=True, frozen=True, protected_namespaces=()
    )


class Page(WireModel):
    """A page of a platform list: how many there are, and where the next page starts
    (each list's page adds its items)."""

    total_count: int | None = None
    has_more: bool = False
    next_offset: int | None = None


class Submitted(WireModel):
    """When a platform run (training, benchmark) was submitted, started and ended, by
    whom, and where it is on the platform."""

    created_at: str | None = None
    started_at: str | None = None
    completed_at: str | None = None
    creator_name: str | None = None
    creator_email: str | None = None
    platform_url: str | None = None


M = TypeVar("M", bound=BaseModel)


def parse(model: type[M], data: Any, *, what: str) -> M:
    """Validate ``data`` as ``model``; any mismatch is a ``ProtocolError``."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or '(body)'}: {err['msg']}"
            for err in exc.errors()[:5]
        )
        raise ProtocolError(
            f"unexpected {what} from the platform ({problems})",
            hint="upgrade osmosis-client, or report this if it persists",
        ) from exc


def _aware(value: datetime) -> datetime:
    if value.tzinfo is None or value.utcoffset() is None:
        raise ValueError("timestamp has no time zone")
    return value


#: ids may arrive as numbers; we always hold them as strings
Id = Annotated[str, BeforeValidator(lambda v: str(v) if isinstance(v, int) else v)]


class User(WireModel):
    id: Id
    email: str
    name: str | None = None


class ConnectedRepo(WireModel):
    repo_full_name: str


class Workspace(WireModel):
    id: Id
    name: str
    role: str | None = None
    connected_repo: ConnectedRepo | None = None


class WorkspaceList(WireModel):
    workspaces: list[Workspace]


class DeviceAuthorization(WireModel):
    device_code: SecretStr
    user_code: str
    verification_uri: str
    verification_uri_complete: str | None = None
    expires_in: float = Field(gt=0)
    interval: float = Field(default=5.0, ge=0)

    @property
    def url(self) -> str:
        return self.verification_uri_complete or self.verification_uri


class TokenGrant(WireModel):
    """The ``200`` answer of ``device/token``."""

    token: SecretStr
    token_id: Id | None = None
    token_type: str = "Bearer"
    expires_at: datetime | None = None
    user: User
    workspace: str | None = None

    @field_validator("workspace", mode="before")
    @classmethod
    def _workspace_name(cls, value: Any) -> Any:
        if isinstance(value, dict):
            return value.get("name")
        return value

    @field_validator("expires_at")
    @classmethod
    def _expires_aware(cls, value: datetime | None) -> datetime | None:
        return None if value is None else _aware(value)

    def expiry(self, now: datetime | None = None) -> datetime:
        """``expires_at``, or 90 days from now when the platform sent none."""
        now = now or datetime.now(timezone.utc)
        return self.expires_at or now + DEFAULT_TOKEN_LIFETIME


class VerifyResult(WireModel):
    """The answer of ``GET /api/cli/verify``."""

    token_id: Id | None = None
    expires_at: datetime | None = None
    user: User
    workspace: Workspace | None = None

    @field_validator("expires_at")
    @classmethod
    def _expires_aware(cls, value: datetime | None) -> datetime | None:
        return None if value is None else _aware(value)


# --------------------------------------------------------------------- eval runs

TERMINAL_STATUSES = frozenset({"finished", "failed", "stopped"})
#: every status the platform reports (``queued`` is an older name of ``pending``)
RUN_STATUSES = ("pending", "queued", "running", "finished", "failed", "stopped")


class RewardStats(WireModel):
    mean: float | None = None
    std: float | None = None
    min: float | None = None
    median: float | None = None
    max: float | None = None
    pass_at_k: dict[str, float] | None = None


class EvalResults(WireModel):
    total_runs: int | None = None
    sampled_rows: int | None = None
    total_dataset_rows: int | None = None
    score: float | None = None
    pass_rate: float | None = None
    graded: int | None = None
    passed: int | None = None
    failed: int | None = None
    skipped: int | None = None
    pass_threshold: float | None = None
    total_tokens: int | None = None
    reward_stats: RewardStats | None = None


class RunConfig(WireModel):
    model_path: str | None = None
    limit: int | None = None
    n: int | None = None
    batch_size: int | None = None
    pass_threshold: float | None = None
    agent_workflow_timeout_s: float | None = None
    grader_timeout_s: float | None = None


class _Named(WireModel):
    name: str | None = None


def _name_of(value: _Named | None) -> str | None:
    return value.name if value is not None else None


class CreatedRun(WireModel):
    """The answer of ``POST /api/cli/eval-runs``."""

    id: Id
    name: str
    status: str
    created_at: str | None = None
    platform_url: str | None = None


class _RunCore(CreatedRun):
    started_at: str | None = None
    completed_at: str | None = None
    creator_name: str | None = None
    creator_email: str | None = None


class EvalRun(_RunCore):
    """One eval run, merged from a list row or a detail (the CLI's ``<run>``)."""

    model: str | None = None
    dataset: str | None = None
    rollout: str | None = None
    entrypoint: str | None = None
    branch: str | None = None
    commit_sha: str | None = None
    config: RunConfig | None = None
    results: EvalResults | None = None

    @property
    def is_terminal(self) -> bool:
        return self.status in TERMINAL_STATUSES

    def to_json(self) -> dict[str, Any]:
        """The flat ``<run>`` document of cli.md."""
        return self.model_dump(mode="json", exclude={"creator_name"})


class _Row(_RunCore):
    model: _Named | None = None
    dataset: _Named | None = None
    rollout: _Named | None = None
    results: EvalResults | None = None
    config: RunConfig | None = None


class _Detail(WireModel):
    eval_run: _RunCore
    config: RunConfig | None = None
    results: EvalResults | None = None
    dataset: _Named | None = None
    rollout: _Named | None = None
    entrypoint: str | None = None
    branch: str | None = None
    commit_sha: str | None = None
    env_config: dict[str, Any] | None = None


def run_from_row(data: Any) -> EvalRun:
    row = parse(_Row, data, what="eval run")
    return EvalRun(
        **row.model_dump(exclude={"model", "dataset", "rollout", "results", "config"}),
        model=_name_of(row.model) or (row.config.model_path if row.config else None),
        dataset=_name_of(row.dataset),
        rollout=_name_of(row.rollout),
        results=row.results,
        config=row.config,
    )


def run_from_detail(data: Any) -> EvalRun:
    detail = parse(_Detail, data, what="eval run detail")
    return EvalRun(
        **detail.eval_run.model_dump(),
        model=detail.config.model_path if detail.config else None,
        dataset=_name_of(detail.dataset),
        rollout=_name_of(detail.rollout),
        entrypoint=detail.entrypoint,
        branch=detail.branch,
        commit_sha=detail.commit_sha,
        config=detail.config,
        results=detail.results,
    )


class EvalRunPage(BaseModel):
    """One page of ``GET /api/cli/eval-runs``."""

    eval_runs: list[EvalRun]
    total_count: int | None = None
    has_more: bool = False
    next_offset: int | None = None


class _RawPage(Page):
    eval_runs: list[Any]


def page_from_wire(data: Any) -> EvalRunPage:
    raw = parse(_RawPage, data, what="eval run list")
    return EvalRunPage(
        eval_runs=[run_from_row(row) for row in raw.eval_runs],
        total_count=raw.total_count,
        has_more=raw.has_more,
        next_offset=raw.next_offset,
    )


class HealthCheck(WireModel):
    server_info: dict[str, Any] | None = None
    error: str | None = None


class RegisteredServer(WireModel):
    """The answer of ``POST /api/cli/rollout-server/register``."""

    id: Id
    status: str
    health_check_result: HealthCheck | None = None


class Overview(WireModel):
    duration_ms: float | None = None
    total_samples: int | None = None
    completed_samples: int | None = None
    graded: int | None = None
    passed: int | None = None
    failed: int | None = None
    skipped: int | None = None
    pass_rate: float | None = None
    pass_threshold: float | None = None
    tokens_used: int | None = None


class PassAtK(WireModel):
    k: int
    value: float


class RunMetrics(WireModel):
    status: str | None = None
    overview: Overview | None = None
    reward_stats: RewardStats | None = None
    pass_at_k: list[PassAtK] = Field(default_factory=list)


class LogEntry(WireModel):
    """One entry of a hosted run's logs."""

    timestamp: str
    level: str = "info"
    step: str | None = None
    message: str = ""
    details: dict[str, Any] | None = None

    @property
    def key(self) -> tuple[str, str, str | None]:
        """What identifies an entry when pages overlap (platform-api.md)."""
        return self.timestamp, self.message, self.step

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json", exclude_none=True)


class LogPage(WireModel):
    """``GET …/logs``: the newest page first, entries oldest first within it;
    ``next_cursor`` reads the next older page."""

    logs: list[LogEntry]
    next_cursor: str | None = None


class RolloutInfo(WireModel):
    """A rollout the platform synced from the workspace's repository."""

    id: Id
    name: str | None = None
    description: str | None = None
    last_synced_at: str | None = None
    last_synced_commit_sha: str | None = None
    repo_full_name: str | None = None
    created_at: str | None = None


class RolloutPage(Page):
    """One page of ``GET /api/cli/rollouts``."""

    rollouts: list[RolloutInfo]
