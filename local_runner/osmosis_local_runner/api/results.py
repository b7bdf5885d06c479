"""What a run is, read back: typed summaries and rows of a results document on disk.

:class:`EvalResult` is what :func:`run_eval` returns and :func:`load_run` opens — a run
directory, a results file or a run's name. Statistics come from the document's head;
rows stream from disk (a million-row run is never held whole), each with its attempts.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from osmosis_client.errors import InvalidInputError
from osmosis_client.layout import EVALS
from osmosis_local_runner.api.usage import (
    Spread as Spread,
    UsageSummary as UsageSummary,
    number as _float,
)
from osmosis_local_runner.results.documents.documents import ResultsFile, Row, pass_at_key
from osmosis_local_runner.results.documents.records import AttemptRecord
from osmosis_local_runner.results.documents.sources import run_path
from osmosis_local_runner.results.statistics.scoring import counted_mean, pass_at_k

if TYPE_CHECKING:
    import pandas
    from typing_extensions import Unpack

    from osmosis_local_runner.results.reviews.reviews import Review, Said

#: where named runs live, under the project (the CLI's ``--name`` and ``name=``)
RUNS = EVALS


@dataclass(frozen=True)
class FnSummary:
    """One eval fn's statistics over the run: mean, spread, and pass@k as recorded."""

    name: str
    mean: float | None
    std: float | None
    min: float | None
    max: float | None
    #: k → pass@k, as the document's summary holds it (every k: :meth:`EvalResult.pass_at_k`)
    pass_at_k: dict[int, float] = field(default_factory=dict)


@dataclass(frozen=True)
class Summary:
    """A run's totals and its eval fns' statistics."""

    status: str  # finished | stopped
    total_rows: int
    total_runs: int
    errored_runs: int
    total_tokens: int
    duration_ms: float
    eval_fns: dict[str, FnSummary]
    #: tokens by kind, truncation and cost (None: a run kept before they were counted)
    usage: UsageSummary | None = None

    @property
    def mean(self) -> float | None:
        """The first eval fn's mean (most runs have one)."""
        first = next(iter(self.eval_fns.values()), None)
        return None if first is None else first.mean

    @property
    def errors(self) -> int:
        return self.errored_runs


@dataclass(frozen=True)
class Attempt:
    """One attempt at a row: its answer, scores, error, time and tokens."""

    run_index: int
    success: bool
    answer: str | None
    scores: dict[str, float]
    error: str | None
    duration_ms: float
    tokens: int
    model_tag: str | None = None  # "baseline" for a --baseline-model attempt
    skipped: bool = False
    transcript: str | None = field(default=None, repr=False)  # compact JSON text
    #: tokens by kind, finish reason, truncation and cost of the attempt's calls
    usage: dict[str, Any] | None = None

    @property
    def messages(self) -> list[dict[str, Any]]:
        """The final conversation (parsed on demand; empty when it was not kept)."""
        value = json.loads(self.transcript) if self.transcript else []
        return value if isinstance(value, list) else []


@dataclass(frozen=True)
class RowResult:
    """One dataset row: what was asked, what was expected, every attempt."""

    index: int
    prompt: str | None
    expected: str | None
    metadata: dict[str, Any]
    attempts: list[Attempt]


def _fn_summary(name: str, stats: dict[str, Any]) -> FnSummary:
    ks = {
        k: float(v) for key, v in stats.items() if (k := pass_at_key(key)) and _float(v) is not None
    }
    mean, std, low, high = (_float(stats.get(key)) for key in ("mean", "std", "min", "max"))
    return FnSummary(name, mean, std, low, high, pass_at_k=ks)


def _attempt(record: AttemptRecord) -> Attempt:
    return Attempt(
        record.run_index,
        record.success,
        record.answer,
        dict(record.scores),
        record.error,
        record.duration_ms,
        record.tokens,
        record.model_tag,
        record.skipped,
        record.transcript,
        record.usage,
    )


def _row(row: Row) -> RowResult:
    attempts = [_attempt(record) for record in row.runs]
    return RowResult(row.index, row.prompt(), row.expected, dict(row.metadata), attempts)


class EvalResult:
    """A run's results document, typed: ``name``, ``path``, ``status``, ``summary``,
    ``rows()`` (streamed), ``to_dict()`` (the whole document), ``to_pandas()``."""

    def __init__(self, path: Path, name: str | None = None, *, source: Path | None = None) -> None:
        self.path = Path(path)
        #: the document read (``path`` itself, or what an unfinished run's journal holds)
        self._source = source or self.path
        self._file = ResultsFile(self._source)  # checked: a hostile document is one clear error
        self.name = name or _name_of(self.path)

    def __repr__(self) -> str:
        mean = self.summary.mean
        shown = "-" if mean is None else f"{mean:.3f}"
        return f"EvalResult({self.name!r}, {self.status}, mean={shown}, path={str(self.path)!r})"

    @property
    def status(self) -> str:
        return str(self._file.summary.get("status") or "finished")

    @property
    def config(self) -> dict[str, Any]:
        return dict(self._file.config)

    @property
    def summary(self) -> Summary:
        raw = self._file.summary
        fns = raw.get("eval_fns") or {}
        return Summary(
            status=self.status,
            total_rows=int(raw.get("total_rows") or 0),
            total_runs=int(raw.get("total_runs") or 0),
            errored_runs=int(raw.get("errored_runs") or 0),
            total_tokens=int(raw.get("total_tokens") or 0),
            duration_ms=float(raw.get("total_duration_ms") or 0),
            eval_fns={
                str(k): _fn_summary(str(k), v) for k, v in fns.items() if isinstance(v, dict)
            },
            usage=UsageSummary.of(raw.get("usage")),
        )

    def rows(self, *, transcripts: bool = True) -> Iterator[RowResult]:
        """Every row, read from disk as you go (``transcripts=False``: faster, no
        conversations)."""
        for row in self._file.rows(transcripts=transcripts):
            yield _row(row)

    def pass_at_k(self, fn: str | None = None) -> dict[int, float]:
        """pass@k for every k ≤ n of one eval fn (the first by default), from the rows."""
        name = fn or (self._file.eval_fns[0] if self._file.eval_fns else "grader")
        threshold, n = self._file.pass_threshold, self._file.n
        counts = Counter(row.passes(name, threshold) for row in self._file.rows(transcripts=False))
        found: dict[int, float] = {}
        for k in range(1, n + 1):
            value = counted_mean(counts, partial(pass_at_k, k=k), k)
            if value is not None:
                found[k] = value
        return found

    def review(
        self, row: int | None = None, attempt: int | None = None, **said: Unpack[Said]
    ) -> Review:
        """Review the run: an attempt's ``verdict`` (or ``score``) with a ``reason`` — the
        grader was wrong —, a ``comment`` or a ``tag`` on a row (``row``) or on the run.
        Appended beside the run with its author (default: this user) and time; the
        results are never changed (``eval compare --reviewed`` and the report use it)."""
        from osmosis_local_runner.results.reviews.reviews import add_review, make_review

        done = make_review(row, attempt, **said)
        add_review(self.path, done)
        return done

    def reviews(self) -> list[Review]:
        """Every review of the run, in the order written."""
        from osmosis_local_runner.results.reviews.reviews import read_reviews

        return read_reviews(self.path)

    def agreement(
        self,
        fn: str | None = None,
        *,
        against: str | None = None,
        repeat: int | None = None,
        dataset: str | Path | None = None,
        cache: bool = False,
    ) -> dict[str, Any]:
        """The grader (eval fn ``fn``, default the first) against the people who reviewed
        the run: reviewed count, pass rates, raw agreement, Cohen's κ with its 95 %
        bootstrap interval, the confusion matrix — overall and per reviewer — and, where
        reviewers gave scores, Krippendorff's α of the scores (``osmosis eval
        agreement``'s document).

        ``against`` (``MODULE:FN`` or ``NAME=MODULE:FN``, a rubric grader too): grade only
        the reviewed attempts with that candidate and compare its agreement with this
        one's, paired (``"against"``). ``repeat``: grade the reviewed attempts that many
        times with the candidate — how often a judge agrees with itself
        (``"self_consistency"``). ``dataset``: the run's dataset, when it moved.
        ``cache``: the candidate's judge calls answered from the call cache when their
        input is the same (docs/cache.md)."""
        from osmosis_local_runner.api.agreeing import agreement

        return agreement(self._source, self.reviews(), fn, against, repeat, dataset, cache)

    def to_dict(self) -> dict[str, Any]:
        """The whole results document (as ``eval run --json`` and seed runs write it)."""
        return dict(json.loads(self._source.read_bytes()))

    def to_pandas(self) -> pandas.DataFrame:
        """One row per attempt, as ``attempts_df(self)`` (needs pandas: ``pip install
        'osmosis-client[pandas]'``)."""
        from osmosis_local_runner.results.statistics.frames import attempt_rows, columns_of, frame

        rows = attempt_rows([(self.name, self._file)], sorted(self._file.eval_fns))
        return frame(columns_of(rows), "pandas")


def _name_of(path: Path) -> str:
    """A run directory's name (``.osmosis/evals/NAME/results.json``), else the file's stem."""
    return path.parent.name if path.name == "results.json" else path.stem


def load_run(ref: str | Path, *, root: Path | None = None) -> EvalResult:
    """A run, by name (``.osmosis/evals/NAME``), run directory or results file. A run
    that has not written its document — running now, interrupted, killed — opens as what
    its journal holds (status ``running`` or ``stopped``)."""
    try:
        return EvalResult(run_path(ref, root=root))
    except InvalidInputError:
        found = _unfinished(ref, root)
        if found is None:
            raise
        return found


def _unfinished(ref: str | Path, root: Path | None) -> EvalResult | None:
    """An unfinished run's results so far, as a document in a temporary directory that
    lives as long as the result (nothing is written beside the run)."""
    import tempfile
    import weakref

    from osmosis_local_runner.results.documents.document import write_document
    from osmosis_local_runner.run.session.partial import journal_results
    from osmosis_local_runner.run.session.rundir import RunDirectory, check_name

    given = Path(ref)
    if given.is_dir():
        run = RunDirectory(given.parent, given.name)
    else:
        try:
            run = RunDirectory((root or Path.cwd()) / RUNS, check_name(str(ref)))
        except InvalidInputError:
            return None  # not a run's name: the refusal of the reference stands
    if run.results.exists():
        return None  # its document stands, whatever is wrong with it
    found = journal_results(run.results, "running" if run.held() else "stopped")
    if found is None:
        return None
    scratch = tempfile.TemporaryDirectory(prefix="osmosis-run-")
    source = Path(scratch.name) / "results.json"
    write_document(source, *found)
    result = EvalResult(run.results, run.name, source=source)
    weakref.finalize(result, scratch.cleanup)
    return result


__all__ = ["Attempt", "EvalResult", "FnSummary", "RowResult", "Summary", "load_run", "run_path"]
