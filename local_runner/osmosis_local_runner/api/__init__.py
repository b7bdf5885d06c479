"""The runner as a library (docs/python-api.md): ``run_eval`` / ``arun_eval`` run what
``osmosis eval run`` and the seed form run, ``run_suite`` / ``arun_suite`` a suite,
``load_run`` opens a run, ``compare_runs`` compares two, ``sweep_runs`` reads N along
training, ``push_run`` sends one to experiment trackers, ``runs_df`` /
``attempts_df`` / ``calls_df`` read runs as dataframes — the CLI's local commands are a
skin over the same code (``run/session/session.py``)."""

from osmosis_local_runner.api.comparing import (
    CompareResult as CompareResult,
    compare_runs as compare_runs,
    sweep_runs as sweep_runs,
)
from osmosis_local_runner.api.frames import (
    attempts_df as attempts_df,
    calls_df as calls_df,
    runs_df as runs_df,
)
from osmosis_local_runner.api.planning import plan_rows as plan_rows
from osmosis_local_runner.api.results import (
    Attempt as Attempt,
    EvalResult as EvalResult,
    FnSummary as FnSummary,
    RowResult as RowResult,
    Spread as Spread,
    Summary as Summary,
    UsageSummary as UsageSummary,
    load_run as load_run,
)
from osmosis_local_runner.api.running import (
    RunProgress as RunProgress,
    arun_eval as arun_eval,
    run_eval as run_eval,
)
from osmosis_local_runner.api.sharing import push_run as push_run
from osmosis_local_runner.api.suites import (
    SuiteResult as SuiteResult,
    arun_suite as arun_suite,
    run_suite as run_suite,
)
from osmosis_local_runner.api.watching import (
    WatchEvent as WatchEvent,
    WatchResult as WatchResult,
    awatch_checkpoints as awatch_checkpoints,
    watch_checkpoints as watch_checkpoints,
)
from osmosis_local_runner.api.watching_hosted import (
    awatch_training as awatch_training,
    watch_training as watch_training,
)

# the public names are listed once, in ``osmosis_local_runner.__all__``
