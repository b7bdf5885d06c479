"""Run history: every named run under a project's ``.osmosis/evals/`` — what ``eval list
--local`` and ``eval info NAME --local`` show, newest first."""

from __future__ import annotations

import contextlib
import fcntl
import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from osmosis_client.errors import InvalidInputError, OsmosisError
from osmosis_local_runner.api.results import RUNS, EvalResult
from osmosis_local_runner.run.journal import journal_path
from osmosis_local_runner.run.rundir import LOCKS, RunDirectory, check_name, read_json


@dataclass(frozen=True)
class RunInfo:
    """One run at a glance (the list's columns)."""

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
            info = _info(RunDirectory(runs, path.name))
            if info is not None:
                found.append(info)
    return sorted(found, key=lambda i: (i.started or "", i.name), reverse=True)


def run_info(name: str, root: Path | None = None) -> RunInfo:
    """One run by name."""
    run = RunDirectory((root or Path.cwd()) / RUNS, check_name(name))
    info = _info(run)
    if info is None:
        raise InvalidInputError(
            f"no local run named {name!r} under {RUNS}",
            hint="list the local runs to see their names",
            code="RUN_NOT_FOUND",
        )
    return info


def _info(run: RunDirectory) -> RunInfo | None:
    manifest = read_json(run.manifest_path) or {}
    inputs = manifest.get("inputs") if isinstance(manifest.get("inputs"), dict) else {}
    model = inputs.get("model_path") if isinstance(inputs, dict) else None
    started = manifest.get("created_at")
    if run.results.is_file():
        with contextlib.suppress(OsmosisError, ValueError, OSError):
            result = EvalResult(run.results, run.name)
            summary = result.summary
            fn = next(iter(summary.eval_fns.values()), None)
            return RunInfo(
                run.name, "running" if _locked(run) else summary.status,
                str(result.config.get("model") or model or "") or None,
                summary.total_rows, summary.total_runs,
                fn.mean if fn else None, fn.pass_at_k.get(1) if fn else None,
                started if isinstance(started, str) else None, summary.duration_ms,
                str(run.path),
            )  # fmt: skip
    journal = journal_path(run.results)
    if not journal.is_file() and not manifest:
        return None
    attempts = _journaled(journal)
    return RunInfo(
        run.name, "running" if _locked(run) else "stopped",
        model if isinstance(model, str) else None, None, attempts, None, None,
        started if isinstance(started, str) else None, None, str(run.path),
    )  # fmt: skip


def _journaled(journal: Path) -> int | None:
    try:
        with journal.open("rb") as handle:
            return max(0, sum(1 for _ in handle) - 1)  # the header line, then attempts
    except OSError:
        return None


def _locked(run: RunDirectory) -> bool:
    """An invocation holds the run's lock: it is running now."""
    try:
        fd = os.open(run.root / LOCKS / f"{run.name}.lock", os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(fd)
    return False
