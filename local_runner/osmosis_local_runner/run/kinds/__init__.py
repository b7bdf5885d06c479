"""Rollout kinds: how one attempt of a row is produced.

Every kind implements :class:`RolloutKind`; the runner owns everything around it
(rows, the sliding window, timeouts' bookkeeping, grading with eval fns, the
journal, statistics and the results document), so each kind is small:

- ``native``: osmosis-client's in-process ``AgentWorkflow`` (+ ``Grader``);
- ``agent-loop``: a 0.2 ``RolloutAgentLoop``, in-process;
- ``server``: a published-SDK 0.3 rollout server, in its own environment, over HTTP.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from osmosis_local_runner.run.execute.dataset import Row

Message = dict[str, Any]
#: the runner's model call: (messages, params) → (assistant message, tokens used)
ChatFn = Callable[[Sequence[Message], dict[str, Any]], Awaitable[tuple[Message, int]]]
#: the same call, answering the raw chat-completions response
CompleteFn = Callable[[Sequence[Message], dict[str, Any]], Awaitable[dict[str, Any]]]


@dataclass
class Outcome:
    """What one attempt's rollout produced."""

    messages: list[Message]
    tokens: int = 0
    #: the stage's error ("workflow: RuntimeError: …", "workflow timed out after 450s")
    error: str | None = None
    #: scores when the rollout graded itself (server mode); None: the runner grades
    scores: dict[str, float] | None = None
    #: a transient infrastructure failure (connection reset, 5xx, a crashed server):
    #: the attempt may be retried (``--max-retries``); a wrong answer never is
    transient: bool = False
    #: extra per-run keys of the results document
    extra: dict[str, Any] = field(default_factory=dict)
    #: the rollout asked to drop this sample (``remove_sample``): kept, not scored
    skipped: bool = False


@dataclass(frozen=True)
class RunEnv:
    """What a rollout kind gets from the runner for one model (the run's, or a baseline)."""

    chat: ChatFn
    complete: CompleteFn
    model: str  # the name sent to the endpoint
    base_url: str | None
    api_key: str | None
    sampling: Mapping[str, Any]
    workflow_config: Mapping[str, Any]
    agent_timeout: float | None
    tag: str | None = None  # None: the run's model; "baseline": --baseline-model
    #: a line for the user (e.g. "restarting the rollout server")
    note: Callable[[str], None] | None = None
    #: stop the run for a reason that is not one attempt's (results are kept)
    abort: Callable[[Any], None] | None = None
    #: the model as the run names it (``openai/gpt-5-mini``): its calls are counted so
    model_path: str = ""


class RolloutKind(Protocol):
    name: str
    #: attempts the kind can run at once (None: no limit beyond batch_size); known
    #: after start()
    capacity: int | None

    def prepare(self, note: Callable[[str], None] | None = None) -> None:
        """Checks and set-up that need no model call (before the plan is shown)."""

    def describe(self) -> str:
        """One line for the plan: what runs, and why this kind was chosen."""

    def fingerprint(self) -> dict[str, Any]:
        """What a resumed run must share (e.g. a digest of the rollout's sources)."""

    async def start(self, env: RunEnv) -> None: ...

    async def run(self, row: Row, run_index: int, env: RunEnv) -> Outcome: ...

    async def stop(self) -> None: ...
