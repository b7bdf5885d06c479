"""Run history: every named run under a project's ``.osmosis/evals/`` — what ``eval list
--local`` and ``eval info NAME --local`` show, newest first."""

from __future__ import annotations

import contextlib
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from osmosis_client._fs import open_regular
from osmosis_client.errors import InvalidInputError, OsmosisError
from osmosis_local_runner.api.results import RUNS
from osmosis_local_runner.results.documents.documents import ResultsFile
from osmosis_local_runner.run.session.journal import journal_path
from osmosis_local_runner.run.session.rundir import RunDirectory, check_name, read_json


@dataclass(frozen=True)
class RunInfo:
    """One run at a glance (the list's columns). A stopped run (interrupted, or killed
    before it wrote its document) says how far it got — ``attempts`` of
    ``total_attempts``, the ``mean`` so far — and ``config_path`` + ``name`` continue it."""

    name: str
    status: str  # running | finished | stopped
    model: str | None
    rows: int | None
    attempts: int | None
    mean: float | None
    pass_at_1: float | None
    started: str | None
    duration_ms: float | None
    path: str
    total_attempts: int | None = None  # the rows chosen × n (from the manifest)
    config_path: str | None = None  # the eval config it ran, relative to the project
    #: what its model calls used: output tokens (reasoning among them), the share of
    #: attempts cut short, the cost (None: not counted, or a price not known)
    output_tokens: int | None = None
    reasoning_tokens: int | None = None
    truncation_rate: float | None = None
    cost_usd: float | None = None
    #: runs that measure the same thing — one config, one dataset (by digest), the same
    #: eval fns — share it: the viewer plots a group's runs together, never others
    group: str | None = None
    #: what people said of the run: its tags (a run's or its rows'), how many reviews
    tags: list[str] = field(default_factory=list)
    reviews: int = 0
    #: where it was sent (``--log-to``, ``eval push``): destination → ``logged`` (or its
    #: page's URL), ``failed``, ``skipped``
    trackers: dict[str, str] = field(default_factory=dict)
    #: why a stopped run stopped (``budget``, ``deadline``, ``interrupted``…; None: not
    #: recorded) and the cost budget it was held to (kept: a resume keeps it)
    stopped_reason: str | None = None
    max_cost: float | None = None
    #: what made it unreadable (status ``unreadable``): the rest of the project is listed
    problem: str | None = None
    #: where it stands in a training (recorded, never read from its name; None: in no
    #: series, so in no sweep) and the weights that answered, when known
    series: str | None = None
    step: int | None = None
    weights: dict[str, Any] | None = None
    #: the first eval fn's mean: its 95 % interval (rows as clusters) and where its
    #: uncertainty comes from (docs/statistics.md)
    ci_low: float | None = None
    ci_high: float | None = None
    variance: dict[str, Any] | None = None
    #: each time the run grew (more attempts per row, more rows): what changed, and when
    top_ups: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def list_runs(root: Path | None = None) -> list[RunInfo]:
    """Every run under ``root/.osmosis/evals`` (``root``: the current directory), newest
    first; a directory that holds no run of ours is left out."""
    runs = (root or Path.cwd()) / RUNS
    if not runs.is_dir():
        return []
    found = []
    for path in runs.iterdir():
        if path.is_dir() and not path.name.startswith("."):
            info = _readable_info(RunDirectory(runs, path.name))
            if info is not None:
                found.append(info)
    return sorted(found, key=lambda i: (i.started or "", i.name), reverse=True)


def _readable_info(run: RunDirectory) -> RunInfo | None:
    """A run at a glance; one whose files nobody can read (planted, broken by hand, from a
    hostile peer) is listed as ``unreadable`` — never the whole project's failure."""
    try:
        return _info(run)
    except Exception as exc:  # any one run's files are someone else's input
        return _unreadable(run, f"{type(exc).__name__}: {exc}"[:300])


def _unreadable(run: RunDirectory, problem: str) -> RunInfo:
    return RunInfo(
        run.name,
        "unreadable",
        None,
        None,
        None,
        None,
        None,
        None,
        None,
        str(run.path),
        problem=problem,
    )


def run_info(name: str, root: Path | None = None) -> RunInfo:
    """One run by name."""
    run = RunDirectory((root or Path.cwd()) / RUNS, check_name(name))
    info = _readable_info(run)
    if info is None:
        import difflib

        names = [p.name for p in run.path.parent.iterdir()] if run.path.parent.is_dir() else []
        close = difflib.get_close_matches(name, [n for n in names if not n.startswith(".")], 1)
        mean = f"did you mean {close[0]!r}? " if close else ""
        raise InvalidInputError(
            f"no local run named {name!r} under {RUNS}",
            hint=f"{mean}list the local runs to see their names",
            code="RUN_NOT_FOUND",
            data={"did_you_mean": close[0] if close else None},
        )
    return info


def _info(run: RunDirectory) -> RunInfo | None:
    manifest = read_json(run.manifest_path) or {}
    inputs = manifest.get("inputs") if isinstance(manifest.get("inputs"), dict) else {}
    provenance = manifest.get("provenance") if isinstance(manifest.get("provenance"), dict) else {}
    assert isinstance(inputs, dict) and isinstance(provenance, dict)
    dataset = inputs.get("dataset") if isinstance(inputs.get("dataset"), dict) else {}
    assert isinstance(dataset, dict)
    facts = _Facts(
        model=_text(inputs.get("model_path")),
        started=_text(manifest.get("created_at")),
        total=_total(inputs),
        config=_text(provenance.get("config_path")),
        dataset=(_text(dataset.get("sha256")) or "")[:12] or None,
        training={key: inputs[key] for key in ("series", "step", "weights") if key in inputs},
    )
    head = _document_head(run)
    if head is None:
        from osmosis_local_runner.run.session.partial import journal_results

        found = journal_results(run.results, "stopped")
        journal = journal_path(run.results)
        if found is None and not journal.is_file() and not manifest:
            if run.results.is_file():  # a document nobody can read is still a run
                return _unreadable(run, "its results document cannot be read")
            return None
        # a journal this version cannot read (another version's): its lines, at least
        head = found[0] if found is not None else {"summary": {"total_runs": _lines(journal)}}
    return _from_head(run, head, facts)


@dataclass(frozen=True)
class _Facts:
    model: str | None
    started: str | None
    total: int | None
    config: str | None
    dataset: str | None
    training: dict[str, Any] = field(default_factory=dict)


def _document_head(run: RunDirectory) -> dict[str, Any] | None:
    if not run.results.is_file():
        return None
    with contextlib.suppress(OsmosisError, ValueError, OSError):
        document = ResultsFile(run.results)  # checked: a hostile document is skipped
        return {"config": dict(document.config), "summary": dict(document.summary)}
    return None


def _from_head(run: RunDirectory, head: dict[str, Any], facts: _Facts) -> RunInfo:
    summary, config = head.get("summary") or {}, head.get("config") or {}
    fns = summary.get("eval_fns") or {}
    first: dict[str, Any] = next(iter(fns.values()), {}) if isinstance(fns, dict) else {}
    status = "running" if run.held() else str(summary.get("status") or "stopped")
    found = summary.get("usage")
    usage: dict[str, Any] = found if isinstance(found, dict) else {}
    return RunInfo(
        run.name,
        status,
        _text(config.get("model")) or facts.model,
        _int(summary.get("total_rows")),
        _int(summary.get("total_runs")),
        _number(first.get("mean")),
        _number(first.get("pass_at_1")),
        facts.started,
        _number(summary.get("total_duration_ms")),
        str(run.path),
        total_attempts=facts.total,
        config_path=facts.config,
        output_tokens=_int(usage.get("output_tokens")),
        reasoning_tokens=_int(usage.get("reasoning_tokens")),
        truncation_rate=_number(usage.get("truncation_rate")),
        cost_usd=_cost(usage.get("cost_usd")),
        group=_group(facts, fns),
        **_reviewed(run),
        trackers=_tracked(run),
        stopped_reason=_text(summary.get("stopped_reason")),
        max_cost=_number(config.get("max_cost")),
        **_training(config, facts),
        ci_low=_number(first.get("ci_low")),
        ci_high=_number(first.get("ci_high")),
        variance=first.get("variance") if isinstance(first.get("variance"), dict) else None,
        top_ups=[t for t in config.get("top_ups") or [] if isinstance(t, dict)][:100],
    )


def _training(config: dict[str, Any], facts: _Facts) -> dict[str, Any]:
    """Series, step and weights: the document's, else the manifest's (a run killed
    before it wrote its document)."""
    found = {key: config.get(key, facts.training.get(key)) for key in ("series", "step", "weights")}
    step = found["step"]
    return {
        "series": _text(found["series"]),
        "step": step if isinstance(step, int) and not isinstance(step, bool) else None,
        "weights": found["weights"] if isinstance(found["weights"], dict) else None,
    }


def _tracked(run: RunDirectory) -> dict[str, str]:
    from osmosis_client._redact import redact_url, redact_urls_in
    from osmosis_local_runner.trackers.logging import read_record

    # masked again as shown: a record written by an older version may hold a password
    return {
        redact_urls_in(str(where)): redact_url(str(done.get("url") or done.get("status")))
        for where, done in read_record(run.results).items()
        if isinstance(done, dict)
    }


def _reviewed(run: RunDirectory) -> dict[str, Any]:
    from osmosis_local_runner.results.reviews.reviews import read_reviews

    said = read_reviews(run.results)
    return {"tags": sorted({r.tag for r in said if r.tag}), "reviews": len(said)}


def _group(facts: _Facts, fns: Any) -> str:
    """``configs/eval/x.toml · data 2c5666056fc2 · grader``: what a run measured."""
    names = ", ".join(sorted(map(str, fns))) if isinstance(fns, dict) and fns else "?"
    return f"{facts.config or 'no config'} · data {facts.dataset or '?'} · {names}"


def _lines(journal: Path) -> int | None:
    """The attempts a journal holds by its lines (a header, then one per attempt)."""
    try:
        with open_regular(journal) as handle:
            return max(0, sum(1 for _ in handle) - 1)
    except OSError:
        return None


def _total(inputs: dict[str, Any]) -> int | None:
    """The attempts a run set out to make: its chosen rows × n."""
    from osmosis_local_runner.run.request.row_lists import count_rows

    rows = (inputs.get("dataset") or {}).get("selected_source_rows")
    n = inputs.get("n")
    if not isinstance(rows, str) or not isinstance(n, int):
        return None
    try:
        return count_rows(rows) * n if rows else 0
    except OsmosisError:
        return None


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _int(value: Any) -> int | None:
    """A count a float holds exactly (what a page's script can show), else None."""
    from osmosis_client.llm.usage import MAX_COUNT

    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_COUNT:
        return value
    return None


def _cost(value: Any) -> float | None:
    found = _number(value)
    return found if found is not None and found >= 0 else None


def _number(value: Any) -> float | None:
    """A finite number, else None (a document may hold anything)."""
    from osmosis_client.llm.usage import amount_of

    return amount_of(value)
