"""The results document of cli.md: built from attempt records, written atomically (0600:
it holds prompts and model outputs)."""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from osmosis_client._fs import atomic_write_chunks, open_regular
from osmosis_local_runner.results.documents.records import BASELINE, AttemptRecord
from osmosis_local_runner.results.statistics.scoring import (
    describe,
    ks_for,
    mean_pass_at_k,
    pass_at_k,
    passed,
)
from osmosis_local_runner.results.statistics.usage import usage_summary

RESULTS_MODE = 0o600
#: how every results document starts (document_chunks): how one of ours is recognized
DOCUMENT_START = b'{\n  "config": '


def is_results_document(path: Path) -> bool:
    try:
        with open_regular(path, follow=True) as handle:
            return handle.read(len(DOCUMENT_START)) == DOCUMENT_START
    except OSError:
        return False


ROWS_MARK = b',\n  "rows": ['


def read_head(path: Path, limit: int = 1 << 20) -> dict[str, Any] | None:
    """A results document's config and summary, without reading its rows (None when
    ``path`` is not one of ours)."""
    if not is_results_document(path):
        return None
    try:
        with open_regular(path, follow=True) as handle:
            start = handle.read(limit)
    except OSError:
        return None
    end = start.find(ROWS_MARK)
    if end < 0:
        return None
    try:
        head = json.loads(start[:end] + b"\n}")
    except ValueError:
        return None
    return head if isinstance(head, dict) else None


def finished(path: Path) -> bool:
    head = read_head(path)
    summary = head.get("summary") if head else None
    return isinstance(summary, dict) and summary.get("status") == "finished"


def check_results_path(path: Path, inputs: Mapping[str, Path]) -> None:
    """Before anything runs: the results path must be creatable, and if it exists, a
    results document of ours — never a directory or one of the run's input files."""
    from osmosis_client.errors import InvalidInputError

    def refuse(message: str, hint: str = "choose another results path") -> InvalidInputError:
        return InvalidInputError(message, hint=hint, code="RESULTS_PATH", data={"path": str(path)})

    if path.is_dir():
        raise refuse(
            f"the results path {path} is a directory", "name a file, e.g. DIR/results.json"
        )
    for what, source in inputs.items():
        with contextlib.suppress(OSError):
            if path.exists() and source.exists() and os.path.samefile(path, source):
                raise refuse(f"the results path {path} is the {what}: it would be overwritten")
    if path.exists() and not is_results_document(path):
        raise refuse(f"{path} exists and is not an osmosis results document (never overwritten)")
    parent = next((p for p in (path.parent, *path.parent.parents) if p.exists()), None)
    if parent is not None and (not parent.is_dir() or not os.access(parent, os.W_OK | os.X_OK)):
        raise refuse(f"cannot create {path}: {parent} is not a writable directory")


def summarize(
    rows: Mapping[int, Sequence[AttemptRecord]],
    eval_fns: Sequence[str],
    *,
    n: int,
    pass_threshold: float,
    model_tag: str | None = None,
    cluster_by: str | None = None,
) -> dict[str, Any]:
    """Totals, and per eval fn: mean, std, min, max and pass@k — every statistic of a fn
    from the same per-attempt scores. Only the attempts of ``model_tag`` (None: the
    run's model) count; skipped attempts (``remove_sample``) are counted, not scored.
    ``cluster_by``: a dataset column whose rows of one value are one cluster of the
    mean's interval (else each row is its own)."""
    # copies only when something is left out: a 100 k-row run keeps its peak memory
    if any(r.model_tag != model_tag for runs in rows.values() for r in runs):
        rows = {
            index: kept
            for index, runs in rows.items()
            if (kept := [r for r in runs if r.model_tag == model_tag])
        }
    skipped = sum(r.skipped for runs in rows.values() for r in runs)
    scored = rows
    if skipped:
        scored = {
            index: kept
            for index, runs in rows.items()
            if (kept := [r for r in runs if not r.skipped])
        }
    labels = _cluster_labels(scored, cluster_by) if cluster_by else None
    per_fn = {fn: _fn_statistics(scored, fn, n, pass_threshold, labels) for fn in eval_fns}
    all_runs = [r for runs in rows.values() for r in runs]
    found = {
        "total_rows": len(rows),
        "total_runs": len(all_runs),
        "errored_runs": sum(not r.success for r in all_runs),
        "skipped_runs": skipped,
        "retried_runs": sum(bool((r.extra or {}).get("retries")) for r in all_runs),
        # neither errored nor skipped, yet no eval fn gave it a score (each one raised)
        "unscored_runs": sum(
            r.success and not r.skipped and _every_fn_raised(r, eval_fns) for r in all_runs
        ),
        "eval_fns": per_fn,
        "total_tokens": sum(r.tokens for r in all_runs),
    }
    usage = usage_summary(r.usage for r in all_runs)
    if usage is not None:
        found["usage"] = usage
    return found


def _cluster_labels(rows: Mapping[int, Sequence[AttemptRecord]], column: str) -> list[str]:
    """Each row's value of ``column`` (a row without it is its own cluster)."""
    from osmosis_local_runner.results.statistics.slices import MISSING, slice_value

    labels = []
    for index, runs in rows.items():
        text = next((r.row_facts for r in runs if r.row_facts), None)
        metadata = json.loads(text).get("metadata") if text else None
        value = slice_value(metadata if isinstance(metadata, dict) else None, column)
        labels.append(f"\0row {index}" if value == MISSING else value)
    return labels


def _fn_statistics(
    scored: Mapping[int, Sequence[AttemptRecord]],
    fn: str,
    n: int,
    pass_threshold: float,
    labels: Sequence[str] | None = None,
) -> dict[str, Any]:
    """One eval fn's statistics: mean, std, min, max, pass@k — and their uncertainty:
    the mean's standard error and 95 % interval with rows as clusters, pass@k's bootstrap
    interval over rows (``ci_pass_at_k``), the variance between and within rows."""
    from osmosis_local_runner.results.statistics.intervals import (
        mean_interval,
        pass_at_k_interval,
        variance_split,
    )

    by_row = [[r.scores.get(fn, 0.0) for r in runs] for runs in scored.values()]
    stats: dict[str, Any] = describe([s for row in by_row for s in row])
    stats.update(mean_interval(by_row, stats["mean"], labels))
    counts = [
        (len(runs), sum(passed(r, fn, pass_threshold) for r in runs)) for runs in scored.values()
    ]
    intervals: dict[str, list[float]] = {}
    for k in ks_for(n):
        stats[f"pass_at_{k}"] = mean_pass_at_k(counts, k)
        found = pass_at_k_interval([pass_at_k(a, c, k) for a, c in counts if a >= k])
        if found is not None:
            intervals[str(k)] = found
    stats["ci_pass_at_k"] = intervals
    split = variance_split(by_row)
    if split is not None:
        stats["variance"] = split
    return stats


def _every_fn_raised(record: AttemptRecord, eval_fns: Sequence[str]) -> bool:
    errors = record.fn_errors or {}
    return bool(errors) and bool(eval_fns) and all(fn in errors for fn in eval_fns)


def document_head(
    config: Mapping[str, Any],
    rows: Mapping[int, Sequence[AttemptRecord]],
    eval_fns: Sequence[str],
    *,
    n: int,
    pass_threshold: float,
    duration_ms: int,
    status: str,
    baseline: str | None = None,
    stopped_reason: str | None = None,
) -> dict[str, Any]:
    """The document's ``config`` and ``summary`` (``stopped_early``: the run did not
    finish; ``stopped_reason``: why — ``budget``, ``deadline``, ``interrupted``…).
    With a ``baseline`` model, as 0.2 wrote it: ``model_summaries`` per model,
    the statistics of ``summary`` the run's model's, its counts over both models."""
    cluster_by = config.get("cluster_by")
    cluster_by = cluster_by if isinstance(cluster_by, str) else None
    summary = summarize(rows, eval_fns, n=n, pass_threshold=pass_threshold, cluster_by=cluster_by)
    summary["total_duration_ms"] = duration_ms
    summary["status"] = status
    summary["stopped_early"] = status == "stopped"
    if status == "stopped" and stopped_reason:
        summary["stopped_reason"] = stopped_reason
    column = config.get("slice_by")
    if isinstance(column, str) and rows:
        from osmosis_local_runner.results.statistics.slices import NoSuchColumn, slices_of_records

        with contextlib.suppress(NoSuchColumn):  # checked before the run: never lose it here
            sliced = slices_of_records(rows, column, eval_fns, pass_threshold)
            summary["slices"] = sliced.to_json(eval_fns, n)
    head: dict[str, Any] = {"config": dict(config), "summary": summary}
    if baseline is not None:
        models = {None: str(config.get("model")), BASELINE: baseline}
        per_model = model_summaries(rows, eval_fns, models, n=n, pass_threshold=pass_threshold)
        for key in ("total_runs", "errored_runs", "total_tokens"):
            summary[key] = sum(m[key] for m in per_model)
        usage = usage_summary(r.usage for runs in rows.values() for r in runs)
        if usage is not None:  # what both models' attempts used
            summary["usage"] = usage
        head["model_summaries"] = per_model
    return head


def model_summaries(
    rows: Mapping[int, Sequence[AttemptRecord]],
    eval_fns: Sequence[str],
    models: Mapping[str | None, str],
    *,
    n: int,
    pass_threshold: float,
) -> list[dict[str, Any]]:
    """``[{model, model_tag, total_runs, total_tokens, total_duration_ms, eval_fns}]`` —
    one entry per model of a ``--baseline-model`` run (tags ``primary``, ``baseline``)."""
    out = []
    for tag, model in models.items():
        summary = summarize(rows, eval_fns, n=n, pass_threshold=pass_threshold, model_tag=tag)
        runs = [r for rs in rows.values() for r in rs if r.model_tag == tag]
        out.append(
            {
                "model": model,
                "model_tag": tag or "primary",
                "total_runs": summary["total_runs"],
                "errored_runs": summary["errored_runs"],
                "total_tokens": summary["total_tokens"],
                "total_duration_ms": round(sum(r.duration_ms for r in runs)),
                "eval_fns": summary["eval_fns"],
                **({"usage": summary["usage"]} if "usage" in summary else {}),
            }
        )
    return out


def build_document(
    head: Mapping[str, Any], rows: Mapping[int, Sequence[AttemptRecord]]
) -> dict[str, Any]:
    """The whole document as one object (small runs, tests; large runs are streamed)."""
    tag_primary = "model_summaries" in head
    return {
        **head,
        "rows": [
            {
                "row_index": index,
                "row_digest": rows[index][0].row_digest,
                **_facts(rows[index]),
                "runs": [
                    r.run_json(tag_primary=tag_primary)
                    for r in sorted(rows[index], key=lambda r: r.run_index)
                ],
            }
            for index in sorted(rows)
        ],
    }


def _facts(records: Sequence[AttemptRecord]) -> dict[str, Any]:
    """The row's prompt, expected answer and metadata (as its first record knows them)."""
    text = next((r.row_facts for r in records if r.row_facts), None)
    return json.loads(text) if text else {}


def error_verdict(summary: Mapping[str, Any], max_error_rate: float | None) -> str | None:
    """Why a finished run counts as failed (every attempt errored, no attempt got a score
    — errored, or every eval fn raised —, or more than ``max_error_rate`` errored), or None."""
    total, errored = summary.get("total_runs") or 0, summary.get("errored_runs") or 0
    if not total:
        return None
    if errored == total:
        return f"every attempt errored ({errored} of {total})"
    unscored = errored + (summary.get("unscored_runs") or 0)
    if unscored and unscored == total - (summary.get("skipped_runs") or 0):
        return (
            f"no attempt got a score: {errored} errored and every eval fn raised on the "
            f"other {unscored - errored}"
        )
    if max_error_rate is not None and errored / total > max_error_rate:
        return (
            f"{errored} of {total} attempts errored ({errored / total:.1%}), "
            f"above the maximum error rate {max_error_rate:g}"
        )
    return None


def document_chunks(
    head: Mapping[str, Any], rows: Mapping[int, Sequence[AttemptRecord]]
) -> Iterator[bytes]:
    """The document as strict JSON (no NaN/Infinity), piece by piece: the head indented,
    then one row per line — readable, grep-able, written by the C encoder, and never
    held in memory whole."""
    parts = [
        f"  {json.dumps(k)}: {json.dumps(v, indent=2, allow_nan=False)}".replace("\n", "\n  ")
        for k, v in head.items()
    ]
    yield ("{\n" + ",\n".join(parts) + ',\n  "rows": [').encode()
    tag_primary = "model_summaries" in head  # a baseline's run: 0.2 tagged both models
    for i, index in enumerate(sorted(rows)):
        ordered = sorted(rows[index], key=lambda r: r.run_index)
        runs = ", ".join(r.run_text(tag_primary=tag_primary) for r in ordered)
        digest = json.dumps(rows[index][0].row_digest)
        facts = next((r.row_facts for r in ordered if r.row_facts), None)
        known = f", {facts[1:-1]}" if facts else ""  # spliced, never re-encoded
        line = f'{{"row_index": {index}, "row_digest": {digest}{known}, "runs": [{runs}]}}'
        yield (("\n    " if i == 0 else ",\n    ") + line).encode()
    yield ("\n  ]\n}\n" if rows else "]\n}\n").encode()


def write_document(
    path: Path, head: Mapping[str, Any], rows: Mapping[int, Sequence[AttemptRecord]]
) -> None:
    """All or nothing: temp file + fsync + rename."""
    atomic_write_chunks(path, document_chunks(head, rows), mode=RESULTS_MODE)
