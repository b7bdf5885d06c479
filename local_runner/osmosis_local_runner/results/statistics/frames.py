"""Runs as dataframe columns: every attempt of a results document, or every model call,
as a row of plain values, gathered into columns as the rows stream by (never all held as
objects), then a pandas or polars frame (``api/frames.py`` is the public face)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any, Literal

from osmosis_client.errors import InvalidInputError
from osmosis_local_runner.results.documents.documents import ResultsFile
from osmosis_local_runner.results.documents.records import AttemptRecord
from osmosis_local_runner.results.statistics.scoring import passed

Engine = Literal["pandas", "polars"]
#: what every call's and attempt's usage is read for (absent: None)
USAGE = (
    "input_tokens",
    "output_tokens",
    "reasoning_tokens",
    "cache_read_tokens",
    "cache_write_tokens",
    "cost_usd",
    "finish_reason",
)


def attempt_rows(
    docs: Iterable[tuple[str, ResultsFile]], fns: list[str]
) -> Iterator[dict[str, Any]]:
    """Each attempt of each (run name, document) as a row; ``fns``: the eval fns given
    ``score:FN`` / ``passed:FN`` columns."""
    for name, doc in docs:
        for row in doc.rows(transcripts=False):
            for a in row.runs:
                usage = a.usage or {}
                found = {
                    "run": name,
                    "row": row.index,
                    "attempt": a.run_index,
                    "model": a.model_tag or "primary",
                    "success": a.success,
                    "skipped": a.skipped,
                    "error": a.error,
                    "duration_ms": a.duration_ms,
                    "tokens": a.tokens,
                    **{k: usage.get(k) for k in USAGE},
                    "truncated": usage.get("truncated"),
                    "prompt": row.user_prompt,
                    "expected": row.expected,
                    "answer": a.answer,
                }
                for fn in fns:
                    found[f"score:{fn}"] = a.scores.get(fn)
                    found[f"passed:{fn}"] = (
                        passed(a, fn, doc.pass_threshold) if fn in doc.eval_fns else None
                    )
                yield found


def call_rows(docs: Iterable[tuple[str, ResultsFile]]) -> Iterator[dict[str, Any]]:
    """Each model call kept of each (run name, document) as a row."""
    for name, doc in docs:
        for row in doc.rows(transcripts=False):
            for a in row.runs:
                for number, call in enumerate(_calls_of(a)):
                    given, tried = call.get("usage"), call.get("retries")
                    usage: dict[str, Any] = given if isinstance(given, dict) else {}
                    retries: list[Any] = tried if isinstance(tried, list) else []
                    yield {
                        "run": name,
                        "row": row.index,
                        "attempt": a.run_index,
                        "model": a.model_tag or "primary",
                        "call": number,
                        "at_ms": call.get("at_ms"),
                        "duration_ms": call.get("duration_ms"),
                        "tries": len(retries) + 1,
                        "error": call.get("error"),
                        "messages_sent": call.get("sent"),
                        **{k: usage.get(k) for k in USAGE},
                        "called_model": usage.get("model"),
                    }


def _calls_of(record: AttemptRecord) -> list[dict[str, Any]]:
    calls = (record.extra or {}).get("model_calls")
    return [c for c in calls if isinstance(c, dict)] if isinstance(calls, list) else []


def columns_of(rows: Iterable[dict[str, Any]]) -> dict[str, list[Any]]:
    """Rows as columns (a key missing from a row: None), built as the rows stream by."""
    columns: dict[str, list[Any]] = {}
    for count, row in enumerate(rows):
        for key in row:
            if key not in columns:
                columns[key] = [None] * count
        for key, values in columns.items():
            values.append(row.get(key))
    return columns


def frame(columns: dict[str, list[Any]], engine: Engine | None) -> Any:
    for name in (engine,) if engine else ("pandas", "polars"):
        try:
            module = __import__(name)
        except ImportError:
            continue
        if name == "pandas":
            return module.DataFrame(columns)
        return module.DataFrame(columns, strict=False)
    wanted = engine or "pandas or polars"
    raise InvalidInputError(
        f"a dataframe needs {wanted}",
        hint="pip install 'osmosis-client[pandas]' (or pip install polars)",
        code="USAGE",
    )
