"""The runner as a library (docs/python-api.md): ``run_eval`` / ``arun_eval`` run what
``osmosis eval run`` and the seed form run, ``run_suite`` / ``arun_suite`` a suite,
``load_run`` opens a run, ``compare_runs`` compares two, ``sweep_runs`` reads N along
training, ``push_run`` sends one to experiment trackers, ``runs_df`` /
``attempts_df`` / ``calls_df`` read runs as dataframes — the CLI's local commands are a
skin over the same code (``run/session.py``)."""

from osmosis_local_runner.api.comparing import CompareResult as CompareResult
from osmosis_local_runner.api.comparing import compare_runs as compare_runs
from osmosis_local_runner.api.comparing import sweep_runs as sweep_runs
from osmosis_local_runner.api.frames import attempts_df as attempts_df
from osmosis_local_runner.api.frames import calls_df as calls_df
from osmosis_local_runner.api.frames import runs_df as runs_df
from osmosis_local_runner.api.planning import plan_rows as plan_rows
from osmosis_local_runner.api.results import Attempt as Attempt
from osmosis_local_runner.api.results import EvalResult as EvalResult
from osmosis_local_runner.api.results import FnSummary as FnSummary
from osmosis_local_runner.api.results import RowResult as RowResult
from osmosis_local_runner.api.results import Spread as Spread
from osmosis_local_runner.api.results import Summary as Summary
from osmosis_local_runner.api.results import UsageSummary as UsageSummary
from osmosis_local_runner.api.results import load_run as load_run
from osmosis_local_runner.api.running import RunProgress as RunProgress
from osmosis_local_runner.api.running import arun_eval as arun_eval
from osmosis_local_runner.api.running import run_eval as run_eval
from osmosis_local_runner.api.sharing import push_run as push_run
from osmosis_local_runner.api.suites import SuiteResult as SuiteResult
from osmosis_local_runner.api.suites import arun_suite as arun_suite
from osmosis_local_runner.api.suites import run_suite as run_suite
from osmosis_local_runner.api.watching import WatchEvent as WatchEvent
from osmosis_local_runner.api.watching import WatchResult as WatchResult
from osmosis_local_runner.api.watching import awatch_checkpoints as awatch_checkpoints
from osmosis_local_runner.api.watching import watch_checkpoints as watch_checkpoints
from osmosis_local_runner.api.watching_hosted import awatch_training as awatch_training
from osmosis_local_runner.api.watching_hosted import watch_training as watch_training

# the public names are listed once, in ``osmosis_local_runner.__all__``
