"""One attempt's rollout, run again after a transient failure of the infrastructure (a
server that restarted, a connection dropped) with a doubling delay; a kind's own bug or a
peer's surprise fails that attempt only, never the run."""

from __future__ import annotations

import asyncio
import logging

from osmosis_local_runner.errors import RunAborted
from osmosis_local_runner.run.execute.dataset import Row
from osmosis_local_runner.run.kinds import Outcome, RolloutKind, RunEnv
from osmosis_local_runner.run.request.spec import RunSpec

logger = logging.getLogger("osmosis_client.runner")
#: the longest wait before a retry, in seconds
RETRY_MAX_DELAY = 30.0


async def rollout_with_retries(
    kind: RolloutKind, spec: RunSpec, row: Row, run_index: int, env: RunEnv
) -> Outcome:
    """The attempt's outcome after at most ``spec.max_retries`` retries of transient
    failures (``extra["retries"]`` says how many were made)."""
    retries = 0
    while True:
        try:
            outcome = await kind.run(row, run_index, env)
        except (asyncio.CancelledError, RunAborted):
            raise
        except Exception as exc:  # a kind's bug or a peer's surprise: this attempt fails
            logger.debug("row %d run %d: %s failed", row.index, run_index, kind.name, exc_info=True)
            text = f"{kind.name}: internal error ({type(exc).__name__}: {exc})"
            outcome = Outcome([], 0, text[:1000])
        if not outcome.transient or retries >= spec.max_retries:
            if retries:
                outcome.extra["retries"] = retries
            return outcome
        delay = min(RETRY_MAX_DELAY, spec.retry_delay * 2**retries)
        logger.debug(
            "row %d run %d: transient error, retry %d in %.1fs (%s)",
            row.index,
            run_index,
            retries + 1,
            delay,
            outcome.error,
        )
        retries += 1
        await asyncio.sleep(delay)
