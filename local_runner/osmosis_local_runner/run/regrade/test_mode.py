"""``osmosis test``: 0.2's check of an agent loop (``-m``) or an MCP tool server
(``--mcp``) — each selected row once, in order, no scoring; a row passes when the loop
completes (rollout-protocol.md C).

A systemic model error (the endpoint unreachable, a rejected key, an unknown model, an
exhausted quota) fails its row and stops the rest: every later row would fail the same
way. Any other error fails only its row.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from osmosis_client.errors import InvalidInputError
from osmosis_client.llm.client import ModelClient
from osmosis_client.llm.providers import ModelTarget
from osmosis_local_runner.run.execute.dataset import Dataset, Row, select_rows
from osmosis_local_runner.run.kinds import RunEnv
from osmosis_local_runner.run.kinds.agent_loop import AgentLoopRollout

REQUIRED_COLUMNS = ("system_prompt", "user_prompt", "ground_truth")
PREFLIGHT = [{"role": "user", "content": "hi"}]


def is_systemic(exc: BaseException) -> bool:
    """An error every later row would meet too (0.2 stopped the batch on these)."""
    from osmosis_client.errors import (
        EndpointUnreachableError,
        MissingAPIKeyError,
        ModelNotFoundError,
        ProviderRequestError,
    )

    if isinstance(exc, EndpointUnreachableError | ModelNotFoundError | MissingAPIKeyError):
        return True
    if isinstance(exc, ProviderRequestError):
        quota = exc.status_code == 429 and "quota" in exc.message.lower()
        return exc.status_code in (401, 403, 404) or quota
    return False


@dataclass
class RowResult:
    row_index: int
    success: bool
    error: str | None
    duration_ms: int
    token_usage: dict[str, int]
    reward: float | None
    finish_reason: str | None
    messages: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """A row of the ``-o`` document, as 0.2 wrote it (no messages)."""
        return {
            "row_index": self.row_index,
            "success": self.success,
            "error": self.error,
            "duration_ms": self.duration_ms,
            "token_usage": self.token_usage,
            "reward": self.reward,
            "finish_reason": self.finish_reason,
        }


@dataclass
class CheckSummary:
    results: list[RowResult]
    duration_ms: int
    #: why the batch stopped before its end (a systemic model error), else None
    stopped: str | None = None

    @property
    def passed(self) -> int:
        return sum(r.success for r in self.results)

    @property
    def tokens(self) -> int:
        return sum(r.token_usage.get("total_tokens", 0) for r in self.results)

    def document(self) -> dict[str, Any]:
        """0.2's ``osmosis test -o`` document."""
        total = len(self.results)
        return {
            "summary": {
                "total": total,
                "passed": self.passed,
                "failed": total - self.passed,
                "total_duration_ms": self.duration_ms,
                "total_tokens": self.tokens,
            },
            "results": [r.to_json() for r in self.results],
        }


def load_test_rows(path: Path, limit: int | None, offset: int) -> tuple[list[Row], int]:
    """The selected rows (indices stay absolute) and the file's row count; every selected
    row needs non-empty ``system_prompt``, ``user_prompt`` and ``ground_truth``."""
    dataset = Dataset(path)
    total = dataset.validate().total_rows
    rows = list(dataset.rows(select_rows(total, limit, sample=False, seed=0, offset=offset)))
    problems = [f"row {row.index}: {p}" for row in rows if (p := _missing(row)) is not None]
    if problems:
        more = f" (and {len(problems) - 5} more)" if len(problems) > 5 else ""
        raise InvalidInputError(
            f"{path}: {'; '.join(problems[:5])}{more}",
            hint="osmosis test needs system_prompt, user_prompt and ground_truth in every row",
            code="BAD_DATASET",
        )
    return rows, total


def _missing(row: Row) -> str | None:
    columns = {str(k).lower(): v for k, v in row.data.items()}
    for name in REQUIRED_COLUMNS:
        value = columns.get(name)
        if name == "ground_truth" and value is None:
            value = row.ground_truth
        if not isinstance(value, str) or not value.strip():
            return f"{name} must be a non-empty string"
    return None


class CheckSession:
    """One model client for the whole session; rows run one at a time. The rollout is
    set once loaded (0.2 checked the endpoint before loading the agent)."""

    rollout: AgentLoopRollout

    def __init__(
        self,
        target: ModelTarget,
        *,
        sampling: Mapping[str, Any] | None = None,
        ca_bundle: str | None = None,
    ) -> None:
        self.target = target
        self.client = ModelClient(target, concurrency=1, ca_bundle=ca_bundle)
        self.sampling = dict(sampling or {})
        self.systemic: BaseException | None = None

    async def aclose(self) -> None:
        await self.client.aclose()

    async def preflight(self) -> None:
        """One tiny call; a systemic error raises, any other is the rows' business."""
        try:
            await self.client.complete(PREFLIGHT, {"max_tokens": 1})
        except Exception as exc:
            if is_systemic(exc):
                raise

    def _env(self) -> RunEnv:
        async def complete(messages: Sequence[Any], params: dict[str, Any]) -> dict[str, Any]:
            try:
                return await self.client.complete(messages, params)
            except Exception as exc:
                if is_systemic(exc) and self.systemic is None:
                    self.systemic = exc
                raise

        key = self.target.api_key
        return RunEnv(
            chat=self.client.chat,
            complete=complete,
            model=self.target.model,
            base_url=self.target.base_url,
            api_key=key.get_secret_value() if key else None,
            sampling=self.sampling,
            workflow_config={},
            agent_timeout=None,
        )

    async def run_row(self, row: Row) -> RowResult:
        started = time.perf_counter()
        outcome = await self.rollout.run(row, 0, self._env())
        extra = outcome.extra
        usage = extra.get("token_usage") if outcome.error is None else {}
        if self.systemic is not None:
            usage = {"total_tokens": outcome.tokens}
        return RowResult(
            row_index=row.index,
            success=outcome.error is None,
            error=outcome.error,
            duration_ms=int((time.perf_counter() - started) * 1000),
            token_usage=dict(usage or {}),
            reward=extra.get("reward"),
            finish_reason=extra.get("finish_reason") if outcome.error is None else None,
            messages=outcome.messages,
        )

    async def run(
        self, rows: Iterable[Row], on_row: Callable[[RowResult], None] | None = None
    ) -> CheckSummary:
        """Every row in order; a systemic model error stops after its row."""
        started = time.perf_counter()
        results: list[RowResult] = []
        for row in rows:
            result = await self.run_row(row)
            results.append(result)
            if on_row is not None:
                on_row(result)
            if self.systemic is not None:
                break
        stopped = str(self.systemic) if self.systemic is not None else None
        return CheckSummary(results, int((time.perf_counter() - started) * 1000), stopped)


def agent_under_test(
    module: str | None,
    mcp: Path | None,
    *,
    max_turns: int,
    completion_params: Mapping[str, Any],
    debug_dir: Path | None = None,
) -> AgentLoopRollout:
    """The agent under test: ``-m MODULE:ATTR`` (a ``RolloutAgentLoop``) or ``--mcp DIR``."""
    from osmosis_client.rollout.agent_loop import is_agent_loop
    from osmosis_local_runner.run.execute.discovery import (
        load_agent_loop,
        load_attr,
        load_mcp,
        object_digest,
    )

    if mcp is not None:
        loop, digest = load_mcp(mcp)
        source = str(mcp)
    elif module is not None:
        value, source = load_attr(module)
        if not is_agent_loop(value):
            raise InvalidInputError(
                f"{module} is not a RolloutAgentLoop (got {type(value).__name__})",
                hint="osmosis test runs 0.2 agent loops; run an AgentWorkflow with "
                "osmosis eval -m MODULE:ATTR --limit N",
                code="BAD_MODULE",
            )
        loop, digest = load_agent_loop(value, source), object_digest(value)
    else:
        raise InvalidInputError("Either --module (-m) or --mcp is required.", code="USAGE")
    return AgentLoopRollout(
        loop,
        source=source,
        digest=digest,
        max_turns=max_turns,
        completion_params=completion_params,
        debug_dir=debug_dir,
        mode="test",
    )
