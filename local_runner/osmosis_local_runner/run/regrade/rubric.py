"""Score a JSONL dataset of solutions with a rubric judge: records × ``n`` judge calls,
bounded concurrency, results always written (even when the provider fails part-way)."""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from osmosis_client._fs import atomic_write
from osmosis_client.errors import (
    ConfigError,
    EndpointUnreachableError,
    InvalidInputError,
    OsmosisError,
    Problem,
    ProviderRequestError,
)
from osmosis_client.llm.client import ModelClient
from osmosis_client.rewards.rubric import RubricResult, aevaluate_rubric, resolve_judge
from osmosis_local_runner.results.statistics.scoring import describe
from osmosis_local_runner.run.execute.scheduler import run_window


@dataclass(frozen=True)
class RubricRecord:
    line: int  # 1-based line in the file
    conversation_id: str | None
    solution_str: str
    ground_truth: str | None
    original_input: str | None
    metadata: dict[str, Any]
    rubric_id: str | None


def _checked_record(
    raw: bytes, line: int, on_empty_solution: Callable[[int], None] | None
) -> tuple[dict[str, Any], str, dict[str, Any]]:
    """(the record, its solution, its metadata) of one line; ValueError: what is wrong."""
    data = json.loads(raw)
    if not isinstance(data, dict):
        raise ValueError("a record must be a JSON object")
    solution = data.get("solution_str")
    if solution is not None and not isinstance(solution, str):
        raise ValueError("solution_str must be a string")
    if not solution or not solution.strip():
        if on_empty_solution is None:
            raise ValueError("solution_str must be a non-empty string")
        on_empty_solution(line)
        solution = solution or ""
    for key in ("ground_truth", "original_input", "conversation_id", "rubric_id"):
        if data.get(key) is not None and not isinstance(data[key], str | int | float):
            raise ValueError(f"{key} must be a string")
    metadata = data.get("metadata") or data.get("extra_info") or {}
    if not isinstance(metadata, dict):
        raise ValueError("metadata must be an object")
    return data, solution, metadata


def load_records(
    path: Path,
    rubric_id: str | None = None,
    *,
    on_empty_solution: Callable[[int], None] | None = None,
) -> tuple[list[RubricRecord], int]:
    """Records of a JSONL dataset (and how many were skipped for another rubric_id). A
    record without a ``solution_str`` is a problem — unless ``on_empty_solution`` is
    given (a preview shows what is there): then it is kept, and its line is reported."""
    if not path.is_file():
        raise InvalidInputError(f"dataset {path} does not exist")
    records: list[RubricRecord] = []
    problems: list[Problem] = []
    skipped = 0
    with path.open("rb") as handle:
        for line, raw in enumerate(handle, 1):
            if not raw.strip():
                continue
            try:
                data, solution, metadata = _checked_record(raw, line, on_empty_solution)
            except ValueError as exc:
                problems.append(Problem(str(path), line, None, "", str(exc).split(": line ")[0]))
                continue
            if rubric_id is not None and data.get("rubric_id") not in (None, rubric_id):
                skipped += 1
                continue
            records.append(
                RubricRecord(
                    line,
                    _text(data, "conversation_id"),
                    solution,
                    _text(data, "ground_truth"),
                    _text(data, "original_input"),
                    metadata,
                    _text(data, "rubric_id"),
                )
            )
    if problems:
        raise ConfigError(f"dataset {path} has invalid records", problems[:20])
    if not records:
        raise InvalidInputError(
            f"dataset {path} has no records to evaluate"
            + (f" for rubric {rubric_id!r}" if rubric_id else "")
        )
    return records, skipped


def _text(data: Mapping[str, Any], key: str) -> str | None:
    value = data.get(key)
    return None if value is None else str(value)


@dataclass
class RubricProgress:
    total: int
    done: int = 0
    errors: int = 0
    started_at: float = field(default_factory=time.monotonic)


def rubric_stats(scores: list[float]) -> dict[str, Any]:
    """count, average, population variance, std, min, max over successful runs."""
    stats = describe(scores)
    std = stats["std"]
    return {
        "count": len(scores),
        "average": stats["mean"],
        "variance": None if std is None else std * std,
        "std": std,
        "min": stats["min"],
        "max": stats["max"],
    }


async def run_rubric_eval(
    records: list[RubricRecord],
    rubric: str,
    model_info: Mapping[str, Any],
    *,
    n: int = 1,
    concurrency: int = 8,
    on_progress: Callable[[RubricProgress], None] | None = None,
) -> tuple[dict[str, Any], OsmosisError | None]:
    """The result document, and the provider error that stopped the run (if any)."""
    target = resolve_judge(model_info)  # key problems surface before any request
    runs: dict[int, list[dict[str, Any] | None]] = {i: [None] * n for i in range(len(records))}
    progress = RubricProgress(total=len(records) * n)
    fatal: list[OsmosisError] = []
    stop = asyncio.Event()
    timeout = float(model_info.get("timeout") or 60.0)

    async with ModelClient(target, concurrency=concurrency, request_timeout=timeout) as client:

        async def judge(item: tuple[int, int]) -> None:
            index, k = item
            entry = await _judge_one(records[index], rubric, model_info, client, fatal)
            if fatal:
                stop.set()  # the provider is failing: stop, keep what is done
            runs[index][k] = entry
            progress.done += 1
            progress.errors += entry["error"] is not None
            if on_progress is not None:
                on_progress(progress)

        items = ((i, k) for i in range(len(records)) for k in range(n))
        await run_window(items, concurrency, judge, stop)

    scores = [r["score"] for rs in runs.values() for r in rs if r and r["error"] is None]
    document = {
        "rubric": rubric,
        "model": target.model_path,
        "status": "failed" if fatal else "finished",
        "records": [
            {
                "line": rec.line,
                "conversation_id": rec.conversation_id,
                "runs": [r for r in runs[i] if r is not None],
            }
            for i, rec in enumerate(records)
        ],
        "stats": rubric_stats(scores),
    }
    return document, (fatal[0] if fatal else None)


async def _judge_one(
    record: RubricRecord,
    rubric: str,
    model_info: Mapping[str, Any],
    client: ModelClient,
    fatal: list[OsmosisError],
) -> dict[str, Any]:
    try:
        result = await aevaluate_rubric(
            rubric,
            record.solution_str,
            model_info,
            record.ground_truth,
            record.original_input,
            record.metadata,
            return_details=True,
            client=client,
        )
    except (EndpointUnreachableError, ProviderRequestError) as exc:
        if isinstance(exc, EndpointUnreachableError) or exc.status_code is not None:
            fatal.append(exc)
        return {"score": None, "explanation": None, "error": exc.message}
    except OsmosisError as exc:
        fatal.append(exc)
        return {"score": None, "explanation": None, "error": exc.message}
    if not isinstance(result, RubricResult):  # return_details=True always gives one
        return {"score": float(result), "explanation": None, "error": None}
    return {"score": result.score, "explanation": result.explanation, "error": None}


def default_result_path(rubric_id: str | None) -> Path:
    """``.osmosis/rubrics/<rubric>-<UTC timestamp>-<random>.json`` (beside eval results)."""
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    name = f"{rubric_id or 'rubric'}-{stamp}-{secrets.token_hex(2)}.json"
    from osmosis_client.layout import RUBRICS

    return RUBRICS / name


def resolve_output(output: Path | None, rubric_id: str | None) -> Path:
    """No ``-o``: the default path; a directory: ``rubric_eval_result_<unix ms>.json`` inside
    it (the published SDK's name); a file path: as is."""
    if output is None:
        return default_result_path(rubric_id)
    if output.is_dir() or str(output).endswith(os.sep):
        return output / f"rubric_eval_result_{int(time.time() * 1000)}.json"
    return output


def write_result(path: Path, document: Mapping[str, Any]) -> None:
    atomic_write(path, (json.dumps(document, indent=2, ensure_ascii=False) + "\n").encode())


STAT_KEYS = ("average", "variance", "std", "min", "max")


def load_rubric_baseline(path: Path) -> dict[str, float]:
    """A prior rubric result's statistics: ours (``stats``), 0.2's
    (``overall_statistics``, ``stdev``) or statistics at the top level of the file."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise InvalidInputError(
            f"cannot read the baseline {path}: {exc.strerror}", code="BAD_BASELINE"
        ) from exc
    except ValueError as exc:
        raise InvalidInputError(
            f"the baseline {path} is not JSON ({exc})", code="BAD_BASELINE"
        ) from exc
    stats = (
        data.get("stats") or data.get("overall_statistics") or data
        if isinstance(data, dict)
        else {}
    )
    found = {key: v for key in STAT_KEYS if (v := _number(stats, key)) is not None}
    if "average" not in found:
        raise InvalidInputError(
            f"the baseline {path} has no rubric statistics",
            hint="give a result file written by eval-rubric (it has an average score)",
            code="BAD_BASELINE",
        )
    return found


def compare_to_baseline(
    stats: Mapping[str, Any], baseline: Mapping[str, float], path: Path
) -> dict[str, Any]:
    """``{path, stats, delta}``: this run's statistic minus the baseline's, per statistic
    both have."""
    delta = {
        key: stats[key] - baseline[key]
        for key in STAT_KEYS
        if key in baseline and isinstance(stats.get(key), (int, float))
    }
    return {"path": str(path), "stats": dict(baseline), "delta": delta}


def _number(stats: Any, key: str) -> float | None:
    value = stats.get(key) if isinstance(stats, dict) else None
    if value is None and key == "std" and isinstance(stats, dict):
        value = stats.get("stdev")  # 0.2's name
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)
