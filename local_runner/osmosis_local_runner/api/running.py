"""``run_eval`` / ``arun_eval``: what ``osmosis eval run`` and the seed form do, from Python.

Two forms, as on the command line:

- an eval config: ``run_eval("configs/eval/x.toml", model=…, base_url=…, limit=…)``;
- the seed form, with what is in memory: ``run_eval(workflow=MyWorkflow, dataset=[{…}],
  eval_fns=[my_fn], model=…)`` — or ``module="server:agent_loop"`` / ``mcp="./mcp"``,
  a dataset path, ``eval_fns=["rewards:fn"]``.

A run is named (``name=``, else generated) and lives in ``.osmosis/evals/NAME/`` under
the project, exactly as the CLI's: a named run continues when unfinished
(``resume=True``), is returned again when finished, starts over with ``fresh=True``.
``output="x.json"`` writes one results document instead. The library never prints:
progress goes to ``on_progress``, notes to the ``osmosis_local_runner`` logger; a
problem is an :class:`~osmosis_client.errors.OsmosisError` with the code the CLI prints.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from osmosis_client.errors import InvalidInputError
from osmosis_local_runner.api.results import RUNS, EvalResult
from osmosis_local_runner.api.spec import build_spec
from osmosis_local_runner.api.suites import SuiteResult
from osmosis_local_runner.run.invocation import Invocation, pick_run
from osmosis_local_runner.run.rundir import RunDirectory, check_name

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


def run_eval(config: str | Path | None = None, **options: Any) -> EvalResult | SuiteResult:
    """Run an evaluation and return its result (see :func:`arun_eval` for the options).

    Works in a plain script and inside a running event loop (a notebook cell): there it
    runs on a loop of its own in a worker thread, and this call waits for it.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(arun_eval(config, **options))
    with concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="osmosis-run") as pool:
        return pool.submit(asyncio.run, arun_eval(config, **options)).result()


async def arun_eval(
    config: str | Path | None = None,
    *,
    name: str | None = None,
    output: str | Path | None = None,
    root: str | Path | None = None,
    resume: bool = False,
    fresh: bool = False,
    retry_failed: bool = False,
    on_progress: ProgressCallback | None = None,
    parallel: int = 1,
    **options: Any,
) -> EvalResult | SuiteResult:
    """Run an evaluation on the running event loop; cancelling it stops the run within
    moments and keeps every finished attempt for ``resume=True``.

    ``config``: an eval config (TOML), else the seed form's ``workflow`` / ``module`` /
    ``agent_loop`` / ``mcp`` with ``dataset`` (a path or a list of row dicts) and
    ``eval_fns`` (callables or ``"module:fn"``). ``name``: the run's name under
    ``root/.osmosis/evals`` (``root``: the config's project, else the current
    directory; ``resume=True`` without a name: the newest unfinished run of this config);
    ``output``: a ``.json`` file instead (or the directory runs live in).
    Every other keyword is a flag of ``osmosis eval run`` (``model``, ``base_url``,
    ``api_key_env``, ``limit``, ``n``, ``batch_size``, ``pass_threshold``, ``rows``,
    ``seed``, ``max_retries``, ``deadline``, ``temperature``, ``sampling_args``,
    ``headers``, ``endpoints``, ``ca_bundle``, ``transcripts``, ``by``, ``rollout_mode``,
    ``rollout_python``, …). A suite config runs every entry (``parallel`` at once) and
    gives a :class:`SuiteResult`.
    """
    if config is not None and _is_suite(Path(config)):  # every entry, as the CLI runs it
        from osmosis_local_runner.api.suites import arun_suite

        return await arun_suite(
            Path(config), output=output, root=root, resume=resume, parallel=parallel,
            options=options,
        )  # fmt: skip
    where = _Where.of(config, name, output, root)
    if where.file is not None:  # one results document, as -o FILE.json
        built = build_spec(config, where.file, resume=resume, retry_failed=retry_failed, **options)
        await _execute(built.spec, on_progress)
        return EvalResult(where.file, name)
    run = where.pick(config, resume=resume and not fresh)
    return await _run_named(
        config, run, fresh=fresh, resume=resume, retry_failed=retry_failed,
        on_progress=on_progress, options=options,
    )  # fmt: skip


async def _run_named(
    config: str | Path | None,
    run: RunDirectory,
    *,
    fresh: bool,
    resume: bool,
    retry_failed: bool,
    on_progress: ProgressCallback | None,
    options: dict[str, Any],
) -> EvalResult:
    """A named run, as the CLI's ``--name``: new, continued, or returned again (the
    sequence is the runner's :class:`~osmosis_local_runner.run.invocation.Invocation`)."""
    with Invocation(
        run, fresh=fresh, retry_failed=retry_failed, on_note=logger.info,
        on_warning=logger.warning,
    ) as invocation:  # fmt: skip
        if invocation.opening == "finished":
            logger.info("run %r was already complete; nothing ran: %s", run.name, run.path)
            return EvalResult(run.results, run.name)
        if invocation.resuming and not (resume or retry_failed):
            raise InvalidInputError(
                f"run {run.name!r} is unfinished",
                hint="continue it with resume=True, or start it over with fresh=True",
                code="RESULTS_EXIST",
            )
        built = build_spec(
            config, run.results, run_dir=run.path, resume=invocation.resuming,
            retry_failed=retry_failed, **options,
        )  # fmt: skip
        files = invocation.files(built.identity)
        await _execute(built.spec, on_progress, prepared=files.prepared)
    return EvalResult(run.results, run.name)


async def _execute(
    spec: Any, on_progress: ProgressCallback | None, prepared: Callable[[Any], None] | None = None
) -> None:
    from osmosis_local_runner.run.runner import Runner

    fns = [fn.name for fn in spec.eval_fns] or ["grader"]

    def progressed(progress: Any) -> None:
        if on_progress is not None:
            on_progress(
                RunProgress(
                    completed=progress.done, total=progress.total, errored=progress.errors,
                    tokens=progress.tokens, elapsed=progress.elapsed,
                    pass_rate=progress.pass_rate(fns[0]),
                )
            )  # fmt: skip

    runner = Runner(spec, on_progress=progressed, on_note=logger.info)
    runner.prepare()
    if prepared is not None:
        prepared(runner)
    try:
        await runner.run()
    except asyncio.CancelledError:
        runner.interrupt()  # the probe too: nothing of the run outlives the cancellation
        raise


@dataclass(frozen=True)
class _Where:
    """Where a run goes: one results file, or a run directory under ``runs``."""

    file: Path | None
    runs: Path
    name: str | None

    @classmethod
    def of(
        cls, config: str | Path | None, name: str | None, output: str | Path | None,
        root: str | Path | None,
    ) -> _Where:  # fmt: skip
        if output is not None and str(output).endswith(".json"):
            return cls(Path(output), Path(), name)
        project = Path(root) if root is not None else _project_of(config)
        runs = Path(output) if output is not None else project / RUNS
        return cls(None, runs, check_name(name) if name is not None else None)

    def pick(self, config: str | Path | None, *, resume: bool) -> RunDirectory:
        """The named run (``resume`` without a name: the newest unfinished one)."""
        path = _config_path(config)
        return pick_run(self.runs, name=self.name, resume=resume, config_path=path,
                        label=path or "this evaluation")  # fmt: skip


def _is_suite(path: Path) -> bool:
    from osmosis_client.platform.suite_config import looks_like_suite

    return looks_like_suite(path)


def _config_path(config: str | Path | None) -> str | None:
    """The config as the published files name it (relative to its project)."""
    if config is None:
        return None
    from osmosis_client.platform.eval_config import load_config
    from osmosis_local_runner.run.named import config_path

    return config_path(load_config(config))


def _project_of(config: str | Path | None) -> Path:
    if config is None:
        return Path.cwd()
    from osmosis_client.platform.eval_config import load_config

    found = load_config(config).root
    return found if found is not None else Path.cwd()


__all__ = ["RunProgress", "arun_eval", "run_eval"]
