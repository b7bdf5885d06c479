"""``Runner``: one offline evaluation with the platform's semantics.

``prepare()`` (no model call, nothing written): validate the dataset → choose rows → check
a journal to resume → resolve the model(s) and keys → a :class:`RunPlan`. ``run()``: open
the journal → start the rollout kind → slide a window of ``batch_size`` attempts over rows
× ``n`` (× a baseline model; the endpoint probe rides with the first wave) → grade →
journal → the document.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from osmosis_client.errors import OsmosisError
from osmosis_client.llm.client import SESSION_ID, ModelClient
from osmosis_client.llm.prices import for_called
from osmosis_client.llm.providers import ModelTarget
from osmosis_client.llm.usage import METER, Meter
from osmosis_local_runner.results.documents.document import check_results_path, write_document
from osmosis_local_runner.results.documents.records import BASELINE, AttemptRecord
from osmosis_local_runner.results.statistics.scoring import passed
from osmosis_local_runner.results.statistics.slices import check_column
from osmosis_local_runner.results.statistics.usage import attempt_usage
from osmosis_local_runner.run.execute import models, stops
from osmosis_local_runner.run.execute.caching import CacheUse, cache_for, cache_summary, scope_of
from osmosis_local_runner.run.execute.calls import CallLog
from osmosis_local_runner.run.execute.dataset import Dataset, DatasetInfo, Row, count_selected
from osmosis_local_runner.run.execute.recording import record_attempt, results_head
from osmosis_local_runner.run.execute.retrying import rollout_with_retries
from osmosis_local_runner.run.execute.scheduler import (
    LoopWatchdog,
    ReadAhead,
    WindowStats,
    paced_collections,
    run_window,
)
from osmosis_local_runner.run.execute.user_code import guard_exits
from osmosis_local_runner.run.kinds import RunEnv
from osmosis_local_runner.run.request.spec import (
    Progress,
    RunPlan,
    RunResult,
    RunSpec,
    check_limits,
    fingerprint,
)
from osmosis_local_runner.run.session.journal import Journal
from osmosis_local_runner.run.session.topup import Continuation, continuation, open_journal

Tag = str | None  # None: the run's model; "baseline": --baseline-model
Item = tuple[Row, int, Tag]


@dataclass(frozen=True)
class _Prepared:
    plan: RunPlan
    info: DatasetInfo
    selected: Any  # the chosen row indices (a Container)
    targets: dict[Tag, ModelTarget]
    fingerprint: dict[str, Any]


class Runner:
    def __init__(
        self,
        spec: RunSpec,
        *,
        on_progress: Callable[[Progress], None] | None = None,
        on_note: Callable[[str], None] | None = None,
        model_client: ModelClient | None = None,
    ) -> None:
        self.spec = spec
        self.on_progress = on_progress
        self.on_note = on_note
        self.kind = spec.rollout_kind()
        self.fn_names = [fn.name for fn in spec.eval_fns] or ["grader"]
        self.progress = Progress(fns=self.fn_names)
        self.tags: list[Tag] = [None] if spec.baseline is None else [None, BASELINE]
        self._client = model_client
        self._records: dict[int, list[AttemptRecord]] = {}
        self._done: set[tuple[int, int, Tag]] = set()
        self._journal: Journal | None = None
        self._window: asyncio.Future[WindowStats] | None = None
        self._stop = asyncio.Event()
        self._fatal: OsmosisError | None = None  # stops the run; results are kept
        self._unusable: OsmosisError | None = None  # the endpoint failed its check: nothing kept
        self._succeeded = 0  # attempts of this invocation that finished without error
        self._prepared: _Prepared | None = None
        self._continued: Continuation | None = None  # the journal a resume continues
        self._cache: CacheUse | None = None  # the call cache the run used, if any
        self._envs: dict[Tag, RunEnv] = {}
        self._budget = stops.Budget(spec.max_cost, spec.output)
        self._same_errors = stops.SameErrors(spec.max_same_errors, spec.output)
        self._warned_invalid = False

    # ------------------------------------------------------------ preparing

    def prepare(self) -> RunPlan:
        """Validate everything that needs no model call; cheap checks before key checks."""
        return self._prepare().plan

    def _prepare(self) -> _Prepared:
        if self._prepared is not None:
            return self._prepared
        spec = self.spec
        check_limits(spec)
        check_results_path(spec.output, {"dataset": spec.dataset, **spec.inputs})
        info = Dataset(spec.dataset).validate()
        check_column(spec.slice_by, info.columns)
        check_column(spec.cluster_by, info.columns)
        selected = spec.choose_rows(info)
        self.kind.prepare(self.on_note)  # e.g. the rollout's environment, synced and checked
        current = fingerprint(spec, info, spec.model, self.kind)
        self._check_journal(current, info.total_rows, selected)
        targets: dict[Tag, ModelTarget] = {None: models.resolve(spec.model)}
        if spec.baseline is not None:
            targets[BASELINE] = models.resolve(spec.baseline)
        # a table keyed by the model called (a registry row's model) prices its id too
        called = {t.model_path: t.model for t in targets.values()}
        spec.prices = for_called(spec.prices, called)
        stops.check_budget(spec.max_cost, spec.prices, targets.values())
        selected_rows = count_selected(info.total_rows, selected)
        self.progress.total = selected_rows * spec.n * len(self.tags)
        self.progress.window = spec.batch_size
        plan = RunPlan(
            total_rows=info.total_rows,
            selected_rows=selected_rows,
            attempts=self.progress.total,
            resumed=self.progress.resumed,
            sampled=spec.sample and spec.limit is None and spec.rows is None,
            seed=spec.seed,
            limit=spec.limit,
            rollout=self.kind.describe(),
            model=targets[None].describe(),
            output=spec.output,
            baseline=targets[BASELINE].describe() if BASELINE in targets else None,
            model_path=targets[None].model_path,
            endpoint=models.endpoint(targets[None]),
        )
        self._prepared = _Prepared(plan, info, selected, targets, current)
        return self._prepared

    def selection(self) -> tuple[list[int], DatasetInfo]:
        """The chosen source rows, in order, and the dataset (after ``prepare``)."""
        p = self._prepare()
        return [i for i in range(p.info.total_rows) if i in p.selected], p.info

    def _check_journal(self, current: dict[str, Any], total: int, selected: Any) -> None:
        spec = self.spec
        resume = spec.resume or spec.retry_failed
        self._continued = continuation(
            spec.output, resume, current, spec.settings, total, selected, self.on_note
        )
        for record in self._continued.records if self._continued else ():
            if spec.retry_failed and (not record.success or record.skipped):
                continue  # run again
            self._keep(record, resumed=True)

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
        spec = self.spec
        clients = self._clients(prepared.targets)
        self._envs = {
            tag: self._env(target, clients[tag], tag) for tag, target in prepared.targets.items()
        }
        started = time.monotonic()
        self._journal = open_journal(
            spec, prepared.fingerprint, self._continued, self._journal_failed, self.on_note
        )
        status = "stopped"
        stats = WindowStats()
        loop = asyncio.get_running_loop()
        deadline = None
        if spec.deadline is not None:
            deadline = loop.call_later(spec.deadline, self._deadline_passed, spec.deadline)
        try:
            with (
                guard_exits(),
                LoopWatchdog.watching(loop),
                paced_collections(),
                cache_for(spec, self.on_note) as self._cache,
            ):
                if self._budget.reached or self._fatal is not None:
                    self._stop.set()  # spent by its earlier invocations: nothing starts
                await self.kind.start(self._envs[None])
                for tag, target in prepared.targets.items():
                    self._check_endpoint(clients[tag], target)
                status = await self._run_window(prepared.selected, stats)
        finally:
            if deadline is not None:
                deadline.cancel()
            await self.kind.stop()
            if self._unusable is not None:
                self._journal.discard_this_run()
            self._journal.close()
            for client in clients.values():
                if client is not self._client:  # one passed in is its owner's to close
                    await client.aclose()
        if self._unusable is not None:
            raise self._unusable
        if status == "stopped" and self._budget.reached:
            progress = self.progress
            self._fatal = self._fatal or self._budget.stopped(progress.done, progress.total)
        stops.name_config(self._fatal, spec.inputs.get("config"))
        head = self._head(prepared, status, started, stops.reason(status, self._fatal))
        write_document(spec.output, head, self._records)
        if self._fatal is not None:
            raise self._fatal
        return RunResult(head, spec.output, stats, self._records)

    def _clients(self, targets: dict[Tag, ModelTarget]) -> dict[Tag, ModelClient]:
        given = self._client
        return {
            tag: given
            if tag is None and given is not None
            else models.model_client(self.spec, target)
            for tag, target in targets.items()
        }

    def _env(self, target: ModelTarget, client: ModelClient, tag: Tag) -> RunEnv:
        return models.run_env(self.spec, target, client, tag, note=self.on_note, abort=self._abort)

    def _check_endpoint(self, client: ModelClient, target: ModelTarget) -> None:
        """The first wave's own model calls check the endpoint and the key (no request of
        their own, no latency, no window slot): an endpoint-level failure before any call
        succeeded abandons the run, and nothing is kept (an attempt's own failure — a 400
        for its prompt — fails that attempt only)."""
        if not self.spec.probe or target.is_mock:
            return

        def failed(exc: OsmosisError) -> None:
            if self._unusable is not None or self._succeeded:
                return
            if models.endpoint_level(exc):
                self._unusable = exc
                self.interrupt()
            elif (broken := self._same_errors.add(exc)) is not None:
                self._abort(broken)  # what finished is kept: the run resumes once fixed

        client.watch_first_calls(failed)

    async def _run_window(self, selected: Any, stats: WindowStats) -> str:
        spec = self.spec
        size = spec.batch_size
        if self.kind.capacity is not None and self.kind.capacity < size:
            size = self.kind.capacity  # a rollout server queues (and times out) the rest
            if self.on_note is not None:
                self.on_note(
                    f"the rollout server runs {size} rollouts at once: {size} in flight "
                    f"(batch_size {spec.batch_size})"
                )
        self._window = asyncio.ensure_future(
            run_window(
                ReadAhead(self._attempts(Dataset(spec.dataset), selected), size),
                size,
                self._attempt if spec.slots is None else self._execute,
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
        # the budget reached by the last attempt of all: the run finished
        unfinished = self.progress.done < self.progress.total
        return "stopped" if self._stop.is_set() and unfinished else "finished"

    def _attempts(self, dataset: Dataset, selected: Any) -> Iterator[Item]:
        for row in dataset.rows(selected):
            for run_index in range(self.spec.n):
                for tag in self.tags:
                    if (row.index, run_index, tag) not in self._done:
                        yield row, run_index, tag

    def _deadline_passed(self, seconds: float) -> None:
        self._abort(stops.deadline_reached(seconds, self.spec.output))

    def _journal_failed(self, exc: OSError) -> None:
        self._abort(stops.journal_failed(exc, self.spec.output))

    # ------------------------------------------------------------ attempts

    async def _execute(self, item: Item) -> None:
        assert self.spec.slots is not None  # a suite's cap shared by its entries in flight
        async with self.spec.slots:
            await self._attempt(item)

    async def _attempt(self, item: Item) -> None:
        row, run_index, tag = item
        # the attempt's session: X-Session-ID on its model calls (sticky routing)
        SESSION_ID.set(f"row{row.index}-run{run_index}{'-' + tag if tag else ''}")
        started = time.perf_counter()
        meter = Meter()  # every model call made for this attempt: the rollout's, a judge's
        METER.set(meter)
        spec = self.spec
        calls = CallLog(
            self._envs[tag],
            started,
            keep=spec.transcripts,
            cap=spec.max_attempt_tokens,
            scope=scope_of(row.digest, run_index, tag),
        )
        outcome = await rollout_with_retries(self.kind, spec, row, run_index, calls.env())
        if calls.calls:
            outcome.extra["model_calls"] = calls.entries(outcome.messages)
        record = await record_attempt(spec, self.fn_names, row, run_index, outcome, started)
        record.model_tag = tag
        record.usage = attempt_usage(
            meter,
            calls.usage,
            calls.last_finish,
            spec.prices,
            capped=calls.capped,
            unknown_as_zero=spec.unknown_usage_free,
            cached=calls.cached,
        )
        # the attempt is over: its bookkeeping runs after the other ready callbacks, so
        # when many replies arrive together the next requests leave first
        asyncio.get_running_loop().call_soon(self._finish, record)
        self._account(record)

    def _account(self, record: AttemptRecord) -> None:
        """The attempt's cost counted now, before its worker takes the next item: once
        the budget is reached no attempt starts (whatever the answers' speed)."""
        usage = record.usage or {}
        if usage.get("invalid_calls") and not self._warned_invalid and self.on_note:
            self._warned_invalid = True
            self.on_note(
                "the endpoint reported token counts or costs outside any sane range: "
                "those calls are recorded as invalid (invalid_calls), never summed"
            )
        error = self._budget.count(record.usage)
        if error is not None:
            self._abort(error)
        elif self._budget.reached:
            self._stop.set()  # those in flight finish: every call paid for is counted

    def _finish(self, record: AttemptRecord) -> None:
        if self._journal is not None:
            self._journal.append(record)
        self._keep(record)
        if record.success:
            self._succeeded += 1
        if self.on_progress is not None:
            self.on_progress(self.progress)

    def _keep(self, record: AttemptRecord, *, resumed: bool = False) -> None:
        if resumed:
            self._done.add(record.key)  # only resumed attempts are ever looked up
            self._fatal = self._fatal or self._budget.count(record.usage)
        self._records.setdefault(record.row_index, []).append(record)
        passing = [fn for fn in self.fn_names if passed(record, fn, self.spec.pass_threshold)]
        self.progress.add(record, passing, resumed=resumed)

    # ------------------------------------------------------------ results

    def _head(
        self, prepared: _Prepared, status: str, started: float, reason: str | None
    ) -> dict[str, Any]:
        head = results_head(
            self.spec,
            self.kind.name,
            prepared.plan,
            prepared.info,
            {tag: target.model_path for tag, target in prepared.targets.items()},
            prepared.targets[None].base_url,
            self._records,
            self.fn_names,
            status=status,
            stopped_reason=reason,
            duration_ms=int((time.monotonic() - started) * 1000),
            top_ups=self._continued.top_ups if self._continued else (),
        )
        if self._cache is not None:  # every call's, a judge's too: hits, misses, replays
            head["summary"]["cache"] = cache_summary(self._cache)
        return head
