"""``client.training_runs``: the workspace's training runs — submit, list, detail,
checkpoints, metrics, logs, stop (published-cli-0.3.8-train.md §2). A training script
can submit, follow its run and fetch its checkpoints with one client.

``submit`` sends a validated config (or a payload) as it is; pinning, the workspace
check and secrets are :mod:`osmosis_client.platform.training.training_submission`'s.

Better than the published client: ``stop`` of a run that does not exist is
``NOT_FOUND`` (it looks the run up first, then stops it by its id), and it returns the
run's state afterwards.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from osmosis_client.platform.models import CreatedRun, LogPage
from osmosis_client.platform.resources import _base as base
from osmosis_client.platform.resources.run_routes import model_routes
from osmosis_client.platform.training.training_models import (
    Checkpoints,
    TrainingMetrics,
    TrainingRunDetail,
    TrainingRunPage,
)

if TYPE_CHECKING:
    from osmosis_client.platform.training.training_config import TrainingConfig

ROUTE = "/api/cli/training-runs"
ROUTES = model_routes(ROUTE, "training run", CreatedRun, TrainingRunPage, TrainingRunDetail)


def submit_payload(
    config: TrainingConfig | Mapping[str, Any],
    commit_sha: str | None,
    secrets: Mapping[str, str] | None,
) -> dict[str, Any]:
    """The body: the config's (or the mapping as given) with run-scoped secret values
    in ``secrets.provided`` — each of them also listed in ``secrets.required``."""
    payload = dict(config) if isinstance(config, Mapping) else config.to_submit_payload(commit_sha)
    return base.with_secrets(payload, secrets)


def checkpoints_call(name: str) -> base.Call[Checkpoints]:
    return ROUTES.part(name, "/checkpoints", base.reader(Checkpoints, "checkpoint list"))


def metrics_call(run_id: str) -> base.Call[TrainingMetrics]:
    return ROUTES.part(run_id, "/metrics", base.reader(TrainingMetrics, "training metrics"))


def _names(page: TrainingRunPage) -> list[str | None]:
    return [r.name for r in page.training_runs]


def _run_id(detail: TrainingRunDetail) -> str:
    return detail.training_run.id


def _ended(detail: TrainingRunDetail) -> bool:
    return detail.training_run.terminal


class TrainingRuns(base.SyncResource):
    def submit(
        self,
        config: TrainingConfig | Mapping[str, Any],
        commit_sha: str | None = None,
        idempotency_key: str | None = None,
        *,
        secrets: Mapping[str, str] | None = None,
    ) -> CreatedRun:
        """Create a training run from a validated config (pinned to ``commit_sha``, else
        its branch) or a ready payload; retries reuse one Idempotency-Key. ``secrets``:
        values for this run only, overriding stored secrets of the same names."""
        key = idempotency_key or str(uuid.uuid4())
        payload = submit_payload(config, commit_sha, secrets)
        return self._client._execute(ROUTES.create(payload, key))

    def list(self, limit: int = base.PAGE_LIMIT, offset: int = 0) -> TrainingRunPage:
        """One page of training runs, newest first (at most 50)."""
        return self._client._execute(ROUTES.list(limit, offset))

    def pages(self, page_size: int = base.PAGE_LIMIT) -> Iterator[TrainingRunPage]:
        return base.walk_pages(lambda offset: self.list(page_size, offset))

    def get(self, name_or_id: str) -> TrainingRunDetail:
        """The run, what it trains on, its config, branch and commit."""
        return self._drive(ROUTES.named(name_or_id, _names))

    def checkpoints(self, name_or_id: str) -> Checkpoints:
        """The run's saved checkpoints (each a LoRA model once uploaded)."""
        return self._client._execute(checkpoints_call(name_or_id))

    def metrics(self, run_id: str) -> TrainingMetrics:
        """The run's metric series and their summaries (by the run's **id**)."""
        return self._client._execute(metrics_call(run_id))

    def logs(self, name_or_id: str, limit: int = 50, cursor: str | None = None) -> LogPage:
        """One page of logs, the newest first (``next_cursor`` reads older ones)."""
        return self._client._execute(ROUTES.logs(name_or_id, limit, cursor))

    def follow_logs(
        self, name_or_id: str, on_entries: base.OnEntries, limit: int = 50
    ) -> TrainingRunDetail:
        """Hand over new log entries as they appear until the run ends; returns the run
        as it ended. Survives 429/5xx/lost connections (up to 20 polls in a row)."""
        return self._drive(ROUTES.follow(name_or_id, limit, on_entries, _ended))

    def stop(self, name_or_id: str) -> TrainingRunDetail:
        """Stop a queued, pending or running run; returns its state afterwards
        (``NOT_FOUND`` for a run that does not exist; 409 once it has ended)."""
        return self._drive(ROUTES.stopped(name_or_id, _names, _run_id))


class AsyncTrainingRuns(base.AsyncResource):
    async def submit(
        self,
        config: TrainingConfig | Mapping[str, Any],
        commit_sha: str | None = None,
        idempotency_key: str | None = None,
        *,
        secrets: Mapping[str, str] | None = None,
    ) -> CreatedRun:
        key = idempotency_key or str(uuid.uuid4())
        payload = submit_payload(config, commit_sha, secrets)
        return await self._client._execute(ROUTES.create(payload, key))

    async def list(self, limit: int = base.PAGE_LIMIT, offset: int = 0) -> TrainingRunPage:
        return await self._client._execute(ROUTES.list(limit, offset))

    def pages(self, page_size: int = base.PAGE_LIMIT) -> AsyncIterator[TrainingRunPage]:
        return base.awalk_pages(lambda offset: self.list(page_size, offset))

    async def get(self, name_or_id: str) -> TrainingRunDetail:
        return await self._drive(ROUTES.named(name_or_id, _names))

    async def checkpoints(self, name_or_id: str) -> Checkpoints:
        return await self._client._execute(checkpoints_call(name_or_id))

    async def metrics(self, run_id: str) -> TrainingMetrics:
        return await self._client._execute(metrics_call(run_id))

    async def logs(self, name_or_id: str, limit: int = 50, cursor: str | None = None) -> LogPage:
        return await self._client._execute(ROUTES.logs(name_or_id, limit, cursor))

    async def follow_logs(
        self, name_or_id: str, on_entries: base.OnEntries, limit: int = 50
    ) -> TrainingRunDetail:
        return await self._drive(ROUTES.follow(name_or_id, limit, on_entries, _ended))

    async def stop(self, name_or_id: str) -> TrainingRunDetail:
        return await self._drive(ROUTES.stopped(name_or_id, _names, _run_id))


__all__ = ["AsyncTrainingRuns", "TrainingRuns"]
