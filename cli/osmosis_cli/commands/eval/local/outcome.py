"""What a local run shows when it ends: the summary table (or with ``--json`` the
published ``eval.run`` envelope), the failing rows, the commands that continue it, a
finished run shown again, and what became of its upload."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from osmosis_cli.terminal.commands import runnable

if TYPE_CHECKING:
    from osmosis_cli.terminal.output import Output
    from osmosis_local_runner.api.doors import RunResult, RunSession, UploadOutcome


def report_result(
    out: Output,
    result: RunResult,
    operation: str = "eval.run",
    adopted: Sequence[str] = (),
    **resource: Any,
) -> None:
    """The summary table (``--plain``: its rows), or with ``--json`` the operation
    envelope whose ``resource`` holds the published CLI's keys, ``resource`` and the whole
    results document (streamed from disk)."""
    summary = result.summary
    if out.json_mode:
        stopped = summary["status"] == "stopped"
        out.operation_with_file(
            operation,
            status="partial" if stopped else "success",
            resource={**run_resource(result), **resource},
            path=result.output,
            message=f"{summary['total_runs']} attempts ({summary['errored_runs']} errored)"
            + (" — stopped" if stopped else ""),
        )
        return
    from osmosis_cli.commands.eval.local.failures import rows_command, show_failures
    from osmosis_cli.commands.eval.results.slicing import show_run_slices

    _summary_table(out, summary, result.head.get("model_summaries"))
    show_run_slices(out, summary.get("slices"))
    failing, shown = show_failures(out, result.output)  # each error once, with its row
    out.info(f"Results written to {result.output}")
    resume = resource.get("resume_command") or f"add --resume -o {result.output}"
    if summary["status"] == "stopped":
        out.info(f"Resume with: {resume}")
        return
    if summary["errored_runs"] and resource.get("retry_command"):
        out.info(f"Run the errored attempts again: {resource['retry_command']}")
    again = rows_command(out, failing, adopted)
    if again is not None:
        out.info(f"Run the rows that did not pass again: {again}")
    _report_errors(out, result, shown)
    if resource.get("run_name") and "upload" not in resource:  # finished, not uploaded
        out.info("Upload: " + runnable("osmosis", "eval", "upload", resource["run_name"]))


def _summary_table(
    out: Output, summary: dict[str, Any], per_model: list[dict[str, Any]] | None = None
) -> None:
    """The statistics per eval fn; with a baseline model, one table per model (as 0.2)."""
    for entry in per_model or [summary]:
        if per_model:  # a line naming each model carries its own results (as 0.2's did)
            out.print(f"{entry['model']} ({entry['model_tag']}): {_headline(entry['eval_fns'])}")
        _fn_table(out, entry["eval_fns"])
        if per_model:
            out.print(
                f"  {entry['total_runs']:,} attempts ({entry['errored_runs']:,} errored), "
                f"{entry['total_tokens']:,} tokens"
            )
    seconds = summary["total_duration_ms"] / 1000
    out.print(
        f"{summary['total_rows']:,} rows, {summary['total_runs']:,} attempts "
        f"({summary['errored_runs']:,} errored), {summary['total_tokens']:,} tokens, "
        f"{seconds:.1f}s — {summary['status']}"
    )
    from osmosis_local_runner.results.statistics.usage import usage_lines

    for line in usage_lines(summary.get("usage")):  # by kind, truncation, cost
        out.print(line)


def _headline(fns: dict[str, Any]) -> str:
    """``mean 0.62, pass@1 0.60`` of each eval fn (named when there are several)."""
    parts = []
    for name, stats in fns.items():
        label = f"{name.rsplit(':', 1)[-1]} " if len(fns) > 1 else ""
        mean, first = _fmt(stats.get("mean")), _fmt(stats.get("pass_at_1"))
        parts.append(f"{label}mean {mean}, pass@1 {first}")
    return "; ".join(parts) or "no scores"


def _fn_table(out: Output, fns: dict[str, Any]) -> None:
    ks = sorted(
        {int(k.split("_")[-1]) for stats in fns.values() for k in stats if k.startswith("pass_at_")}
    )
    columns = ["eval fn", "mean", "std", "min", "max", *[f"pass@{k}" for k in ks]]
    rows = [
        [
            name,
            _with_error(stats),
            *(_fmt(stats[key]) for key in ("std", "min", "max")),
            *(_fmt(stats.get(f"pass_at_{k}")) for k in ks),
        ]
        for name, stats in fns.items()
    ]
    out.table(columns, rows)


def _with_error(stats: dict[str, Any]) -> str:
    """``0.783 ± 0.090``: the mean and the half-width of its 95 % interval (rows as
    clusters), when the run has one."""
    from osmosis_local_runner.results.statistics.intervals import half_width_text

    return _fmt(stats["mean"]) + half_width_text(stats)


def report_document(
    out: Output, path: Path, *, message: str, next_steps: list[dict[str, Any]]
) -> None:
    """A results document already on disk, shown as a run's result (nothing ran)."""
    from osmosis_local_runner.results.documents.documents import ResultsFile

    summary = ResultsFile(path).summary
    resource = {
        "output_path": str(path.parent),
        "total_work_items": summary.get("total_runs"),
        "dispatched": 0,
        "cancelled": False,
    }
    if out.json_mode:
        out.operation_with_file(
            "eval.run", status="success", resource=resource, path=path, message=message
        )
        return
    _summary_table(out, summary)
    out.info(message)
    for step in next_steps:
        out.info(f"  {step['description']}")


def run_resource(result: RunResult) -> dict[str, Any]:
    """The published ``eval run`` resource keys a results document answers."""
    summary = result.summary
    total, errored = summary["total_runs"], summary["errored_runs"]
    return {
        "output_path": str(result.output),
        "total_work_items": total,
        "succeeded": total - errored,
        "failed": errored,
        "cancelled": summary["status"] == "stopped",
        "duration_ms": summary["total_duration_ms"],
    }


def _report_errors(out: Output, result: RunResult, shown: set[int]) -> None:
    """Errors of the rows not shown above (each error once), in row order."""
    from osmosis_client._redact import safe_text

    errors = sorted(e for e in result.errors() if e[0] not in shown)
    if errors:
        out.info(f"Errors ({min(3, len(errors))} of {len(errors):,}):")
    for row_index, run_index, error in errors[:3]:
        out.info(f"  row {row_index} run {run_index}: {safe_text(error)}")
    if len(errors) > 3:
        out.info(f"  … {len(errors) - 3} more errors in {result.output}")


def _fmt(value: Any) -> str:
    from osmosis_local_runner.results.statistics.scoring import score_text

    return score_text(value, "")


def report_finished(out: Output, session: RunSession) -> None:
    """A finished run named again: nothing ran; its results are shown again."""
    run = session.run
    assert run is not None
    message = f"Run {run.name!r} was already complete; nothing ran: {run.path}"
    steps = [
        {"action": "eval_run", "description": "Start a new run beside it: drop --name"},
        {"action": "eval_run", "description": "Run it again from scratch: add --fresh"},
        {"action": "eval_run", "description": "Run its failures again: add --retry-failed"},
        {
            "action": "eval_run",
            "description": "Top it up (only what is missing runs): add --resume and a "
            "larger --n, --limit or --rows",
        },
    ]
    report_document(out, run.results, message=message, next_steps=steps)


def named_resource(out: Output, session: RunSession) -> dict[str, Any]:
    """The published ``eval.run`` keys of a named run (after its projections), with the
    commands that continue it and what became of its upload."""
    from osmosis_local_runner.api.doors import config_path

    run, files = session.run, session.files
    assert run is not None and files is not None
    where = config_path(session.config) if session.config else None
    config = where or session.request.config
    command = runnable("osmosis", "eval", "run", config, "--name", run.name)
    resource = {
        "run_name": run.name,
        "local_run_id": files.local_run_id,
        "output_path": str(run.path),
        "results_path": str(run.results),
        "metrics": files.metrics,
        "failed_rows": files.failed_rows[:100],
        "resume_command": command,
        "retry_command": f"{command} --retry-failed",
    }
    if session.upload is not None:
        resource.update(_upload_keys(out, session.upload, run.name))
    return resource


def _upload_keys(out: Output, upload: UploadOutcome, name: str) -> dict[str, Any]:
    """``eval run --upload``: the upload's line (a failure is a warning: the run itself
    is done and kept) and its keys."""
    if upload.status == "skipped":
        out.warn(f"not uploaded: {upload.reason}", code="NOT_UPLOADED")
        return {"upload": {"status": "skipped"}}
    if upload.status == "failed":
        assert upload.error is not None
        again = runnable("osmosis", "eval", "upload", name)
        retry = upload.error.hint or f"retry it with `{again}`"
        out.warn(f"the upload failed ({upload.error.message}); {retry}", code="UPLOAD_FAILED")
        return {"upload": {"status": "failed", "error": upload.error.message}}
    done = upload.session
    assert done is not None
    out.info(f"Uploaded as {done.eval_run_name}")
    keys = ("session_id", "eval_run_id", "eval_run_name", "status", "expected_files")
    return {
        "upload": {k: getattr(done, k) for k in (*keys, "uploaded_files")},
        "platform_url": done.platform_url,
    }
