"""``run(spec)``: one offline evaluation with the platform's semantics.

validate dataset → choose rows → open journal (or resume it) → probe the model →
slide a window of ``batch_size`` attempts over rows × ``n`` → results document.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from osmosis_client.errors import InvalidInputError
from osmosis_client.llm.client import ModelClient
from osmosis_client.llm.providers import ModelTarget
from osmosis_client.rollout import (
    AgentWorkflowContext,
    GraderContext,
    check_score,
    last_assistant_content,
)

from .dataset import Dataset, DatasetInfo, Row, count_selected, select_rows
from .discovery import EvalFn, is_async_method
from .journal import (
    AttemptRecord,
    Journal,
    fingerprint_differences,
    journal_path,
    read_journal,
)
from .results import build_document, passed, write_document
from .scheduler import WindowStats, run_window, with_timeout


@dataclass
class RunSpec:
    """Everything one local run needs (flags already merged over the TOML)."""

    model: ModelTarget
    dataset: Path
    workflow: Any
    eval_fns: list[EvalFn]
    output: Path
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


@dataclass
class Progress:
    """A live view of the run for progress displays (updated in place)."""

    total: int = 0
    done: int = 0
    passed: int = 0
    errors: int = 0
    tokens: int = 0
    resumed: int = 0
    started_at: float = field(default_factory=time.monotonic)

    @property
    def elapsed(self) -> float:
        return time.monotonic() - self.started_at

    @property
    def rate(self) -> float:
        fresh = self.done - self.resumed
        return fresh / self.elapsed if self.elapsed > 0 else 0.0

    @property
    def pass_rate(self) -> float | None:
        return self.passed / self.done if self.done else None

    @property
    def eta(self) -> float | None:
        rate = self.rate
        return (self.total - self.done) / rate if rate > 0 else None


@dataclass
class RunResult:
    document: dict[str, Any]
    output: Path
    stats: WindowStats


def fingerprint(spec: RunSpec, info: DatasetInfo) -> dict[str, Any]:
    """What a resumed run must share with the run it continues."""
    return {
        "model": spec.model.model_path,
        "base_url": spec.model.base_url,
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
        self._client = model_client
        self._records: dict[int, list[AttemptRecord]] = {}
        self._workflow_async = is_async_method(spec.workflow, "run")
        self._executor: ThreadPoolExecutor | None = None
        self._journal: Journal | None = None
        self._api_key = spec.model.api_key.get_secret_value() if spec.model.api_key else None
        self._window: asyncio.Future[WindowStats] | None = None
        self._stop = asyncio.Event()
        self._first_fn = spec.eval_fns[0].name if spec.eval_fns else ""

    # ------------------------------------------------------------ preparing

    def prepare(self) -> tuple[DatasetInfo, Any, set[tuple[str, int]], dict[str, Any]]:
        """Validate the dataset and any journal to resume, before any model call."""
        spec = self.spec
        info = Dataset(spec.dataset).validate()
        selected = select_rows(info.total_rows, spec.limit, sample=spec.sample, seed=spec.seed)
        done: set[tuple[str, int]] = set()
        path = journal_path(spec.output)
        current = fingerprint(spec, info)
        if spec.resume:
            if not path.exists():
                raise InvalidInputError(
                    f"nothing to resume: {path} does not exist",
                    hint="--resume needs the -o of the run it continues",
                )
            previous, records = read_journal(path)
            diffs = fingerprint_differences(previous, current)
            if diffs:
                raise InvalidInputError(
                    "cannot resume: the run changed (" + "; ".join(diffs) + ")",
                    hint="rerun with the original settings, or start a new run with another -o",
                    code="RESUME_MISMATCH",
                )
            for record in records:
                if (record.row_key, record.run_index) in done:
                    continue
                done.add((record.row_key, record.run_index))
                self._keep(record, resumed=True)
        elif path.exists():
            raise InvalidInputError(
                f"{path} exists from an earlier run",
                hint="pass --resume to continue it, or choose another -o",
            )
        self.progress.total = count_selected(info.total_rows, selected) * spec.n
        return info, selected, done, current

    def interrupt(self) -> None:
        """Stop cleanly (Ctrl-C): cancel in-flight attempts, keep everything finished."""
        self._stop.set()
        if self._window is not None:
            self._window.cancel()

    async def run(self) -> RunResult:
        spec = self.spec
        info, selected, done, current = self.prepare()
        own_client = self._client is None
        client = self._client or ModelClient(
            spec.model, concurrency=spec.batch_size, default_params=spec.sampling
        )
        self._client = client
        try:
            if spec.probe and not spec.model.is_mock:
                await client.probe()  # fail fast, before any file is written
            return await self._run_window(info, selected, done, current)
        finally:
            if own_client:
                await client.aclose()

    async def _run_window(
        self,
        info: DatasetInfo,
        selected: Any,
        done: set[tuple[str, int]],
        current: dict[str, Any],
    ) -> RunResult:
        spec = self.spec
        started = time.monotonic()
        status = "stopped"
        stats = WindowStats()
        self._journal = Journal(journal_path(spec.output), current, resume=spec.resume)
        self._executor = ThreadPoolExecutor(
            max_workers=min(32, max(2, spec.batch_size)), thread_name_prefix="osmosis-user"
        )
        try:
            attempts = self._attempts(Dataset(spec.dataset), selected, done)
            self._window = asyncio.ensure_future(
                run_window(attempts, spec.batch_size, self._execute, self._stop, stats)
            )
            try:
                await self._window
            except asyncio.CancelledError:
                if not self._stop.is_set():
                    raise  # cancelled from outside: propagate after saving below
            if not self._stop.is_set():
                status = "finished"
        finally:
            self._journal.close()
            self._executor.shutdown(wait=False, cancel_futures=True)
            document = self._document(info, status, started)
            write_document(spec.output, document)
        return RunResult(document, spec.output, stats)

    def _attempts(
        self, dataset: Dataset, selected: Any, done: set[tuple[str, int]]
    ) -> Iterator[tuple[Row, int]]:
        for row in dataset.rows(selected):
            for run_index in range(self.spec.n):
                if (row.key, run_index) not in done:
                    yield row, run_index

    def _document(self, info: DatasetInfo, status: str, started: float) -> dict[str, Any]:
        spec = self.spec
        config = {
            "model": spec.model.model_path,
            "n_runs": spec.n,
            "pass_threshold": spec.pass_threshold,
            "eval_fns": [fn.name for fn in spec.eval_fns],
            "limit": spec.limit,
            "batch_size": spec.batch_size,
            "seed": spec.seed,
            "dataset": str(spec.dataset),
            "sampled": spec.sample and spec.limit is None,
            "total_dataset_rows": info.total_rows,
            "base_url": spec.model.base_url,
            "agent_workflow_timeout_s": spec.agent_workflow_timeout_s,
            "grader_timeout_s": spec.grader_timeout_s,
        }
        return build_document(
            config,
            self._records,
            [fn.name for fn in spec.eval_fns],
            n=spec.n,
            pass_threshold=spec.pass_threshold,
            duration_ms=int((time.monotonic() - started) * 1000),
            status=status,
        )

    def _keep(self, record: AttemptRecord, *, resumed: bool = False) -> None:
        self._records.setdefault(record.row_index, []).append(record)
        p = self.progress
        p.done += 1
        p.resumed += resumed
        p.tokens += record.tokens
        p.errors += not record.success
        p.passed += passed(record, self._first_fn, self.spec.pass_threshold)

    async def _execute(self, item: tuple[Row, int]) -> None:
        row, run_index = item
        record = await self._attempt(row, run_index)
        assert self._journal is not None
        self._journal.append(record)
        self._keep(record)
        if self.on_progress is not None:
            self.on_progress(self.progress)

    # ------------------------------------------------------------ attempts

    async def _chat(
        self, messages: Sequence[dict[str, Any]], params: dict[str, Any]
    ) -> tuple[dict[str, Any], int]:
        assert self._client is not None
        return await self._client.chat(messages, params)

    async def _call(self, fn: Callable[..., Any], is_async: bool, *args: Any) -> Any:
        """Await async user code; run sync user code in a worker thread."""
        if is_async:
            result = await fn(*args)
        else:
            loop = asyncio.get_running_loop()
            result = await loop.run_in_executor(self._executor, functools.partial(fn, *args))
        if inspect.isawaitable(result):
            result = await result
        return result

    async def _attempt(self, row: Row, run_index: int) -> AttemptRecord:
        spec = self.spec
        started = time.perf_counter()
        ctx = AgentWorkflowContext(
            prompt=row.prompt(),
            metadata=row.metadata,
            config=spec.workflow_config,
            row_index=row.index,
            run_index=run_index,
            chat=self._chat,
            model=spec.model.model,
            base_url=spec.model.base_url,
            api_key=self._api_key,
        )
        error: str | None = None
        scores: dict[str, float] = {}
        messages: list[dict[str, Any]] = []
        try:
            out = await with_timeout(
                self._call(spec.workflow.run, self._workflow_async, ctx),
                spec.agent_workflow_timeout_s,
            )
            messages = ctx.messages if out is None else out
            if not isinstance(messages, list):
                raise TypeError(
                    f"run() must return a list of messages or None, not {type(out).__name__}"
                )
        except TimeoutError:
            error = f"workflow timed out after {spec.agent_workflow_timeout_s:g}s"
        except Exception as exc:
            error = f"workflow: {type(exc).__name__}: {exc}"
        if error is not None:
            scores = {fn.name: 0.0 for fn in spec.eval_fns}
        else:
            for fn in spec.eval_fns:
                try:
                    scores[fn.name] = await with_timeout(
                        self._score(fn, messages, row, run_index), spec.grader_timeout_s
                    )
                except TimeoutError:
                    scores[fn.name] = 0.0
                    error = error or f"{_stage(fn)} timed out after {spec.grader_timeout_s:g}s"
                except Exception as exc:
                    scores[fn.name] = 0.0
                    error = error or f"{_stage(fn)}: {type(exc).__name__}: {exc}"
        return AttemptRecord(
            row_key=row.key,
            row_index=row.index,
            run_index=run_index,
            success=error is None,
            scores=scores,
            duration_ms=int((time.perf_counter() - started) * 1000),
            tokens=ctx.tokens,
            error=error[:1000] if error else None,
        )

    async def _score(
        self, fn: EvalFn, messages: list[dict[str, Any]], row: Row, run_index: int
    ) -> float:
        if fn.mode == "grader":
            gctx = GraderContext(
                messages=messages,
                ground_truth=row.ground_truth,
                metadata=row.metadata,
                row_index=row.index,
                run_index=run_index,
            )
            value = await self._call(fn.fn, fn.is_async, gctx)
            if value is None:
                value = gctx.reward
            if value is None:
                raise ValueError("grade() returned no score and did not call ctx.set_reward()")
            return check_score(value)
        if fn.mode == "simple":
            args: tuple[Any, ...] = (
                last_assistant_content(messages),
                row.ground_truth,
                dict(row.metadata),
            )
        else:
            args = (messages, row.ground_truth, dict(row.metadata))
        return check_score(await self._call(fn.fn, fn.is_async, *args))


def _stage(fn: EvalFn) -> str:
    return "grader" if fn.mode == "grader" else f"eval fn {fn.name}"


async def run(spec: RunSpec, *, on_progress: Callable[[Progress], None] | None = None) -> RunResult:
    """Run one evaluation; see :class:`RunSpec`."""
    return await Runner(spec, on_progress=on_progress).run()
