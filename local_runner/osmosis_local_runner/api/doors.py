"""What a front end (the CLI) drives the runner with, beyond the library's calls — the
one door into the runner's rooms for a front end: its modules import the runner through
``osmosis_local_runner`` and ``osmosis_local_runner.api`` only (a test holds them to it),
never ``run/``, ``server/`` or ``trackers/``. Each name is loaded when used, so a command
pays only for what it touches.

- a local run: ``RunRequest`` → ``RunSession`` (the one run path), its settings
  (``RunSettings``, ``Overrides``, the seed form's ``SeedSource``), what it returns
  (``RunPlan``, ``RunResult``, ``Progress``, ``RunSpec``, ``UploadOutcome``), row lists;
- a suite: ``SuiteRunner`` and its settings;
- results made elsewhere: a rescore, a hosted run's results, an upload (``RunUpload``);
- rollouts checked before a run: ``osmosis test``'s session, user code loaded, a
  rollout's mode and environment;
- an LLM judge over a file (``osmosis eval rubric``);
- what became of a tracker (``Logged``).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from osmosis_local_runner.run.execute.dataset import Row as Row
    from osmosis_local_runner.run.execute.discovery import (
        load_agent_loop as load_agent_loop,
        load_attr as load_attr,
        load_rollout as load_rollout,
    )
    from osmosis_local_runner.run.regrade.rescore import rescore as rescore
    from osmosis_local_runner.run.regrade.rubric import (
        RubricProgress as RubricProgress,
        RubricRecord as RubricRecord,
        compare_to_baseline as compare_to_baseline,
        load_records as load_records,
        load_rubric_baseline as load_rubric_baseline,
        resolve_output as resolve_output,
        run_rubric_eval as run_rubric_eval,
        write_result as write_result,
    )
    from osmosis_local_runner.run.regrade.test_mode import (
        CheckSession as CheckSession,
        CheckSummary as CheckSummary,
        RowResult as RowResult,
        agent_under_test as agent_under_test,
        load_test_rows as load_test_rows,
    )
    from osmosis_local_runner.run.request.overrides import (
        Overrides as Overrides,
        describe_rollout as describe_rollout,
        detect_mode as detect_mode,
    )
    from osmosis_local_runner.run.request.request import (
        RunRequest as RunRequest,
        Uploader as Uploader,
        UploadOutcome as UploadOutcome,
    )
    from osmosis_local_runner.run.request.row_lists import (
        parse_rows as parse_rows,
        rows_text as rows_text,
    )
    from osmosis_local_runner.run.request.seed import SeedSource as SeedSource
    from osmosis_local_runner.run.request.settings import RunSettings as RunSettings
    from osmosis_local_runner.run.request.spec import (
        Progress as Progress,
        RunPlan as RunPlan,
        RunResult as RunResult,
        RunSpec as RunSpec,
    )
    from osmosis_local_runner.run.session.named import config_path as config_path
    from osmosis_local_runner.run.session.session import (
        RunSession as RunSession,
        unnamed_results as unnamed_results,
    )
    from osmosis_local_runner.run.share.hosted_results import (
        write_hosted_results as write_hosted_results,
    )
    from osmosis_local_runner.run.share.upload import RunUpload as RunUpload
    from osmosis_local_runner.run.suite.suite import (
        EntryRun as EntryRun,
        SuiteRequest as SuiteRequest,
        SuiteRunner as SuiteRunner,
        open_suite as open_suite,
    )
    from osmosis_local_runner.run.suite.suite_settings import (
        collapsed as collapsed,
        settings_of as settings_of,
        suite_flags as suite_flags,
    )
    from osmosis_local_runner.server.detect import check_mode as check_mode, detect as detect
    from osmosis_local_runner.server.environment import (
        find_uv as find_uv,
        last_json as last_json,
        resolve as resolve,
        tool_env as tool_env,
    )
    from osmosis_local_runner.server.uv_sync import (
        fingerprint as fingerprint,
        sync_target as sync_target,
    )
    from osmosis_local_runner.trackers import Logged as Logged

#: where each name lives (loaded on first use)
_HOMES = {
    "CheckSession": "osmosis_local_runner.run.regrade.test_mode",
    "CheckSummary": "osmosis_local_runner.run.regrade.test_mode",
    "EntryRun": "osmosis_local_runner.run.suite.suite",
    "SuiteRequest": "osmosis_local_runner.run.suite.suite",
    "open_suite": "osmosis_local_runner.run.suite.suite",
    "Logged": "osmosis_local_runner.trackers",
    "Overrides": "osmosis_local_runner.run.request.overrides",
    "Progress": "osmosis_local_runner.run.request.spec",
    "Row": "osmosis_local_runner.run.execute.dataset",
    "RowResult": "osmosis_local_runner.run.regrade.test_mode",
    "RubricProgress": "osmosis_local_runner.run.regrade.rubric",
    "RubricRecord": "osmosis_local_runner.run.regrade.rubric",
    "RunPlan": "osmosis_local_runner.run.request.spec",
    "RunRequest": "osmosis_local_runner.run.request.request",
    "RunResult": "osmosis_local_runner.run.request.spec",
    "RunSession": "osmosis_local_runner.run.session.session",
    "RunSettings": "osmosis_local_runner.run.request.settings",
    "RunSpec": "osmosis_local_runner.run.request.spec",
    "RunUpload": "osmosis_local_runner.run.share.upload",
    "SeedSource": "osmosis_local_runner.run.request.seed",
    "SuiteRunner": "osmosis_local_runner.run.suite.suite",
    "UploadOutcome": "osmosis_local_runner.run.request.request",
    "Uploader": "osmosis_local_runner.run.request.request",
    "agent_under_test": "osmosis_local_runner.run.regrade.test_mode",
    "check_mode": "osmosis_local_runner.server.detect",
    "collapsed": "osmosis_local_runner.run.suite.suite_settings",
    "compare_to_baseline": "osmosis_local_runner.run.regrade.rubric",
    "config_path": "osmosis_local_runner.run.session.named",
    "describe_rollout": "osmosis_local_runner.run.request.overrides",
    "detect": "osmosis_local_runner.server.detect",
    "detect_mode": "osmosis_local_runner.run.request.overrides",
    "find_uv": "osmosis_local_runner.server.environment",
    "fingerprint": "osmosis_local_runner.server.uv_sync",
    "last_json": "osmosis_local_runner.server.environment",
    "load_agent_loop": "osmosis_local_runner.run.execute.discovery",
    "load_attr": "osmosis_local_runner.run.execute.discovery",
    "load_records": "osmosis_local_runner.run.regrade.rubric",
    "load_rollout": "osmosis_local_runner.run.execute.discovery",
    "load_rubric_baseline": "osmosis_local_runner.run.regrade.rubric",
    "load_test_rows": "osmosis_local_runner.run.regrade.test_mode",
    "parse_rows": "osmosis_local_runner.run.request.row_lists",
    "rescore": "osmosis_local_runner.run.regrade.rescore",
    "resolve": "osmosis_local_runner.server.environment",
    "resolve_output": "osmosis_local_runner.run.regrade.rubric",
    "rows_text": "osmosis_local_runner.run.request.row_lists",
    "run_rubric_eval": "osmosis_local_runner.run.regrade.rubric",
    "settings_of": "osmosis_local_runner.run.suite.suite_settings",
    "suite_flags": "osmosis_local_runner.run.suite.suite_settings",
    "sync_target": "osmosis_local_runner.server.uv_sync",
    "tool_env": "osmosis_local_runner.server.environment",
    "unnamed_results": "osmosis_local_runner.run.session.session",
    "write_hosted_results": "osmosis_local_runner.run.share.hosted_results",
    "write_result": "osmosis_local_runner.run.regrade.rubric",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    # looked up each time (never cached here): its home module stays the one truth
    return getattr(importlib.import_module(home), name)


__all__ = [
    "CheckSession",
    "CheckSummary",
    "EntryRun",
    "Logged",
    "Overrides",
    "Progress",
    "Row",
    "RowResult",
    "RubricProgress",
    "RubricRecord",
    "RunPlan",
    "RunRequest",
    "RunResult",
    "RunSession",
    "RunSettings",
    "RunSpec",
    "RunUpload",
    "SeedSource",
    "SuiteRequest",
    "SuiteRunner",
    "UploadOutcome",
    "Uploader",
    "agent_under_test",
    "check_mode",
    "collapsed",
    "compare_to_baseline",
    "config_path",
    "describe_rollout",
    "detect",
    "detect_mode",
    "find_uv",
    "fingerprint",
    "last_json",
    "load_agent_loop",
    "load_attr",
    "load_records",
    "load_rollout",
    "load_rubric_baseline",
    "load_test_rows",
    "open_suite",
    "parse_rows",
    "rescore",
    "resolve",
    "resolve_output",
    "rows_text",
    "run_rubric_eval",
    "settings_of",
    "suite_flags",
    "sync_target",
    "tool_env",
    "unnamed_results",
    "write_hosted_results",
    "write_result",
]
