"""``Runner``: one offline evaluation with the platform's semantics.

``prepare()`` (no model call, nothing written): validate the dataset → choose rows →
check a journal to resume → resolve the model and its key → a :class:`RunPlan`.
``run()``: open the journal → start the rollout kind → slide a window of
``batch_size`` attempts over rows × ``n`` (the endpoint probe rides along with the
first wave) → grade → journal → the results document.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from osmosis_client._redact import redact_url
from osmosis_client.errors import InvalidInputError, OsmosisError
from osmosis_client.llm.client import ModelClient
from osmosis_client.llm.providers import ModelSpec, ModelTarget
from osmosis_client.rollout import last_assistant_content

from .dataset import Dataset, DatasetInfo, Row, count_selected, select_rows
from .discovery import EvalFn
from .grading import grade
from .journal import (
    AttemptRecord,
    Journal,
    compact,
    fingerprint_differences,
    journal_path,
    read_journal,
)
from .kinds import Outcome, RolloutKind, RunEnv
from .kinds.native import NativeRollout
from .results import document_head, passed, write_document
from .scheduler import ReadAhead, WindowStats, run_window

logger = logging.getLogger("osmosis_client.runner")

RETRY_BASE_DELAY = 1.0
RETRY_MAX_DELAY = 30.0


@dataclass
class RunSpec:
    """Everything one local run needs (flags already merged over the TOML)."""

    model: ModelTarget | ModelSpec
    dataset: Path
    workflow: Any = None  # shorthand for rollout=NativeRollout(workflow)
    eval_fns: list[EvalFn] = field(default_factory=list)
    output: Path = Path("results.json")
    rollout: RolloutKind | None = None
    n: int = 1
    batch_size: int = 1
    pass_threshold: float = 1.0
    limit: int | None = None
    sample: bool = False  # TOML mode: no limit → seeded 10 % sample
    seed: int = 0
    agent_workflow_timeout_s: float = 450.0
    grader_timeout_s: float = 150.0
    sampling: dict[str, Any] = field(default_factory=dict)
    workflow_config: dict[str, Any] = field(default_factory=dict)
    resume: bool = False
    probe: bool = True
    transcripts: bool = True  # keep each attempt's final messages in the document
    max_retries: int = 0  # whole-attempt retries of transient infrastructure errors
    #: extra keys that resume must match (e.g. digests of the eval fns' sources)
    fingerprint_extra: dict[str, Any] = field(default_factory=dict)

    def rollout_kind(self) -> RolloutKind:
        if self.rollout is not None:
            return self.rollout
        if self.workflow is None:
            raise InvalidInputError("nothing to run: give a workflow or a rollout")
        self.rollout = NativeRollout(self.workflow)
        return self.rollout


@dataclass
class Progress:
    """A live view of the run for progress displays (updated in place)."""

    total: int = 0
    done: int = 0
    errors: int = 0
    tokens: int = 0
    resumed: int = 0
    passed: dict[str, int] = field(default_factory=dict)  # per eval fn
    started_at: float = field(default_factory=time.monotonic)

    @property
    def elapsed(self) -> float:
        return time.monotonic() - self.started_at

    @property
    def rate(self) -> float:
        fresh = self.done - self.resumed
        return fresh / self.elapsed if self.elapsed > 0 else 0.0

    def pass_rate(self, fn: str) -> float | None:
        return self.passed.get(fn, 0) / self.done if self.done else None

    @property
    def eta(self) -> float | None:
        rate = self.rate
        return (self.total - self.done) / rate if rate > 0 else None


@dataclass(frozen=True)
class RunPlan:
    """What ``run()`` will do, known before any model call."""

    total_rows: int
    selected_rows: int
    attempts: int  # selected rows × n
    resumed: int  # attempts already in the journal
    sampled: bool  # a seeded random sample (no limit given)
    seed: int
    limit: int | None
    rollout: str  # the rollout kind's description
    model: str
    output: Path


@dataclass(frozen=True)
class _Prepared:
    plan: RunPlan
    info: DatasetInfo
    selected: Any  # the chosen row indices (a Container)
    target: ModelTarget
    fingerprint: dict[str, Any]


class RunResult:
    """A finished (or stopped) run: its summary in memory, the document on disk."""

    def __init__(
        self,
        head: dict[str, Any],
        output: Path,
        stats: WindowStats,
        records: dict[int, list[AttemptRecord]],
    ) -> None:
        self.head = head
        self.output = output
        self.stats = stats
        self.records = records

    @property
    def summary(self) -> dict[str, Any]:
        return self.head["summary"]  # type: ignore[no-any-return]

    @property
    def config(self) -> dict[str, Any]:
        return self.head["config"]  # type: ignore[no-any-return]

    @functools.cached_property
    def document(self) -> dict[str, Any]:
        """The whole results document (read back from the file: large runs never hold
        it in memory unless asked)."""
        return json.loads(self.output.read_bytes())  # type: ignore[no-any-return]

    def errors(self) -> Iterator[tuple[int, int, str]]:
        """(row, run, error) of errored attempts, then eval-fn errors, in row order."""
        ordered = [r for index in sorted(self.records) for r in self.records[index]]
        for r in ordered:
            if r.error:
                yield r.row_index, r.run_index, r.error
        for r in ordered:
            for fn, message in (r.fn_errors or {}).items():
                yield r.row_index, r.run_index, f"{fn}: {message}"


class RunAborted(OsmosisError):
    """The run stopped for a reason that is not the rollouts' fault (exit 1)."""

    code = "RUN_ABORTED"


def fingerprint(
    spec: RunSpec, info: DatasetInfo, target: ModelTarget | ModelSpec, kind: RolloutKind
) -> dict[str, Any]:
    """What a resumed run must share with the run it continues."""
    return {
        "model": target.model_path,
        "base_url": redact_url(target.base_url) if target.base_url else None,
        "dataset": str(info.path.resolve()),
        "dataset_sha256": info.fingerprint,
        "n": spec.n,
        "pass_threshold": spec.pass_threshold,
        "agent_workflow_timeout_s": spec.agent_workflow_timeout_s,
        "grader_timeout_s": spec.grader_timeout_s,
        "eval_fns": [fn.name for fn in spec.eval_fns],
        "limit": spec.limit,
        "sample": spec.sample,
        "seed": spec.seed,
        "sampling": dict(spec.sampling),
        **kind.fingerprint(),
        **spec.fingerprint_extra,
    }


class Runner:
    def __init__(
        self,
        spec: RunSpec,
        *,
        on_progress: Callable[[Progress], None] | None = None,
        model_client: ModelClient | None = None,
    ) -> None:
        self.spec = spec
        self.on_progress = on_progress
        self.progress = Progress()
        self.kind = spec.rollout_kind()
        self.fn_names = [fn.name for fn in spec.eval_fns] or ["grader"]
        self._client = model_client
        self._records: dict[int, list[AttemptRecord]] = {}
        self._done: set[tuple[int, int]] = set()
        self._journal: Journal | None = None
        self._window: asyncio.Future[WindowStats] | None = None
        self._stop = asyncio.Event()
        self._fatal: OsmosisError | None = None  # stops the run; results are kept
        self._unusable: OsmosisError | None = None  # the endpoint probe failed: nothing kept
        self._succeeded = 0  # attempts of this invocation that finished without error
        self._prepared: _Prepared | None = None
        self._resume_from: int | None = None

    # ------------------------------------------------------------ preparing

    def prepare(self) -> RunPlan:
        """Validate everything that needs no model call; cheap checks before key checks."""
        return self._prepare().plan

    def _prepare(self) -> _Prepared:
        if self._prepared is not None:
            return self._prepared
        spec = self.spec
        info = Dataset(spec.dataset).validate()
        selected = select_rows(info.total_rows, spec.limit, sample=spec.sample, seed=spec.seed)
        current = fingerprint(spec, info, spec.model, self.kind)
        self._check_journal(current)
        target = spec.model.resolve() if isinstance(spec.model, ModelSpec) else spec.model
        selected_rows = count_selected(info.total_rows, selected)
        self.progress.total = selected_rows * spec.n
        plan = RunPlan(
            total_rows=info.total_rows,
            selected_rows=selected_rows,
            attempts=self.progress.total,
            resumed=self.progress.resumed,
            sampled=spec.sample and spec.limit is None,
            seed=spec.seed,
            limit=spec.limit,
            rollout=self.kind.describe(),
            model=target.describe(),
            output=spec.output,
        )
        self._prepared = _Prepared(plan, info, selected, target, current)
        return self._prepared

    def _check_journal(self, current: dict[str, Any]) -> None:
        path = journal_path(self.spec.output)
        if not self.spec.resume:
            if path.exists():
                raise InvalidInputError(
                    f"{path} exists from an earlier run",
                    hint="resume it, or choose another results path",
                    code="RESULTS_EXIST",
                )
            return
        if not path.exists():
            raise InvalidInputError(
                f"nothing to resume: {path} does not exist",
                hint="resume with the results path of the run it continues",
                code="NOTHING_TO_RESUME",
            )
        contents = read_journal(path)
        diffs = fingerprint_differences(contents.fingerprint, current)
        if diffs:
            raise InvalidInputError(
                "cannot resume: the run changed (" + "; ".join(diffs) + ")",
                hint="rerun with the original settings, or start a new run with another -o",
                code="RESUME_MISMATCH",
            )
        for record in contents.records:
            if record.key not in self._done:
                self._keep(record, resumed=True)
        self._resume_from = contents.valid_bytes

    def interrupt(self) -> None:
        """Stop cleanly (Ctrl-C): cancel in-flight attempts, keep everything finished."""
        self._stop.set()
        if self._window is not None:
            self._window.cancel()

    def _abort(self, error: OsmosisError) -> None:
        if self._fatal is None:
            self._fatal = error
        self.interrupt()

    # ------------------------------------------------------------ running

    async def run(self) -> RunResult:
        prepared = self._prepare()
        plan, info, target = prepared.plan, prepared.info, prepared.target
        spec = self.spec
        own_client = self._client is None
        client = self._client or ModelClient(
            target,
            concurrency=spec.batch_size + 1,  # + the probe's own connection
            default_params=spec.sampling,
        )
        self._client = client
        env = RunEnv(
            chat=client.chat,
            model=target.model,
            base_url=target.base_url,
            api_key=target.api_key.get_secret_value() if target.api_key else None,
            sampling=spec.sampling,
            workflow_config=spec.workflow_config,
            agent_timeout=spec.agent_workflow_timeout_s,
        )
        started = time.monotonic()
        self._journal = Journal(
            journal_path(spec.output),
            prepared.fingerprint,
            resume_from=self._resume_from,
            on_failure=self._journal_failed,
        )
        status = "stopped"
        stats = WindowStats()
        try:
            await self.kind.start(env)
            probe = self._start_probe(client, target)
            status = await self._run_window(prepared.selected, stats)
            if probe is not None:
                await asyncio.gather(probe, return_exceptions=True)
        finally:
            await self.kind.stop()
            if self._unusable is not None:
                self._journal.discard_this_run()
            self._journal.close()
            if own_client:
                await client.aclose()
        if self._unusable is not None:
            raise self._unusable
        head = self._head(info, plan, target, status, started)
        write_document(spec.output, head, self._records)
        if self._fatal is not None:
            raise self._fatal
        return RunResult(head, spec.output, stats, self._records)

    def _start_probe(self, client: ModelClient, target: ModelTarget) -> asyncio.Future[Any] | None:
        """Check the endpoint and key alongside the first wave (no latency added): if it
        fails before any attempt succeeded, the run is abandoned and nothing is kept."""
        if not self.spec.probe or target.is_mock:
            return None

        def done(task: asyncio.Future[Any]) -> None:
            if task.cancelled() or self._succeeded:
                return
            exc = task.exception()
            if isinstance(exc, OsmosisError):
                self._unusable = exc
                self.interrupt()

        probe = asyncio.ensure_future(client.probe())
        probe.add_done_callback(done)
        return probe

    async def _run_window(self, selected: Any, stats: WindowStats) -> str:
        spec = self.spec
        self._window = asyncio.ensure_future(
            run_window(
                ReadAhead(self._attempts(Dataset(spec.dataset), selected), spec.batch_size),
                spec.batch_size,
                self._execute,
                self._stop,
                stats,
            )
        )
        try:
            await self._window
        except asyncio.CancelledError:
            if not self._stop.is_set():
                raise  # cancelled from outside: propagate after saving
        finally:
            await asyncio.sleep(0)  # let the last attempts' bookkeeping run
        return "stopped" if self._stop.is_set() else "finished"

    def _attempts(self, dataset: Dataset, selected: Any) -> Iterator[tuple[Row, int]]:
        for row in dataset.rows(selected):
            for run_index in range(self.spec.n):
                if (row.index, run_index) not in self._done:
                    yield row, run_index

    def _journal_failed(self, exc: OSError) -> None:
        self._abort(
            RunAborted(
                f"cannot write the journal ({exc.strerror or exc}); the run stopped",
                hint="free space or fix permissions, then resume the run",
                code="JOURNAL_WRITE_FAILED",
                data={"results": str(self.spec.output)},
            )
        )

    # ------------------------------------------------------------ attempts

    async def _execute(self, item: tuple[Row, int]) -> None:
        row, run_index = item
        started = time.perf_counter()
        outcome = await self._rollout_with_retries(row, run_index)
        record = await self._record(row, run_index, outcome, started)
        # the attempt is over: its bookkeeping runs after the other ready callbacks, so
        # when many replies arrive together the next requests leave first
        asyncio.get_running_loop().call_soon(self._finish, record)

    def _finish(self, record: AttemptRecord) -> None:
        if self._journal is not None:
            self._journal.append(record)
        self._keep(record)
        if record.success:
            self._succeeded += 1
        if self.on_progress is not None:
            self.on_progress(self.progress)

    async def _rollout_with_retries(self, row: Row, run_index: int) -> Outcome:
        retries = 0
        while True:
            outcome = await self.kind.run(row, run_index)
            if not outcome.transient or retries >= self.spec.max_retries:
                if retries:
                    outcome.extra["retries"] = retries
                return outcome
            delay = min(RETRY_MAX_DELAY, RETRY_BASE_DELAY * 2**retries)
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

    async def _record(
        self, row: Row, run_index: int, outcome: Outcome, started: float
    ) -> AttemptRecord:
        spec = self.spec
        error = outcome.error
        fn_errors: dict[str, str] = {}
        if error is not None:
            scores = {name: 0.0 for name in self.fn_names}
        elif outcome.scores is not None:
            scores = outcome.scores
        else:
            grades = await grade(
                spec.eval_fns,
                outcome.messages,
                row,
                run_index,
                timeout=spec.grader_timeout_s,
            )
            scores, fn_errors, error = grades.scores, grades.fn_errors, grades.error
        transcript = None
        if spec.transcripts:
            try:
                transcript = compact(outcome.messages)
            except (TypeError, ValueError, RecursionError) as exc:
                error = error or f"workflow: the conversation is not JSON ({exc})"[:1000]
                scores = {name: 0.0 for name in self.fn_names}
        return AttemptRecord(
            row_index=row.index,
            run_index=run_index,
            row_digest=row.digest,
            success=error is None,
            scores=scores,
            duration_ms=int((time.perf_counter() - started) * 1000),
            tokens=outcome.tokens,
            error=error,
            fn_errors=fn_errors or None,
            answer=last_assistant_content(outcome.messages),
            extra=outcome.extra or None,
            transcript=transcript,
        )

    def _keep(self, record: AttemptRecord, *, resumed: bool = False) -> None:
        if resumed:
            self._done.add(record.key)  # only resumed attempts are ever looked up
        self._records.setdefault(record.row_index, []).append(record)
        p = self.progress
        p.done += 1
        p.resumed += resumed
        p.tokens += record.tokens
        p.errors += not record.success
        for fn in self.fn_names:
            if passed(record, fn, self.spec.pass_threshold):
                p.passed[fn] = p.passed.get(fn, 0) + 1

    # ------------------------------------------------------------ results

    def _head(
        self, info: DatasetInfo, plan: RunPlan, target: ModelTarget, status: str, started: float
    ) -> dict[str, Any]:
        spec = self.spec
        config = {
            "model": target.model_path,
            "n_runs": spec.n,
            "pass_threshold": spec.pass_threshold,
            "eval_fns": self.fn_names,
            "limit": spec.limit,
            "batch_size": spec.batch_size,
            "seed": spec.seed,
            "dataset": str(spec.dataset),
            "sampled": plan.sampled,
            "total_dataset_rows": info.total_rows,
            "base_url": redact_url(target.base_url) if target.base_url else None,
            "agent_workflow_timeout_s": spec.agent_workflow_timeout_s,
            "grader_timeout_s": spec.grader_timeout_s,
            "rollout_mode": self.kind.name,
        }
        return document_head(
            config,
            self._records,
            self.fn_names,
            n=spec.n,
            pass_threshold=spec.pass_threshold,
            duration_ms=int((time.monotonic() - started) * 1000),
            status=status,
        )


async def run(spec: RunSpec, *, on_progress: Callable[[Progress], None] | None = None) -> RunResult:
    """Run one evaluation; see :class:`RunSpec`."""
    return await Runner(spec, on_progress=on_progress).run()
