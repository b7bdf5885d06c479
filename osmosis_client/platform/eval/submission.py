"""Submitting hosted eval runs — one eval config, or a suite (one run per entry) — by
eval-config.md's commit-pinning rules. ``osmosis eval submit`` is this module plus a
confirmation and rendering; a program calls :func:`submit_eval` / :func:`submit_suite`.

Two steps, so a caller can show what will happen and ask before anything is sent:

1. :func:`plan_submission` reads the file, pins each run (a commit, or a branch the
   platform resolves) and applies the rules: a refusal raises, a warning is kept;
2. :func:`submit_planned` checks the workspace is connected to this repository, creates
   each run with its own Idempotency-Key (a lost create response never doubles a run)
   and records a suite's runs in ``.osmosis/suites/hosted/<suite>.json`` — what
   ``eval list --suite`` reads.
"""

from __future__ import annotations

import contextlib
import json
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict

from typing_extensions import Unpack

from osmosis_client.errors import InvalidInputError, WorkspaceRequiredError
from osmosis_client.layout import HOSTED_SUITES

if TYPE_CHECKING:
    from osmosis_client.platform._client import Client
    from osmosis_client.platform.eval.eval_config import EvalConfig
    from osmosis_client.platform.eval.eval_model import Experiment
    from osmosis_client.platform.git import Pin, RepoState
    from osmosis_client.platform.models import CreatedRun

#: where a suite's hosted runs are recorded (relative to where it was submitted from)
HOSTED_RECORDS = HOSTED_SUITES


@dataclass(frozen=True)
class PinRules:
    """What a submit may pin. ``unattended``: nobody reads warnings (``--yes``, CI), so
    uncommitted changes to the submitted rollout are refused unless ``allow_dirty``."""

    unattended: bool = True
    allow_dirty: bool = False
    allow_unpushed: bool = False


@dataclass(frozen=True)
class PlannedRun:
    """One run to create: its config (a suite entry's, with the suite named in its
    ``advanced_config``) and what it pins."""

    config: EvalConfig
    pin: Pin
    entry: str | None = None  # the suite entry's name


@dataclass(frozen=True)
class SubmissionPlan:
    """What a submit will do, before anything is sent."""

    path: Path
    repo: RepoState
    runs: tuple[PlannedRun, ...]
    warnings: tuple[str, ...]
    suite: str | None = None  # the suite's name (None: one eval config)

    @property
    def secret_names(self) -> list[str]:
        """Every ``[secrets]`` name the runs require, sorted."""
        return sorted({n for run in self.runs for n in run.config.secrets.required})

    @property
    def commits(self) -> list[str]:
        """What the runs pin, as people read it: SHAs, or ``branch NAME``."""
        return sorted({r.pin.commit_sha or f"branch {r.pin.branch}" for r in self.runs})


@dataclass(frozen=True)
class SubmittedRun:
    """A created run, with what it pinned and (in a suite) its entry."""

    run: CreatedRun
    pin: Pin
    config: EvalConfig
    entry: str | None = None


def pin_problems(
    pin: Pin, rules: PinRules, sent: str | None = None
) -> tuple[InvalidInputError | None, list[str]]:
    """eval-config.md's rules for what a submit may pin: (refusal, warnings).

    An unpushed HEAD is refused unless ``allow_unpushed``. Changed tracked files of the
    submitted rollout are a warning, or — unattended, where nobody reads warnings —
    refused unless ``allow_dirty``. Other changes (tracked files elsewhere, untracked
    files under ``rollouts/``) are a warning only.
    """
    if pin.unpushed and not rules.allow_unpushed:
        return InvalidInputError(
            f"HEAD {pin.label} is not on any remote branch, so the platform cannot run it",
            hint="push first (git push), or allow an unpushed commit (allow_unpushed)",
            code="UNPUSHED",
        ), []
    warnings = []
    others = tuple(f for f in pin.other_changes if f != sent)
    if sent is not None and sent in pin.other_changes:  # its values travel in the request
        warnings.append(
            f"{sent} is not committed: its values are sent as they are in the file now "
            f"(the commit keeps another version); the platform runs the rollout at {pin.label}"
        )
    if others:
        warnings.append(
            f"files not committed are not part of the run ({_shown(others)}); "
            f"the platform runs {pin.label}"
        )
    if not pin.dirty_files:
        return None, warnings
    shown = _shown(pin.dirty_files)
    if rules.unattended and not rules.allow_dirty:
        return InvalidInputError(
            f"the rollout has uncommitted changes ({shown}); the platform runs the "
            "pinned commit without them",
            hint="commit and push them, or allow uncommitted changes (allow_dirty)",
            code="DIRTY_TREE",
        ), warnings
    return None, [
        f"uncommitted changes are not part of the run ({shown}); the platform runs {pin.label}",
        *warnings,
    ]


def _shown(files: tuple[str, ...]) -> str:
    return ", ".join(files[:5]) + (" …" if len(files) > 5 else "")


def plan_submission(path: str | Path, rules: PinRules | None = None) -> SubmissionPlan:
    """Read an eval config or a suite and pin each run; raises what the rules refuse."""
    from osmosis_client.platform.eval.eval_config import load_config
    from osmosis_client.platform.eval.suite_config import load_suite, looks_like_suite
    from osmosis_client.platform.git import inspect_repo

    path = Path(path)
    rules = rules or PinRules()
    repo = inspect_repo(path.resolve().parent)
    if not looks_like_suite(path):
        config = load_config(path)
        pin, warnings = _pin(repo, config, rules)
        return SubmissionPlan(path, repo, (PlannedRun(config, pin),), tuple(warnings))
    suite = load_suite(path)
    pins: dict[tuple[str | None, str | None], tuple[Pin, list[str]]] = {}
    runs = []
    for entry in suite.entries:
        assert entry.config is not None  # a loaded suite's entries are validated configs
        key = (entry.config.experiment.commit_sha, entry.config.experiment.branch)
        if key not in pins:
            pins[key] = _pin(repo, entry.config, rules)
        advanced = {
            **entry.config.advanced,
            **(entry.settings.get("config") or {}),
            "osmosis_suite": {"name": suite.name, "entry": entry.name},
        }  # what a hosted rollout receives: the entry's config table and the suite's name
        config = entry.config.model_copy(update={"advanced": advanced})
        runs.append(PlannedRun(config, pins[key][0], entry.name))
    unique = tuple(dict.fromkeys(w for _, found in pins.values() for w in found))
    return SubmissionPlan(path, repo, tuple(runs), unique, suite.name)


def _pin(repo: RepoState, config: EvalConfig, rules: PinRules) -> tuple[Pin, list[str]]:
    return pin_source(repo, config.experiment, config.rollout_dir, rules, config.path)


def pin_source(
    repo: RepoState,
    experiment: Experiment,
    rollout_dir: Path,
    rules: PinRules,
    config_file: Path | None = None,
) -> tuple[Pin, list[str]]:
    """What a source-backed run (eval or training) pins, by the rules: raises a refusal,
    returns the pin and its warnings. ``config_file``: the config whose values the
    request carries (its uncommitted state is sent, not left behind)."""
    from osmosis_client.platform.git import plan_pin

    rollout = rollout_dir.resolve()
    with contextlib.suppress(ValueError):
        rollout = rollout.relative_to(repo.root.resolve())
    sent = None
    if config_file is not None:
        with contextlib.suppress(ValueError):
            sent = config_file.resolve().relative_to(repo.root.resolve()).as_posix()
    pin = plan_pin(
        repo,
        commit_sha=experiment.commit_sha,
        branch=experiment.branch,
        rollout=rollout.as_posix(),
    )
    refusal, warnings = pin_problems(pin, rules, sent)
    if refusal is not None:
        raise refusal
    return pin, warnings


def check_scope(client: Client, origin: str | None) -> str:
    """Where runs will land (the client's workspace, else the one connected to
    ``origin``); refuses a workspace connected to another repository, whose platform
    would run other code."""
    workspace = client.workspace
    if not workspace:
        if not origin:
            raise WorkspaceRequiredError(
                "no workspace selected and the repository has no origin remote",
                hint="pick a workspace, or set OSMOSIS_WORKSPACE",
            )
        return f"the workspace connected to {origin}"
    match = next((w for w in client.workspaces.list() if workspace in (w.name, w.id)), None)
    if match is None or match.connected_repo is None:
        return workspace
    connected = match.connected_repo.repo_full_name.lower()
    if origin is None or origin.lower() != connected:
        raise InvalidInputError(
            f"workspace {workspace} is connected to {connected}, but this repository's origin "
            f"is {origin or '(none)'}",
            hint="submit from a clone of the connected repository, or switch workspace",
            code="REPO_MISMATCH",
        )
    return workspace


def submit_planned(
    client: Client,
    plan: SubmissionPlan,
    *,
    secrets: Mapping[str, str] | None = None,
    on_submitted: Callable[[SubmittedRun], None] | None = None,
    records: Path = HOSTED_RECORDS,
) -> list[SubmittedRun]:
    """Create every planned run (each sent only the ``secrets`` its config requires;
    a value the platform echoes back is redacted from the error). A suite's runs are
    recorded under ``records`` as they are created — a failure half-way keeps the
    record of those that exist. ``check_scope`` first: this does not."""
    from osmosis_client.platform.resources.secrets import only_required

    submitted: list[SubmittedRun] = []
    try:
        for planned in plan.runs:
            mine = only_required(secrets, planned.config.secrets.required)
            created = _create(client, planned, mine)
            done = SubmittedRun(created, planned.pin, planned.config, planned.entry)
            submitted.append(done)
            if on_submitted is not None:
                on_submitted(done)
    finally:
        if plan.suite is not None and submitted:
            record_suite(plan.suite, submitted, records)
    return submitted


def _create(client: Client, planned: PlannedRun, secrets: dict[str, str]) -> CreatedRun:
    from osmosis_client.platform.resources.secrets import redacting

    key = str(uuid.uuid4())  # one per run: the transport's retries reuse it
    with redacting(secrets.values()):
        return client.eval_runs.create(
            planned.config, planned.pin.commit_sha or "", key, secrets=secrets
        )


class SubmitKeywords(TypedDict, total=False):
    """How :func:`submit_eval` / :func:`submit_suite` submit: the pinning ``rules``
    (default: unattended, as ``--yes``), run-scoped ``secrets`` values, and where a
    suite's runs are recorded (``records``, default ``.osmosis/hosted-suites``)."""

    rules: PinRules | None
    secrets: Mapping[str, str] | None
    records: Path


def submit_eval(
    client: Client, path: str | Path, **how: Unpack[SubmitKeywords]
) -> list[SubmittedRun]:
    """Plan, check the workspace and submit, in one call: an eval config gives one run,
    a suite one per entry."""
    plan = plan_submission(path, how.get("rules"))
    check_scope(client, plan.repo.origin_repo)
    records = how.get("records", HOSTED_RECORDS)
    return submit_planned(client, plan, secrets=how.get("secrets"), records=records)


def submit_suite(
    client: Client, path: str | Path, **how: Unpack[SubmitKeywords]
) -> list[SubmittedRun]:
    """:func:`submit_eval` for a suite file: one hosted run per entry, recorded."""
    from osmosis_client.platform.eval.suite_config import looks_like_suite

    if not looks_like_suite(Path(path)):
        raise InvalidInputError(
            f"{path} is not a suite (no [[eval]] or [[ablation]] tables)",
            hint="submit one eval config with submit_eval",
            code="USAGE",
        )
    return submit_eval(client, path, **how)


# ------------------------------------------------------------------ suite records


def record_path(name: str, records: Path = HOSTED_RECORDS) -> Path:
    return records / f"{name}.json"


def record_suite(name: str, submitted: list[SubmittedRun], records: Path = HOSTED_RECORDS) -> None:
    """Remember which runs belong to suite ``name`` (appended: a suite may be submitted
    again)."""
    from osmosis_client._fs import atomic_write

    path = record_path(name, records)
    try:
        data = json.loads(path.read_text())
        runs = data["runs"] if isinstance(data.get("runs"), list) else []
    except (OSError, ValueError, AttributeError, TypeError):
        runs = []
    stamp = datetime.now(timezone.utc).isoformat(timespec="seconds")
    runs.extend(
        {"entry": s.entry, "id": s.run.id, "name": s.run.name, "submitted_at": stamp}
        for s in submitted
    )
    atomic_write(path, (json.dumps({"suite": name, "runs": runs}, indent=2) + "\n").encode())


def suite_run_ids(name: str, records: Path = HOSTED_RECORDS) -> set[str]:
    """Ids and names of the runs recorded for suite ``name`` (``eval list --suite``)."""
    path = record_path(name, records)
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise InvalidInputError(
            f"no hosted runs of suite {name!r} are recorded here ({path})",
            hint="suites are recorded where they were submitted from",
            code="UNKNOWN_SUITE",
        ) from exc
    runs = data.get("runs") if isinstance(data, dict) else None
    found: set[str] = set()
    for run in runs if isinstance(runs, list) else []:
        if isinstance(run, dict):
            found.update(str(run[k]) for k in ("id", "name") if run.get(k))
    return found


__all__ = [
    "PinRules",
    "PlannedRun",
    "SubmissionPlan",
    "SubmittedRun",
    "check_scope",
    "pin_problems",
    "pin_source",
    "plan_submission",
    "submit_eval",
    "submit_planned",
    "submit_suite",
    "suite_run_ids",
]
