"""What a run writes down: one attempt as a record (graded here when the rollout did not
grade itself; the transcript kept as strict JSON), and the results document's head."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any

from osmosis_client._redact import redact_url
from osmosis_client.rollout import last_assistant_content
from osmosis_local_runner.results.documents.document import document_head
from osmosis_local_runner.results.documents.records import BASELINE, AttemptRecord, compact
from osmosis_local_runner.run.execute.dataset import DatasetInfo, Row
from osmosis_local_runner.run.execute.grading import grade
from osmosis_local_runner.run.kinds import Outcome
from osmosis_local_runner.run.request.spec import RunPlan, RunSpec


async def record_attempt(
    spec: RunSpec,
    fn_names: Sequence[str],
    row: Row,
    run_index: int,
    outcome: Outcome,
    started: float,
) -> AttemptRecord:
    """The attempt's record: its scores (the rollout's, or the eval fns'), error, answer,
    transcript, tokens and duration."""
    error = outcome.error
    fn_errors: dict[str, str] = {}
    if error is not None:
        scores = {name: 0.0 for name in fn_names}
    elif outcome.skipped:
        scores = {}
    elif outcome.scores is not None:
        scores = outcome.scores
    else:
        grading = time.perf_counter()
        grades = await grade(
            spec.eval_fns,
            outcome.messages,
            row,
            run_index,
            timeout=spec.grader_timeout_s,
            raw=spec.raw_answers,
        )
        # when the grading ran within the attempt (its timeline shows it beside the calls)
        outcome.extra["grading"] = {
            "at_ms": round((grading - started) * 1000, 3),
            "duration_ms": round((time.perf_counter() - grading) * 1000, 3),
        }
        scores, fn_errors, error = grades.scores, grades.fn_errors, grades.error
        if grades.explanations:  # what the grader said besides its score
            outcome.extra["explanations"] = grades.explanations
    transcript = None
    if spec.transcripts:
        try:
            transcript = compact(outcome.messages)
        except (TypeError, ValueError, RecursionError) as exc:
            error = error or f"workflow: the conversation is not JSON ({exc})"[:1000]
            scores = {name: 0.0 for name in fn_names}
    return AttemptRecord(
        row_index=row.index,
        run_index=run_index,
        row_digest=row.digest,
        success=error is None,
        scores=scores,
        duration_ms=round((time.perf_counter() - started) * 1000, 3),
        tokens=outcome.tokens,
        error=error,
        fn_errors=fn_errors or None,
        answer=last_assistant_content(outcome.messages),
        extra=outcome.extra or None,
        transcript=transcript,
        skipped=outcome.skipped and error is None,
        row_facts=row.facts(),
    )


def results_head(
    spec: RunSpec,
    kind: str,
    plan: RunPlan,
    info: DatasetInfo,
    models: Mapping[str | None, str],
    base_url: str | None,
    records: Mapping[int, list[AttemptRecord]],
    fn_names: list[str],
    *,
    status: str,
    duration_ms: int,
    stopped_reason: str | None = None,
    top_ups: Sequence[Mapping[str, Any]] = (),
) -> dict[str, Any]:
    """The document's head: the run's settings (``config``) and its ``summary``; with a
    baseline model, ``model_summaries`` too. ``models``: tag → model path; ``top_ups``:
    what each growth of the run changed, and when."""
    config: dict[str, Any] = {
        "model": models[None],
        "n_runs": spec.n,
        "pass_threshold": spec.pass_threshold,
        "eval_fns": fn_names,
        "limit": spec.limit,
        "batch_size": spec.batch_size,
        "seed": spec.seed,
        "dataset": str(spec.dataset),
        "sampled": plan.sampled,
        "total_dataset_rows": info.total_rows,
        "base_url": redact_url(base_url) if base_url else None,
        "agent_workflow_timeout_s": spec.agent_workflow_timeout_s,
        "grader_timeout_s": spec.grader_timeout_s,
        "rollout_mode": kind,
    }
    if "config" in spec.inputs:  # what the run is called where results are shown
        config["config_name"] = spec.inputs["config"].stem
    config.update(_given(spec))
    if BASELINE in models:
        config["baseline_model"] = models[BASELINE]
    if top_ups:  # the run grew: its settings were others before
        config["top_ups"] = [dict(t) for t in top_ups]
    return document_head(
        config,
        records,
        fn_names,
        n=spec.n,
        pass_threshold=spec.pass_threshold,
        duration_ms=duration_ms,
        status=status,
        stopped_reason=stopped_reason,
        baseline=models.get(BASELINE),
    )


def _given(spec: RunSpec) -> dict[str, Any]:
    """The settings a document records only when the run had them: an offset, the
    columns it is sliced and clustered by, the sampling sent with every model call (as
    sent), the budget it was held to, where it stands in a training."""
    config: dict[str, Any] = {}
    if spec.offset:
        config["offset"] = spec.offset
    if spec.slice_by:
        config["slice_by"] = spec.slice_by
    if spec.cluster_by:
        config["cluster_by"] = spec.cluster_by
    if spec.sampling:
        config["sampling"] = dict(spec.sampling)
    if spec.max_cost is not None:
        config["max_cost"] = spec.max_cost
    for key in ("series", "step", "weights"):
        if getattr(spec, key) is not None:
            config[key] = getattr(spec, key)
    return config
