"""The local runner: executes eval configs offline with the platform's semantics.

As a library (docs/python-api.md)::

    from osmosis_local_runner import run_eval, arun_eval, run_suite, load_run, compare_runs

The names are imported on first use: ``import osmosis_local_runner`` stays cheap.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from osmosis_local_runner.api import (
        Attempt,
        CompareResult,
        EvalResult,
        FnSummary,
        RowResult,
        RunProgress,
        Spread,
        SuiteResult,
        Summary,
        UsageSummary,
        WatchEvent,
        WatchResult,
        arun_eval,
        arun_suite,
        attempts_df,
        awatch_checkpoints,
        awatch_training,
        calls_df,
        compare_runs,
        load_run,
        plan_rows,
        push_run,
        run_eval,
        run_suite,
        runs_df,
        sweep_runs,
        watch_checkpoints,
        watch_training,
    )

__all__ = [
    "Attempt",
    "CompareResult",
    "EvalResult",
    "FnSummary",
    "RowResult",
    "RunProgress",
    "Spread",
    "SuiteResult",
    "Summary",
    "UsageSummary",
    "WatchEvent",
    "WatchResult",
    "arun_eval",
    "arun_suite",
    "attempts_df",
    "awatch_checkpoints",
    "awatch_training",
    "calls_df",
    "compare_runs",
    "load_run",
    "plan_rows",
    "push_run",
    "run_eval",
    "run_suite",
    "runs_df",
    "sweep_runs",
    "watch_checkpoints",
    "watch_training",
]


def __getattr__(name: str) -> Any:
    if name in __all__:
        return getattr(importlib.import_module("osmosis_local_runner.api"), name)
    raise AttributeError(f"module 'osmosis_local_runner' has no attribute {name!r}")
