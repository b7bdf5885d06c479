"""What a run writes, as a contract others can check: the JSON Schema (2020-12) of the
results document and the files of a named run's directory (``osmosis eval schema``).
Versioned: :data:`SCHEMA_VERSION` moves when a field changes meaning or goes away; new
fields may appear at any time (``additionalProperties`` stays open)."""

from __future__ import annotations

from typing import Any

SCHEMA_VERSION = 1

_NUMBER = {"type": "number"}
_COUNT = {"type": "integer", "minimum": 0}
_TEXT = {"type": "string"}
_MAYBE_TEXT = {"type": ["string", "null"]}

ATTEMPT: dict[str, Any] = {
    "type": "object",
    "required": ["run_index", "success", "scores", "duration_ms"],
    "properties": {
        "run_index": _COUNT,
        "success": {"type": "boolean", "description": "the rollout ran and was graded"},
        "skipped": {"type": "boolean"},
        "scores": {
            "type": "object",
            "additionalProperties": _NUMBER,
            "description": "each eval fn's score",
        },
        "fn_errors": {"type": ["object", "null"], "additionalProperties": _TEXT},
        "error": _MAYBE_TEXT,
        "answer": _MAYBE_TEXT,
        "duration_ms": _NUMBER,
        "tokens": _COUNT,
        "model_tag": _MAYBE_TEXT,
        "usage": {
            "type": ["object", "null"],
            "description": "tokens by kind, finish "
            "reason, truncation and cost of the attempt's model calls",
        },
        "messages": {"type": "array", "description": "the final conversation (transcripts)"},
        "grading": {
            "type": "object",
            "description": "when the eval fns graded the attempt (ms from its start)",
            "properties": {"at_ms": _NUMBER, "duration_ms": _NUMBER},
        },
        "model_calls": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "at_ms": _NUMBER,
                    "duration_ms": _NUMBER,
                    "sent": _COUNT,
                    "usage": {"type": "object"},
                    "request": _TEXT,
                    "response": _TEXT,
                    "error": _TEXT,
                    "retries": {"type": "array", "items": _TEXT},
                    "wire": {
                        "type": "array",
                        "description": "each try as it went over the wire: url (no "
                        "credentials), status, duration_ms, sent (the request body exactly "
                        "as sent) and received (the response exactly as received, a "
                        "stream's events as they came) — past 256 KiB their sent_sha256 / "
                        "received_sha256 instead —, sent_bytes, received_bytes, headers "
                        "(request ids, rate limits), error; request headers never",
                        "items": {"type": "object"},
                    },
                    "cached": {
                        "enum": ["cache", "replay"],
                        "description": "answered without a call: from the model-call cache, "
                        "or a replayed run's recorded answer (docs/cache.md)",
                    },
                },
            },
        },
    },
}
ROW: dict[str, Any] = {
    "type": "object",
    "required": ["row_index", "runs"],
    "properties": {
        "row_index": _COUNT,
        "row_digest": _TEXT,
        "prompt": {"description": "the row's prompt as the dataset had it"},
        "expected": {"description": "its expected answer (ground truth)"},
        "metadata": {"type": ["object", "null"]},
        "runs": {"type": "array", "items": ATTEMPT},
    },
}
RESULTS: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": f"https://osmosis.ai/schemas/results/v{SCHEMA_VERSION}",
    "title": "osmosis results document",
    "type": "object",
    "required": ["config", "summary", "rows"],
    "properties": {
        "config": {
            "type": "object",
            "required": ["model", "n_runs", "eval_fns"],
            "properties": {
                "model": _TEXT,
                "n_runs": {"type": "integer", "minimum": 1},
                "pass_threshold": _NUMBER,
                "eval_fns": {"type": "array", "items": _TEXT},
                "dataset": {},
                "limit": {},
                "seed": {},
                "base_url": {},
                "max_cost": {
                    "type": "number",
                    "description": "the cost budget in USD the run was held to (every "
                    "invocation of it together)",
                },
                "cluster_by": {
                    "type": "string",
                    "description": "the dataset column whose rows of one value are one "
                    "cluster of the mean's interval (summary.eval_fns[FN].clusters counts "
                    "them)",
                },
                "top_ups": {
                    "type": "array",
                    "description": "each time the run grew (more attempts per row or more "
                    "rows, only the missing ones run): {changed: {key: [was, now]}, at}",
                    "items": {"type": "object"},
                },
            },
        },
        "summary": {
            "type": "object",
            "required": ["total_rows", "total_runs", "status"],
            "properties": {
                "total_rows": _COUNT,
                "total_runs": _COUNT,
                "errored_runs": _COUNT,
                "status": {"enum": ["finished", "stopped", "running"]},
                "stopped_reason": {
                    "type": "string",
                    "description": "why a stopped run stopped: budget, deadline, "
                    "interrupted, usage_unknown (answers without usage under a budget), "
                    "no_price, journal_write_failed, …",
                },
                "eval_fns": {
                    "type": "object",
                    "description": "per eval fn: mean, std (population), min, max, pass_at_K; "
                    "and their uncertainty (docs/statistics.md): stderr, ci_low, ci_high — "
                    "the mean's standard error and 95 % interval with rows as clusters (t, "
                    "clusters − 1 degrees of freedom) —, clusters (rows, or config.cluster_by's "
                    "values), ci_pass_at_k "
                    "({K: [low, high]}: a bootstrap over rows) and variance ({between, "
                    "within, attempts_per_row, rows, se_twice_rows, se_twice_attempts})",
                    "additionalProperties": {"type": "object"},
                },
                "usage": {
                    "type": "object",
                    "description": "tokens by kind and cost; unreported_calls: calls "
                    "whose answer had no usage, invalid_calls: usage outside any sane "
                    "range (neither summed; the cost is null unless counted as free); "
                    "unpriced_models: models with no price",
                },
                "total_duration_ms": _NUMBER,
            },
        },
        "rows": {"type": "array", "items": ROW},
    },
}
#: a named run's directory (``.osmosis/evals/NAME/``): the published layout and ours
LAYOUT: dict[str, str] = {
    "results.json": "the results document (the schema above), written when the run ends",
    "results.json.journal.jsonl": "append-only: a header, then one finished attempt a line "
    "(what a resumed or unfinished run is read from)",
    "manifest.json": "what ran: inputs (model, dataset digest and rows, n, rollout), "
    "provenance (tool version, config path, settings), the run's id",
    "index.jsonl": "the published CLI's index: one line per row (published layout)",
    "summary.jsonl": "the published CLI's per-row summary lines",
    "events.jsonl": "the published CLI's events",
    "progress.json": "how far the run got (attempts done of all)",
    "metrics.json": "the published metrics document",
    "logs.txt": "the run's log, secrets scrubbed",
    "reviews.jsonl": "append-only: people's reviews (verdicts, comments, tags), if any",
}


def schema_document() -> dict[str, Any]:
    """What ``osmosis eval schema`` prints."""
    return {"schema_version": SCHEMA_VERSION, "results": RESULTS, "run_directory": LAYOUT}


__all__ = ["LAYOUT", "RESULTS", "SCHEMA_VERSION", "schema_document"]
