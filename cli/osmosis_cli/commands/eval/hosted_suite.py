"""``osmosis eval submit SUITE.toml``: one hosted run per entry, and ``eval list
--suite NAME``.

Each entry is submitted as a single run is (pinned commit, its own Idempotency-Key, so
a lost create response never doubles a run). The suite is recorded in each run's
``advanced_config`` as ``osmosis_suite: {name, entry}`` and, with the created runs, in
``.osmosis/suites/hosted/<suite>.json`` (what ``eval list --suite`` reads).
"""

from __future__ import annotations

import json
import uuid
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from osmosis_cli.commands.eval.platform import pin_commit, refuse_unconfirmed, run_scope
from osmosis_cli.commands.eval.render import run_item
from osmosis_cli.commands.eval.secrets import for_submit
from osmosis_cli.terminal.errors import EvaluationNotPassed
from osmosis_client.errors import InvalidInputError

if TYPE_CHECKING:
    from osmosis_cli.commands.eval.submit import SubmitOptions
    from osmosis_cli.context import AppState
    from osmosis_cli.terminal.output import Output
    from osmosis_client import Client
    from osmosis_client.platform.git import Pin
    from osmosis_client.platform.models import CreatedRun, EvalRun
    from osmosis_client.platform.suite_config import Suite, SuiteEntry

HOSTED_RECORDS = Path(".osmosis") / "suites" / "hosted"


def record_path(name: str) -> Path:
    return HOSTED_RECORDS / f"{name}.json"


def submit_suite(app_state: AppState, out: Output, opts: SubmitOptions) -> None:
    """One hosted run per entry (each with its own idempotency key), recorded here."""
    from osmosis_client.platform.suite_config import load_suite

    suite = load_suite(opts.config_path)
    refuse_unconfirmed(out, opts)
    pins: dict[tuple[str | None, str | None], Pin] = {}
    repo = None
    for entry in suite.entries:
        assert entry.config is not None
        key = (entry.config.experiment.commit_sha, entry.config.experiment.branch)
        if key not in pins:
            repo, pins[key] = pin_commit(out, opts.config_path, entry.config, opts)
    assert repo is not None
    auth = app_state.resolve()
    git_repo = None if auth.workspace else repo.origin_repo
    with app_state.client(auth, git_repo=git_repo) as client:
        where = run_scope(client, auth.workspace, repo.origin_repo)  # checks the connected repo
        names = sorted({n for e in suite.entries if e.config for n in e.config.secrets.required})
        found, _ = for_submit(client, out, names, opts.secrets_file)
        _summary(out, suite, where, pins)
        if not out.confirm(f"Submit {len(suite.entries)} eval runs?", yes=opts.yes):
            out.cancelled("eval.submit")
            return
        created = _create_all(client, out, suite, pins, found.provided)
        _record(suite, created)
        if not opts.waits:
            _report_created(out, suite, created, pins)
            return
        finals = [
            (entry, client.eval_runs.wait(run.name, timeout=opts.timeout)) for entry, run in created
        ]
    _gate_all(out, suite, finals, opts.min_pass_rate, opts.junit)


def _summary(
    out: Output, suite: Suite, where: str, pins: dict[tuple[str | None, str | None], Pin]
) -> None:
    out.info(f"Workspace:  {where}")
    out.info(f"Suite:      {suite.name} ({suite.path}), {len(suite.entries)} entries")
    commits = sorted({p.commit_sha or f"branch {p.branch}" for p in pins.values()})
    out.info(f"Commit:     {', '.join(commits)}")
    rows = [
        [
            e.name,
            f"{e.settings.get('rollout')}/{e.settings.get('entrypoint')}",
            str(e.config.experiment.model_path if e.config else ""),
            str(e.settings.get("dataset", "")),
        ]
        for e in suite.entries
    ]
    if not out.json_mode:
        out.table(["entry", "rollout", "model", "dataset"], rows, keep=["entry"])


def _entry_config(suite: Suite, entry: SuiteEntry) -> Any:
    """The entry's config for the platform: its ``config`` table and the suite's name
    go into ``advanced_config`` (what a hosted rollout receives)."""
    assert entry.config is not None
    advanced = {
        **entry.config.advanced,
        **(entry.settings.get("config") or {}),
        "osmosis_suite": {"name": suite.name, "entry": entry.name},
    }
    return entry.config.model_copy(update={"advanced": advanced})


def _create_all(
    client: Client,
    out: Output,
    suite: Suite,
    pins: dict[tuple[str | None, str | None], Pin],
    provided: dict[str, str],
) -> list[tuple[SuiteEntry, CreatedRun]]:
    created = []
    for entry in suite.entries:
        assert entry.config is not None
        pin = pins[(entry.config.experiment.commit_sha, entry.config.experiment.branch)]
        mine = {n: provided[n] for n in entry.config.secrets.required if n in provided}
        run = client.eval_runs.create(
            _entry_config(suite, entry), pin.commit_sha or "", str(uuid.uuid4()), secrets=mine
        )
        out.info(f"Submitted {entry.name}: {run.name} ({run.id})")
        created.append((entry, run))
    return created


def _record(suite: Suite, created: list[tuple[SuiteEntry, CreatedRun]]) -> None:
    """Remember which runs belong to the suite (appended: a suite may be submitted again)."""
    from osmosis_client._fs import atomic_write

    path = record_path(suite.name)
    try:
        data = json.loads(path.read_text())
        runs = data["runs"] if isinstance(data.get("runs"), list) else []
    except (OSError, ValueError, AttributeError):
        runs = []
    stamp = datetime.now(timezone.utc).isoformat(timespec="seconds")
    runs.extend(
        {"entry": e.name, "id": r.id, "name": r.name, "submitted_at": stamp} for e, r in created
    )
    atomic_write(path, (json.dumps({"suite": suite.name, "runs": runs}, indent=2) + "\n").encode())


def suite_run_ids(name: str) -> set[str]:
    """Ids and names of the runs recorded for suite ``name`` (``eval list --suite``)."""
    path = record_path(name)
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        raise InvalidInputError(
            f"no hosted runs of suite {name!r} are recorded here ({path})",
            hint="suites are recorded where they were submitted from",
            code="UNKNOWN_SUITE",
        ) from None
    runs = data.get("runs") if isinstance(data, dict) else None
    found: set[str] = set()
    for run in runs if isinstance(runs, list) else []:
        if isinstance(run, dict):
            found.update(str(run[k]) for k in ("id", "name") if run.get(k))
    return found


def _report_created(
    out: Output,
    suite: Suite,
    created: list[tuple[SuiteEntry, CreatedRun]],
    pins: dict[tuple[str | None, str | None], Pin],
) -> None:
    runs: list[dict[str, Any]] = []
    for entry, run in created:
        assert entry.config is not None
        pin = pins[(entry.config.experiment.commit_sha, entry.config.experiment.branch)]
        runs.append(
            {
                "entry": entry.name,
                "id": run.id,
                "name": run.name,
                "status": run.status,
                "platform_url": run.platform_url,
                "commit_sha": pin.commit_sha,
            }
        )
    if out.operation_result(
        "eval.submit",
        resource={"suite": suite.name, "runs": runs},
        message=f"Submitted {len(runs)} runs of suite {suite.name}",
    ):
        return
    out.table(
        ["entry", "run", "url"],
        [[str(r["entry"]), str(r["name"]), str(r["platform_url"] or "")] for r in runs],
        keep=["entry", "run", "url"],
    )


def _gate_all(
    out: Output,
    suite: Suite,
    finals: list[tuple[SuiteEntry, EvalRun]],
    min_pass_rate: float | None,
    junit: Path | None = None,
) -> None:
    """Every run must pass: exit 4 when any ended failed/stopped or below the gate."""
    from osmosis_cli.commands.eval.ci import after_hosted, hosted_cases

    cases = hosted_cases([(entry.name, run) for entry, run in finals], min_pass_rate)
    failures = [f"{c.label} ({c.name}) {c.verdict}" for c in cases if c.verdict is not None]
    rows = [
        [
            c.label,
            c.name,
            c.status,
            "" if c.pass_rate is None else f"{c.pass_rate:.1%}",
            c.verdict or "ok",
        ]
        for c in cases
    ]
    resource = {
        "suite": suite.name,
        "runs": [{"entry": e.name, **run_item(run)} for e, run in finals],
    }
    if not out.operation_result("eval.submit", resource=resource, message=f"Suite {suite.name}"):
        out.table(["entry", "run", "status", "pass rate", "verdict"], rows, keep=["entry", "run"])
    after_hosted(out, junit, cases)
    if failures:
        raise EvaluationNotPassed(
            f"{len(failures)} of {len(finals)} runs did not pass: {'; '.join(failures)}"
        )
