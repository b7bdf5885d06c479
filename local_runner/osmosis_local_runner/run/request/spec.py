"""The runner's data: what a run needs (:class:`RunSpec`), what it will do
(:class:`RunPlan`), how far it is (:class:`Progress`) and what it produced
(:class:`RunResult`)."""

from __future__ import annotations

import asyncio
import functools
import json
import math
import time
from collections.abc import Container, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from osmosis_client._redact import redact_url
from osmosis_client.errors import InvalidInputError
from osmosis_client.llm.prices import EMPTY as EMPTY_PRICES, PriceTable
from osmosis_client.llm.providers import ModelSpec, ModelTarget
from osmosis_local_runner.results.documents.checks import MAX_N
from osmosis_local_runner.results.documents.records import AttemptRecord
from osmosis_local_runner.run.execute.dataset import DatasetInfo
from osmosis_local_runner.run.execute.eval_fns import EvalFn
from osmosis_local_runner.run.execute.scheduler import WindowStats
from osmosis_local_runner.run.kinds import RolloutKind
from osmosis_local_runner.run.kinds.native import NativeRollout
from osmosis_local_runner.run.request.row_lists import rows_text

if TYPE_CHECKING:
    from osmosis_local_runner.results.documents.records import AttemptRecord


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
    offset: int = 0  # rows skipped first (the seed form's --offset); indices stay absolute
    rows: frozenset[int] | None = None  # --rows: these source rows (wins over limit)
    agent_workflow_timeout_s: float = 450.0
    grader_timeout_s: float = 150.0
    sampling: dict[str, Any] = field(default_factory=dict)
    workflow_config: dict[str, Any] = field(default_factory=dict)
    resume: bool = False
    retry_failed: bool = False  # resume, running again the attempts that errored or skipped
    probe: bool = True
    transcripts: bool = True  # keep each attempt's final messages in the document
    max_retries: int = 0  # whole-attempt retries of transient infrastructure errors
    retry_delay: float = 1.0  # seconds before the first such retry (doubling, at most 30)
    #: a second model every attempt also runs on (--baseline-model): model_summaries
    baseline: ModelTarget | ModelSpec | None = None
    #: extra keys that resume must match (e.g. digests of the eval fns' sources)
    fingerprint_extra: dict[str, Any] = field(default_factory=dict)
    #: files the run reads (config, entrypoint…): the results path may never be one of them
    inputs: dict[str, Path] = field(default_factory=dict)
    #: stop the whole run after this many seconds (finished attempts kept), None: no limit
    deadline: float | None = None
    #: a cap shared with other runs in flight at once (a suite's --parallel entries)
    slots: asyncio.Semaphore | None = None
    #: certificates to trust besides the usual roots (None: $OSMOSIS_CA_BUNDLE, if set)
    ca_bundle: Path | None = None
    #: a dataset column every statistic is also broken down by (``summary.slices``)
    slice_by: str | None = None
    #: the first calls refused alike that stop the run (None: 5; 0: never)
    max_same_errors: int | None = None
    #: the call cache (docs/cache.md): on, where (None: OSMOSIS_CACHE_DIR, else the
    #: user's cache directory), a named scope, a run's results to replay
    cache: bool = False
    cache_dir: Path | None = None
    cache_scope: str | None = None
    replay: Path | None = None
    #: a dataset column whose rows share a context: one cluster of the mean's interval
    cluster_by: str | None = None
    #: how the run was asked for (the flags given): kept in the journal's header, never
    #: compared — ``--resume`` takes from it the flags not given again
    settings: dict[str, Any] = field(default_factory=dict)
    #: what model calls cost (``--prices``; an attempt's cost is null without a price)
    prices: PriceTable = EMPTY_PRICES
    #: stop the run once its calls have cost this much, in USD (None: no budget)
    max_cost: float | None = None
    #: a call whose usage is unknown (unreported, insane) is counted as free
    unknown_usage_free: bool = False
    #: where the run stands in a training: its series and step (recorded, never guessed),
    #: and the served weights' identity when known
    series: str | None = None
    step: int | None = None
    weights: dict[str, Any] | None = None
    #: an attempt's rollout gets no more model calls once it has used this many tokens
    max_attempt_tokens: int | None = None
    #: eval fns get the answer with its reasoning (``<think>…</think>`` first)
    raw_answers: bool = False

    def choose_rows(self, info: DatasetInfo) -> Container[int]:
        """The source rows this run chooses of the dataset (the platform's rule:
        :func:`~osmosis_local_runner.run.execute.dataset.select_rows`)."""
        from osmosis_local_runner.run.execute.dataset import select_rows

        return select_rows(
            info.total_rows,
            self.limit,
            sample=self.sample,
            seed=self.seed,
            offset=self.offset,
            rows=self.rows,
            dataset=info.path.name,
        )

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
    skipped: int = 0
    tokens: int = 0
    resumed: int = 0
    passed: dict[str, int] = field(default_factory=dict)  # per eval fn, the run's model
    unscored: int = 0  # attempts of a --baseline-model: out of the live pass rate
    started_at: float = field(default_factory=time.monotonic)
    window: int = 1  # attempts in flight at once: no rate (nor ETA) before the first wave
    retried: int = 0  # attempts run again after a transient failure
    fns: list[str] = field(default_factory=list)  # the eval fns, in order
    #: what the finished attempts cost (None once one of them had no known price)
    cost_usd: float | None = 0.0
    truncated: int = 0  # attempts cut by a length limit (or their token budget)
    _calls_retried_before: int = field(default_factory=lambda: _calls_retried())

    @property
    def retries(self) -> int:
        """Retries since the run started: attempts, and model calls (a 500 retried)
        that no error count shows."""
        return self.retried + _calls_retried() - self._calls_retried_before

    @property
    def elapsed(self) -> float:
        return time.monotonic() - self.started_at

    @property
    def rate(self) -> float:
        fresh = self.done - self.resumed
        return fresh / self.elapsed if self.elapsed > 0 else 0.0

    def add(self, record: AttemptRecord, passing: Iterable[str], *, resumed: bool) -> None:
        """Count a finished attempt (``passing``: the eval fns it passed)."""
        self.done += 1
        self.resumed += resumed
        self.tokens += record.tokens
        self.errors += not record.success
        self.skipped += record.skipped
        self.retried += bool(record.extra and record.extra.get("retries")) and not resumed
        self.unscored += record.model_tag is not None
        usage = record.usage
        if usage is not None:
            self.truncated += usage.get("truncated") is True
            cost = usage.get("cost_usd")
            if self.cost_usd is not None and usage.get("calls"):
                self.cost_usd = self.cost_usd + cost if isinstance(cost, int | float) else None
        if record.model_tag is None:
            for fn in passing:
                self.passed[fn] = self.passed.get(fn, 0) + 1

    def pass_rate(self, fn: str) -> float | None:
        scored = self.done - self.unscored
        return self.passed.get(fn, 0) / scored if scored else None

    @property
    def eta(self) -> float | None:
        if self.done - self.resumed < min(self.window, self.total - self.resumed):
            return None  # the first wave is not back: one early answer is no rate
        rate = self.rate
        return (self.total - self.done) / rate if rate > 0 else None


def _calls_retried() -> int:
    from osmosis_client.llm.client import RETRIED

    return RETRIED[0]


@dataclass(frozen=True)
class RunPlan:
    """What ``run()`` will do, known before any model call."""

    total_rows: int
    selected_rows: int
    attempts: int  # selected rows × n (× 2 with a baseline model)
    resumed: int  # attempts already in the journal
    sampled: bool  # a seeded random sample (no limit given)
    seed: int
    limit: int | None
    rollout: str  # the rollout kind's description
    model: str
    output: Path
    baseline: str | None = None
    model_path: str = ""  # the model that runs, as named (a given one, else the config's)
    endpoint: str | None = None  # where it is called (no credentials)


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


#: local maxima: more would exhaust file descriptors or memory before doing anything useful
MAX_BATCH_SIZE = 4096


def check_limits(spec: RunSpec) -> None:
    for name, value, maximum in (
        ("batch_size", spec.batch_size, MAX_BATCH_SIZE),
        ("n", spec.n, MAX_N),
    ):
        if not 1 <= value <= maximum:
            raise InvalidInputError(
                f"{name} {value} is outside 1..{maximum:,}",
                hint=f"use a {name} between 1 and {maximum:,}",
                code="LIMIT_EXCEEDED",
                data={"setting": name},
            )
    for name, number in (
        ("pass_threshold", spec.pass_threshold),
        ("agent_workflow_timeout_s", spec.agent_workflow_timeout_s),
        ("grader_timeout_s", spec.grader_timeout_s),
    ):
        if not math.isfinite(number):
            raise InvalidInputError(
                f"{name} must be a finite number, got {number}", code="NOT_FINITE"
            )
    if spec.deadline is not None and not (math.isfinite(spec.deadline) and spec.deadline > 0):
        raise InvalidInputError(f"the deadline must be a positive number, got {spec.deadline}")


def fingerprint(
    spec: RunSpec, info: DatasetInfo, target: ModelTarget | ModelSpec, kind: RolloutKind
) -> dict[str, Any]:
    """What a resumed run must share with the run it continues."""
    extra: dict[str, Any] = {}
    if spec.offset:
        extra["offset"] = spec.offset
    if spec.rows is not None:
        extra["rows"] = rows_text(spec.rows)
    if spec.baseline is not None:
        extra["baseline"] = spec.baseline.model_path
    if spec.raw_answers:
        extra["raw_answers"] = True
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
        **extra,
        **spec.fingerprint_extra,
    }
