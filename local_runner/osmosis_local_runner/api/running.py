"""``run_eval`` / ``arun_eval``: what ``osmosis eval run`` and the seed form do, from Python
— through the same code (:class:`~osmosis_local_runner.run.session.session.RunSession`), so a run
made here continues there and back.

Two forms, as on the command line:

- an eval config: ``run_eval("configs/eval/x.toml", model=…, base_url=…, limit=…)``;
- the seed form, with what is in memory: ``run_eval(workflow=MyWorkflow, dataset=[{…}],
  eval_fns=[my_fn], model=…)`` — or ``module="server:agent_loop"`` / ``mcp="./mcp"``,
  a dataset path, ``eval_fns=["rewards:fn"]``.

A run is named (``name=``, else generated) and lives in ``.osmosis/evals/NAME/`` under
the project, exactly as the CLI's: a finished run is returned again (refused when asked
for with settings that would make it another run), an unfinished one continues with
``resume=True`` (its own settings adopted), ``fresh=True`` starts over. ``output="x.json"``
writes one results document instead. Suites: :func:`run_suite`. The library never
prints: progress goes to ``on_progress``, notes to the ``osmosis_local_runner`` logger; a
problem is an :class:`~osmosis_client.errors.OsmosisError` with the code the CLI prints.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from typing_extensions import Unpack

from osmosis_client.errors import InvalidInputError
from osmosis_local_runner.api.blocking import run_blocking
from osmosis_local_runner.api.keywords import RunKeywords, request_of
from osmosis_local_runner.api.results import EvalResult
from osmosis_local_runner.run.session.session import RunSession

logger = logging.getLogger("osmosis_local_runner")


@dataclass(frozen=True)
class RunProgress:
    """What ``on_progress`` gets as a run advances (after every attempt)."""

    completed: int
    total: int
    errored: int
    tokens: int
    elapsed: float  # seconds
    pass_rate: float | None  # the first eval fn's, so far


ProgressCallback = Callable[[RunProgress], None]


def run_eval(config: str | Path | None = None, **options: Unpack[RunKeywords]) -> EvalResult:
    """Run an evaluation and return its result (the keywords: :func:`arun_eval`).

    Works in a plain script and inside a running event loop (a notebook cell): there it
    runs on a loop of its own in a worker thread while this call waits. An interrupt
    (Ctrl-C, the notebook's stop button) stops the run within moments, keeps every
    finished attempt (``resume=True`` continues it) and raises ``KeyboardInterrupt``.
    """
    return run_blocking(lambda: arun_eval(config, **options))


async def arun_eval(config: str | Path | None = None, **options: Unpack[RunKeywords]) -> EvalResult:
    """Run an evaluation on the running event loop; cancelling it stops the run within
    moments, writes what finished (status ``stopped``) and keeps it for ``resume=True``.

    ``config``: an eval config (TOML), else the seed form's ``workflow`` / ``module`` /
    ``agent_loop`` / ``mcp`` with ``dataset`` (a path or a list of row dicts) and
    ``eval_fns`` (callables or ``"module:fn"``). ``name``: the run's name under
    ``root/.osmosis/evals`` (``root``: the config's project, else the current
    directory; ``resume=True`` without a name: the newest unfinished run of this
    config); ``output``: a ``.json`` file instead (or the directory runs live in).
    Every setting is a keyword named as ``osmosis eval run``'s flag
    (:class:`~osmosis_local_runner.api.keywords.SettingsKeywords`). ``upload``: a
    :class:`~osmosis_client.Client` that a finished run is uploaded with (a failure is a
    logged warning; the run is kept). ``log_to`` / ``step``: experiment trackers the
    finished run goes to, at that training step (docs/trackers.md; a failure is a logged
    warning, ``push_run`` sends it later).
    """
    if config is not None and _is_suite(Path(config)):
        raise InvalidInputError(
            f"{config} is a suite (it has [[eval]] or [[ablation]] tables)",
            hint="run it with run_suite() / arun_suite(): they return a SuiteResult",
            code="USAGE",
        )
    on_progress = options.get("on_progress")
    request = request_of(config, {k: v for k, v in options.items() if k != "on_progress"})
    progressed = _progress(on_progress) if on_progress is not None else None
    with RunSession(
        request, on_progress=progressed, on_note=logger.info, on_warning=logger.warning
    ) as session:
        if session.opening == "finished":
            logger.info("run %r was already complete; nothing ran", session.results.parent.name)
        else:
            for setting, value in session.adopted:
                logger.info("resuming with the run's own %s=%r", setting, value)
            session.prepare()
            await session.execute()
            session.finish()
    upload = session.upload
    if upload is not None and upload.error is not None:
        logger.warning("the run was not uploaded: %s", upload.error.message)
    for logged in session.tracked:  # a tracker's failure is the tracker's: said, kept
        if logged.status in ("failed", "skipped"):
            logger.warning("not logged to %s: %s", logged.destination, logged.error)
    name = session.run.name if session.run is not None else None
    return EvalResult(session.results.absolute(), name)


def _progress(callback: ProgressCallback) -> Callable[[Any], None]:
    def progressed(progress: Any) -> None:
        callback(
            RunProgress(
                completed=progress.done,
                total=progress.total,
                errored=progress.errors,
                tokens=progress.tokens,
                elapsed=progress.elapsed,
                pass_rate=progress.pass_rate(progress.fns[0]) if progress.fns else None,
            )
        )

    return progressed


def _is_suite(path: Path) -> bool:
    from osmosis_client.platform.eval.suite_config import looks_like_suite

    return looks_like_suite(path)


__all__ = ["ProgressCallback", "RunProgress", "arun_eval", "run_eval"]
