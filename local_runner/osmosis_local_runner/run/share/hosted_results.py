"""A hosted run's downloaded outputs as one of our results documents, so the results
commands (compare, report, rescore) treat a hosted run like a local one.

Read: ``summary.jsonl`` (one line per attempt: ``row_index, run_index, status, reward,
tokens, duration_ms, error_type, trajectory_filename``), ``metrics.json`` and
``trajectories/row_R_run_K.json`` (ATIF; the conversation and the answer). The reward is
the ``grader`` eval fn's score, as in a local run of the same config. Rows are matched to
the workspace's copy of the dataset by their prompt, so a hosted run pairs row for row
with a local run of the same data (and rescore finds each row); without the dataset
they pair by position.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from osmosis_client.errors import InvalidInputError
from osmosis_local_runner.results.documents.document import document_head, write_document
from osmosis_local_runner.results.documents.records import AttemptRecord, compact

FN = "grader"
RESULTS = "results.json"
_ROLES = {"user": "user", "agent": "assistant", "assistant": "assistant", "system": "system"}


def write_hosted_results(root: Path, run: Mapping[str, Any], dataset: Path | None = None) -> Path:
    """Write ``root/results.json`` from the outputs downloaded into ``root``."""
    lines = _summary_lines(root)
    metrics = _json_file(root / "metrics.json") or {}
    summary: dict[str, Any] = _object(metrics.get("summary"))
    config_of: dict[str, Any] = _object(run.get("config"))
    threshold = _number(
        summary.get("pass_threshold"), _number(config_of.get("pass_threshold"), 1.0)
    )
    n = max([int(r.get("run_index", 0)) + 1 for r in lines] or [1])
    dataset = dataset or _find_dataset(root, str(run.get("dataset") or ""))
    prompts, facts = _dataset_index(dataset)
    records: dict[int, list[AttemptRecord]] = defaultdict(list)
    converted = [(line, _record(root, line, prompts)) for line in lines]
    matched = [(line, r) for line, r in converted if r.row_digest]
    if matched and all(r.row_index == line["row_index"] for line, r in matched):
        # the platform kept the file's order: a row without a transcript is that row too
        by_index = {index: digest for found in prompts.values() for index, digest in found}
        for _, record in converted:
            if not record.row_digest and record.row_index in by_index:
                record.row_digest = by_index[record.row_index]
    for _, record in converted:
        if record.row_digest:  # a row of the dataset: its expected answer and metadata
            record.row_facts = facts.get(record.row_index)
        records[record.row_index].append(record)
    config = {
        "model": run.get("model") or config_of.get("model_path"),
        "n_runs": n,
        "pass_threshold": threshold,
        "eval_fns": [FN],
        "dataset": str(dataset) if dataset else run.get("dataset"),
        "hosted_run": {"id": run.get("id"), "name": run.get("name"), "status": run.get("status")},
        "rollout": run.get("rollout"),
        "commit_sha": run.get("commit_sha"),
        "rollout_mode": "hosted",
    }
    head = document_head(
        config,
        records,
        [FN],
        n=n,
        pass_threshold=threshold,
        duration_ms=int(_number((metrics.get("eval_run") or {}).get("duration_ms"), 0)),
        status="finished" if run.get("status") == "finished" else str(run.get("status") or ""),
    )
    path = root / RESULTS
    write_document(path, head, records)
    return path


def _summary_lines(root: Path) -> list[dict[str, Any]]:
    path = root / "summary.jsonl"
    if not path.is_file():
        raise InvalidInputError(
            f"{root} has no summary.jsonl (download the trajectories type)", code="NOT_RESULTS"
        )
    lines = []
    for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not raw.strip():
            continue
        try:
            value = json.loads(raw)
        except ValueError as exc:
            raise InvalidInputError(f"{path}:{number}: not JSON", code="NOT_RESULTS") from exc
        if not isinstance(value, dict) or not isinstance(value.get("row_index"), int):
            raise InvalidInputError(f"{path}:{number}: not a sample line", code="NOT_RESULTS")
        if not isinstance(value.get("run_index", 0), int):
            raise InvalidInputError(
                f"{path}:{number}: run_index is not a number", code="NOT_RESULTS"
            )
        lines.append(value)
    return lines


def _record(
    root: Path, line: Mapping[str, Any], prompts: Mapping[str, list[tuple[int, str]]]
) -> AttemptRecord:
    status = line.get("status")
    row, run = int(line["row_index"]), int(line.get("run_index", 0))
    trajectory = _trajectory(root, line, row, run)
    messages = _messages(trajectory)
    prompt = next((m["content"] for m in messages if m["role"] == "user"), None)
    index, digest = int(line.get("source_row_index", row)), ""
    matches = prompts.get(prompt or "") if prompt is not None else None
    if matches:
        index, digest = matches[0] if len(matches) == 1 else _nearest(matches, index)
    reward = line.get("reward")
    scores = (
        {FN: float(reward)}
        if isinstance(reward, int | float) and not isinstance(reward, bool)
        else {}
    )
    answer = next((m["content"] for m in reversed(messages) if m["role"] == "assistant"), None)
    failed = status == "failed"
    return AttemptRecord(
        row_index=index,
        run_index=run,
        row_digest=digest,
        success=not failed,
        scores=scores if not failed else {},
        duration_ms=int(_number(line.get("duration_ms"), 0)),
        tokens=int(_number(line.get("tokens"), 0)),
        error=str(line.get("error_type") or "failed on the platform") if failed else None,
        answer=answer,
        extra={k: line[k] for k in ("rollout_id",) if k in line} or None,
        transcript=compact(messages) if messages else None,
        skipped=status == "skipped",
    )


def _nearest(matches: list[tuple[int, str]], index: int) -> tuple[int, str]:
    return min(matches, key=lambda m: abs(m[0] - index))


def _trajectory(root: Path, line: Mapping[str, Any], row: int, run: int) -> Any:
    candidates = [root / "trajectories" / f"row_{row}_run_{run}.json"]
    name = line.get("trajectory_filename")
    if isinstance(name, str) and "/" not in name and "\\" not in name:
        candidates.append(root / "trajectories" / name)
    for path in candidates:
        value = _json_file(path)
        if value is not None:
            return value
    return None


def _messages(trajectory: Any) -> list[dict[str, Any]]:
    """ATIF steps (``source`` user / agent / system, ``message``) as chat messages."""
    steps = trajectory.get("steps") if isinstance(trajectory, dict) else None
    messages = []
    for step in steps if isinstance(steps, list) else []:
        if not isinstance(step, dict):
            continue
        role = _ROLES.get(str(step.get("source")))
        content = step.get("message")
        if role is None or content is None:
            continue
        if not isinstance(content, str):
            content = json.dumps(content, ensure_ascii=False)
        messages.append({"role": role, "content": content})
    return messages


def _find_dataset(root: Path, name: str) -> Path | None:
    if not name:
        return None
    from osmosis_local_runner.run.execute.dataset import find_dataset

    for folder in (root, *root.parents):
        if (folder / "data").is_dir():
            try:
                return find_dataset(folder, name)
            except InvalidInputError:
                return None
    return None


def _dataset_index(
    path: Path | None,
) -> tuple[dict[str, list[tuple[int, str]]], dict[int, str | None]]:
    """user prompt → [(row index, digest)] of the dataset, and each row's facts (both
    empty when unreadable)."""
    if path is None:
        return {}, {}
    from osmosis_local_runner.run.execute.dataset import Dataset

    found: dict[str, list[tuple[int, str]]] = defaultdict(list)
    facts: dict[int, str | None] = {}
    try:
        for row in Dataset(path).rows():
            found[row.user_prompt].append((row.index, row.digest))
            facts[row.index] = row.facts()
    except (InvalidInputError, OSError, ValueError):
        return {}, {}
    return found, facts


def _json_file(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _number(value: Any, default: float) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return default
    return float(value)


def _object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}
