"""What every hosted command shares: a client scoped by the selected workspace (else the
repository's origin), and what a submit may pin (eval-config.md's commit-pinning rules)."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from osmosis_cli.terminal.output import ConfirmationRequired
from osmosis_client.errors import InvalidInputError, WorkspaceRequiredError

if TYPE_CHECKING:
    from osmosis_cli.context import AppState
    from osmosis_cli.terminal.output import Output
    from osmosis_client import Client
    from osmosis_client.platform.eval_config import EvalConfig
    from osmosis_client.platform.git import Pin, RepoState
    from osmosis_client.platform.models import EvalRun, RunMetrics


class PinFlags(Protocol):
    """The flags that decide what a submit may pin."""

    yes: bool
    allow_dirty: bool
    allow_unpushed: bool


def scoped_client(app_state: AppState) -> tuple[Client, str | None]:
    """A client scoped by the selected workspace, else by the cwd's git origin."""
    return app_state.scoped_client()


def pin_problems(
    pin: Pin, *, yes: bool, allow_dirty: bool, allow_unpushed: bool
) -> tuple[InvalidInputError | None, list[str]]:
    """eval-config.md's rules for what a submit may pin: (refusal, warnings).

    An unpushed HEAD is refused unless ``--allow-unpushed``. Changed tracked files of
    the submitted rollout are a warning, or — with ``--yes``, where nobody reads
    warnings — refused unless ``--allow-dirty``. Other changes (tracked files elsewhere,
    untracked files under ``rollouts/``) are a warning only.
    """
    if pin.unpushed and not allow_unpushed:
        return InvalidInputError(
            f"HEAD {pin.label} is not on any remote branch, so the platform cannot run it",
            hint="push first (git push), or pass --allow-unpushed",
            code="UNPUSHED",
        ), []
    warnings = []
    if pin.other_changes:
        warnings.append(
            f"files not committed are not part of the run ({_shown(pin.other_changes)}); "
            f"the platform runs {pin.label}"
        )
    if not pin.dirty_files:
        return None, warnings
    shown = _shown(pin.dirty_files)
    if yes and not allow_dirty:
        return InvalidInputError(
            f"the rollout has uncommitted changes ({shown}); the platform runs the "
            "pinned commit without them",
            hint="commit and push them, or pass --allow-dirty",
            code="DIRTY_TREE",
        ), warnings
    return None, [
        f"uncommitted changes are not part of the run ({shown}); the platform runs {pin.label}",
        *warnings,
    ]


def _shown(files: tuple[str, ...]) -> str:
    return ", ".join(files[:5]) + (" …" if len(files) > 5 else "")


def pin_commit(
    out: Output, config_path: Path, config: EvalConfig, opts: PinFlags
) -> tuple[RepoState, Pin]:
    """What the run will pin (a commit, or a branch), refused or warned about by the
    rules of :func:`pin_problems`."""
    from osmosis_client.platform.git import inspect_repo, plan_pin

    repo = inspect_repo(config_path.resolve().parent)
    exp = config.experiment
    rollout = config.rollout_dir.resolve()
    with contextlib.suppress(ValueError):
        rollout = rollout.relative_to(repo.root.resolve())
    pin = plan_pin(repo, commit_sha=exp.commit_sha, branch=exp.branch, rollout=rollout.as_posix())
    refusal, warnings = pin_problems(
        pin, yes=opts.yes, allow_dirty=opts.allow_dirty, allow_unpushed=opts.allow_unpushed
    )
    if refusal is not None:
        raise refusal
    for warning in warnings:
        out.warn(warning)
    return repo, pin


def run_scope(client: Client, workspace: str | None, origin: str | None) -> str:
    """Where the run will land; refuses a workspace connected to another repository."""
    if workspace:
        check_connected_repo(client, workspace, origin)
        return workspace
    if not origin:
        raise WorkspaceRequiredError(
            "no workspace selected and the repository has no origin remote",
            hint="pick a workspace with `osmosis workspace switch NAME`, or set OSMOSIS_WORKSPACE",
        )
    return f"the workspace connected to {origin}"


def check_connected_repo(client: Client, workspace: str, origin: str | None) -> None:
    """The workspace's connected repo must be this repo, or the platform runs other code."""
    match = next((w for w in client.workspaces.list() if workspace in (w.name, w.id)), None)
    if match is None or match.connected_repo is None:
        return
    connected = match.connected_repo.repo_full_name.lower()
    if origin is None or origin.lower() != connected:
        raise InvalidInputError(
            f"workspace {workspace} is connected to {connected}, but this repository's origin "
            f"is {origin or '(none)'}",
            hint="submit from a clone of the connected repository, or switch workspace",
            code="REPO_MISMATCH",
        )


def refuse_unconfirmed(out: Output, opts: PinFlags) -> None:
    """No TTY and no ``--yes``: refuse before anything is sent, never hang."""
    if not opts.yes and not out.interactive:
        raise ConfirmationRequired(
            "submitting needs confirmation but stdin is not a terminal",
            hint="pass --yes to submit non-interactively",
        )


def wait_for_run(client: Client, out: Output, name: str, timeout: float | None) -> EvalRun:
    last: list[str] = []

    def on_update(run: EvalRun, metrics: RunMetrics | None) -> None:
        line = _progress_line(run, metrics)
        if not last or last[-1] != line:
            last.append(line)
            out.info(line)

    return client.eval_runs.wait(name, timeout=timeout, on_update=on_update)


def _progress_line(run: EvalRun, metrics: RunMetrics | None) -> str:
    line = f"{run.name}: {run.status}"
    overview = metrics.overview if metrics else None
    if overview and overview.total_samples:
        line += f" {overview.completed_samples or 0}/{overview.total_samples}"
        if overview.pass_rate is not None:
            line += f" pass rate {overview.pass_rate:.1%}"
    elif run.results and run.results.pass_rate is not None:
        line += f" pass rate {run.results.pass_rate:.1%}"
    return line
