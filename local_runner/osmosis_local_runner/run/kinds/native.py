"""``native``: osmosis-client's own ``AgentWorkflow``, run in-process (the fast path)."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from osmosis_client.rollout import AgentWorkflowContext
from osmosis_local_runner.run.execute.dataset import Row
from osmosis_local_runner.run.execute.user_code import call_with_timeout, error_text, is_transient
from osmosis_local_runner.run.kinds import Outcome, RunEnv


class NativeRollout:
    capacity: int | None = None
    name = "native"

    def __init__(self, workflow: Any, *, source: str = "", digest: str = "") -> None:
        self.workflow = workflow
        self.source = source  # where it came from, for the plan line
        self.digest = digest  # of the entrypoint's sources, for resume
        #: an eval config's rollout: "rollouts/x/main.py — native mode (why)"
        self.headline: str | None = None
        self._is_async = inspect.iscoroutinefunction(getattr(workflow, "run", None))

    def describe(self) -> str:
        name = type(self.workflow).__name__
        if self.headline:
            return f"{self.headline}; {name}, in-process"
        where = f" from {self.source}" if self.source else ""
        return f"native: {name}{where}, in-process"

    def fingerprint(self) -> dict[str, Any]:
        return {"rollout": f"native:{self.digest}"} if self.digest else {}

    def prepare(self, note: Callable[[str], None] | None = None) -> None:
        return None

    async def start(self, env: RunEnv) -> None:
        return None

    async def run(self, row: Row, run_index: int, env: RunEnv) -> Outcome:
        ctx = AgentWorkflowContext(
            prompt=row.prompt(),
            metadata=row.metadata,
            config=env.workflow_config,
            row_index=row.index,
            run_index=run_index,
            chat=env.chat,
            model=env.model,
            base_url=env.base_url,
            api_key=env.api_key,
        )
        try:
            out = await call_with_timeout(
                self.workflow.run, ctx, is_async=self._is_async, timeout=env.agent_timeout
            )
        except TimeoutError:
            return Outcome(
                ctx.messages, ctx.tokens, f"workflow timed out after {env.agent_timeout:g}s"
            )
        except Exception as exc:
            return Outcome(
                ctx.messages, ctx.tokens, error_text("workflow", exc), transient=is_transient(exc)
            )
        messages = ctx.messages if out is None else out
        if not isinstance(messages, list):
            return Outcome(
                ctx.messages,
                ctx.tokens,
                f"workflow: TypeError: run() must return a list of messages or None, "
                f"not {type(out).__name__}",
            )
        return Outcome(messages, ctx.tokens)

    async def stop(self) -> None:
        return None
