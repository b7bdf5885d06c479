"""The runner as a library (docs/python-api.md): ``run_eval`` / ``arun_eval`` run what
``osmosis eval run`` and the seed form run, ``run_suite`` / ``arun_suite`` a suite,
``load_run`` opens a run, ``compare_runs`` compares two — the CLI's local commands are a
skin over the same code (``run/session.py``)."""

from osmosis_local_runner.api.comparing import CompareResult, compare_runs
from osmosis_local_runner.api.results import (
    Attempt,
    EvalResult,
    FnSummary,
    RowResult,
    Summary,
    load_run,
)
from osmosis_local_runner.api.running import RunProgress, arun_eval, run_eval
from osmosis_local_runner.api.suites import SuiteResult, arun_suite, run_suite

__all__ = [
    "Attempt",
    "CompareResult",
    "EvalResult",
    "FnSummary",
    "RowResult",
    "RunProgress",
    "SuiteResult",
    "Summary",
    "arun_eval",
    "arun_suite",
    "compare_runs",
    "load_run",
    "run_eval",
    "run_suite",
]
