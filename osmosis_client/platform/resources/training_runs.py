"""``client.training_runs``: the workspace's training runs — submit, list, detail,
checkpoints, metrics, logs, stop (published-cli-0.3.8-train.md §2). A training script
can submit, follow its run and fetch its checkpoints with one client.

``submit`` sends a validated config (or a payload) as it is; pinning, the workspace
check and secrets are :mod:`osmosis_client.platform.training_submission`'s.

Better than the published client: ``stop`` of a run that does not exist is
``NOT_FOUND`` (it looks the run up first), and it returns the run's state afterwards.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from osmosis_client.platform._transport import RequestOptions, encode_segment
from osmosis_client.platform.models import CreatedRun, LogPage, parse
from osmosis_client.platform.resources._base import (
    PAGE_LIMIT,
    AsyncResource,
    Call,
    SyncResource,
    awalk_pages,
    log_page_call,
    page_params,
    walk_pages,
    with_secrets,
)
from osmosis_client.platform.training_models import (
    Checkpoints,
    TrainingMetrics,
    TrainingRunDetail,
    TrainingRunPage,
)

if TYPE_CHECKING:
    from osmosis_client.platform.training_config import TrainingConfig

ROUTE = "/api/cli/training-runs"


def submit_payload(
    config: TrainingConfig | Mapping[str, Any],
    commit_sha: str | None,
    secrets: Mapping[str, str] | None,
) -> dict[str, Any]:
    """The body: the config's (or the mapping as given) with run-scoped secret values
    in ``secrets.provided`` — each of them also listed in ``secrets.required``."""
    payload = dict(config) if isinstance(config, Mapping) else config.to_submit_payload(commit_sha)
    return with_secrets(payload, secrets)


def submit_call(payload: Mapping[str, Any], idempotency_key: str) -> Call[CreatedRun]:
    return Call(
        RequestOptions("POST", ROUTE, json=dict(payload), scope="required",
                       idempotency_key=idempotency_key, ambiguous="training_run"),
        lambda data: parse(CreatedRun, data, what="created training run"),
    )  # fmt: skip


def list_call(limit: int, offset: int) -> Call[TrainingRunPage]:
    params = page_params(limit, offset)
    return Call(
        RequestOptions("GET", ROUTE, params=params, scope="required"),
        lambda data: parse(TrainingRunPage, data, what="training run list"),
    )


def get_call(name: str) -> Call[TrainingRunDetail]:
    return Call(
        RequestOptions("GET", f"{ROUTE}/{encode_segment(name)}", scope="required"),
        lambda data: parse(TrainingRunDetail, data, what="training run"),
    )


def checkpoints_call(name: str) -> Call[Checkpoints]:
    return Call(
        RequestOptions("GET", f"{ROUTE}/{encode_segment(name)}/checkpoints", scope="required"),
        lambda data: parse(Checkpoints, data, what="checkpoint list"),
    )


def metrics_call(run_id: str) -> Call[TrainingMetrics]:
    return Call(
        RequestOptions("GET", f"{ROUTE}/{encode_segment(run_id)}/metrics", scope="required"),
        lambda data: parse(TrainingMetrics, data, what="training metrics"),
    )


def logs_call(name: str, limit: int, cursor: str | None) -> Call[LogPage]:
    return log_page_call(ROUTE, name, limit, cursor, "training run logs")


def stop_call(name: str) -> Call[Any]:
    return Call(
        RequestOptions("POST", f"{ROUTE}/{encode_segment(name)}/stop", json={}, scope="required"),
        lambda data: data,  # its answer says nothing the run's state does not
    )


class TrainingRuns(SyncResource):
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
        return self._client._execute(submit_call(submit_payload(config, commit_sha, secrets), key))

    def list(self, limit: int = PAGE_LIMIT, offset: int = 0) -> TrainingRunPage:
        """One page of training runs, newest first (at most 50)."""
        return self._client._execute(list_call(limit, offset))

    def pages(self, page_size: int = PAGE_LIMIT) -> Iterator[TrainingRunPage]:
        return walk_pages(lambda offset: self.list(page_size, offset))

    def get(self, name_or_id: str) -> TrainingRunDetail:
        """The run, what it trains on, its config, branch and commit."""
        return self._client._execute(get_call(name_or_id))

    def checkpoints(self, name_or_id: str) -> Checkpoints:
        """The run's saved checkpoints (each a LoRA model once uploaded)."""
        return self._client._execute(checkpoints_call(name_or_id))

    def metrics(self, run_id: str) -> TrainingMetrics:
        """The run's metric series and their summaries (by the run's **id**)."""
        return self._client._execute(metrics_call(run_id))

    def logs(self, name_or_id: str, limit: int = 50, cursor: str | None = None) -> LogPage:
        """One page of logs, the newest first (``next_cursor`` reads older ones)."""
        return self._client._execute(logs_call(name_or_id, limit, cursor))

    def stop(self, name_or_id: str) -> TrainingRunDetail:
        """Stop a queued, pending or running run; returns its state afterwards
        (``NOT_FOUND`` for a run that does not exist; 409 once it has ended)."""
        self.get(name_or_id)
        self._client._execute(stop_call(name_or_id))
        return self.get(name_or_id)


class AsyncTrainingRuns(AsyncResource):
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
        return await self._client._execute(submit_call(payload, key))

    async def list(self, limit: int = PAGE_LIMIT, offset: int = 0) -> TrainingRunPage:
        return await self._client._execute(list_call(limit, offset))

    def pages(self, page_size: int = PAGE_LIMIT) -> AsyncIterator[TrainingRunPage]:
        return awalk_pages(lambda offset: self.list(page_size, offset))

    async def get(self, name_or_id: str) -> TrainingRunDetail:
        return await self._client._execute(get_call(name_or_id))

    async def checkpoints(self, name_or_id: str) -> Checkpoints:
        return await self._client._execute(checkpoints_call(name_or_id))

    async def metrics(self, run_id: str) -> TrainingMetrics:
        return await self._client._execute(metrics_call(run_id))

    async def logs(self, name_or_id: str, limit: int = 50, cursor: str | None = None) -> LogPage:
        return await self._client._execute(logs_call(name_or_id, limit, cursor))

    async def stop(self, name_or_id: str) -> TrainingRunDetail:
        await self.get(name_or_id)
        await self._client._execute(stop_call(name_or_id))
        return await self.get(name_or_id)


__all__ = ["AsyncTrainingRuns", "TrainingRuns"]
