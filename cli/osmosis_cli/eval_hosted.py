"""``osmosis eval submit / list / info / stop / logs / init``: hosted eval runs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from osmosis_cli._typer import Command
from osmosis_cli.context import AppState, state
from osmosis_cli.errors import EvaluationNotPassed, current_output, handle_errors
from osmosis_cli.output import ConfirmationRequired
from osmosis_client._redact import safe_json, safe_text
from osmosis_client.errors import InvalidInputError, WorkspaceRequiredError

if TYPE_CHECKING:
    from osmosis_cli.output import Output
    from osmosis_client import Client
    from osmosis_client.platform.eval_config import EvalConfig
    from osmosis_client.platform.git import Pin, RepoState
    from osmosis_client.platform.models import CreatedRun, EvalRun, LogEntry, RunMetrics

JsonOpt = Annotated[bool, typer.Option("--json", help="Print one JSON document on stdout.")]
YesOpt = Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")]


def register(app: typer.Typer) -> None:
    app.command("submit", cls=Command)(submit)
    app.command("list", cls=Command)(list_runs)
    app.command("info", cls=Command)(info)
    app.command("stop", cls=Command)(stop)
    app.command("init", cls=Command)(init)
    app.command("logs", cls=Command)(logs)


def _scoped_client(app_state: AppState) -> tuple[Client, str | None]:
    """A client scoped by the selected workspace, else by the cwd's git origin."""
    from osmosis_client.platform.git import origin_repo

    auth = app_state.resolve()
    git_repo = None if auth.workspace else origin_repo(Path.cwd())
    return app_state.client(auth, git_repo=git_repo), auth.workspace


# ------------------------------------------------------------------- submit


@handle_errors
def submit(
    ctx: typer.Context,
    config_path: Annotated[Path, typer.Argument(metavar="CONFIG", help="configs/eval/NAME.toml")],
    yes: YesOpt = False,
    allow_dirty: Annotated[
        bool, typer.Option("--allow-dirty", help="Submit even with uncommitted changes.")
    ] = False,
    allow_unpushed: Annotated[
        bool, typer.Option("--allow-unpushed", help="Submit a HEAD no remote branch contains.")
    ] = False,
    wait: Annotated[bool, typer.Option("--wait", help="Wait for the run to finish.")] = False,
    timeout: Annotated[
        float | None,
        typer.Option(
            "--timeout",
            min=0,
            metavar="SECONDS",
            help="Stop waiting after SECONDS (the run goes on).",
        ),
    ] = None,
    min_pass_rate: Annotated[
        float | None,
        typer.Option(
            "--min-pass-rate",
            min=0.0,
            max=1.0,
            metavar="X",
            help="Exit 4 below this pass rate (implies --wait).",
        ),
    ] = None,
    junit: Annotated[
        Path | None,
        typer.Option(
            "--junit",
            metavar="PATH",
            help="With --wait: JUnit XML with one test case per run (its verdict).",
        ),
    ] = None,
    json_output: JsonOpt = False,
) -> None:
    """Submit a hosted eval run pinned to your pushed commit (a suite: one run per entry)."""
    from osmosis_cli.ci_outputs import check_junit_path
    from osmosis_client.platform.eval_config import load_config
    from osmosis_client.platform.suite_config import looks_like_suite

    app_state = state(ctx)
    out = current_output()
    if junit is not None and not (wait or min_pass_rate is not None):
        raise InvalidInputError(
            "--junit needs --wait: the verdicts exist once the runs end",
            hint="add --wait (or --min-pass-rate)",
            code="USAGE",
        )
    check_junit_path(junit)
    if looks_like_suite(config_path):
        from osmosis_cli.suite_hosted import submit_suite

        submit_suite(
            app_state,
            out,
            config_path,
            yes=yes,
            allow_dirty=allow_dirty,
            allow_unpushed=allow_unpushed,
            wait=wait,
            timeout=timeout,
            min_pass_rate=min_pass_rate,
            junit=junit,
        )
        return
    config = load_config(config_path)
    if not yes and not out.interactive:
        raise ConfirmationRequired(
            "submitting needs confirmation but stdin is not a terminal",
            hint="pass --yes to submit non-interactively",
        )
    repo, pin = _pin(out, config_path, config, yes, allow_dirty, allow_unpushed)
    auth = app_state.resolve()
    git_repo = None if auth.workspace else repo.origin_repo
    with app_state.client(auth, git_repo=git_repo) as client:
        where = _scope(client, auth.workspace, repo.origin_repo)
        _summary(out, config_path, where, pin, config)
        if not out.confirm("Submit this eval run?", yes=yes):
            raise InvalidInputError("submission cancelled", code="CANCELLED")
        created = _create(client, out, config, pin)
        if not (wait or min_pass_rate is not None):
            _report_created(out, created, pin, auth.workspace)
            return
        final = _wait(client, out, created.name, timeout)
    _gate(out, final, min_pass_rate, junit)


def pin_problems(
    pin: Pin, *, yes: bool, allow_dirty: bool, allow_unpushed: bool
) -> tuple[InvalidInputError | None, list[str]]:
    """eval-config.md's rules for what a submit may pin: (refusal, warnings).

    An unpushed HEAD is refused unless ``--allow-unpushed``; a dirty tree is a warning,
    or — with ``--yes``, where nobody reads warnings — refused unless ``--allow-dirty``.
    """
    if pin.unpushed and not allow_unpushed:
        return InvalidInputError(
            f"HEAD {pin.label} is not on any remote branch, so the platform cannot run it",
            hint="push first (git push), or pass --allow-unpushed",
            code="UNPUSHED",
        ), []
    if not pin.dirty_files:
        return None, []
    shown = ", ".join(pin.dirty_files[:5]) + (" …" if len(pin.dirty_files) > 5 else "")
    if yes and not allow_dirty:
        return InvalidInputError(
            f"the working tree has uncommitted changes ({shown}); the platform runs the "
            "pinned commit without them",
            hint="commit and push them, or pass --allow-dirty",
            code="DIRTY_TREE",
        ), []
    return None, [
        f"uncommitted changes are not part of the run ({shown}); the platform runs {pin.label}"
    ]


def _pin(
    out: Output,
    config_path: Path,
    config: EvalConfig,
    yes: bool,
    allow_dirty: bool,
    allow_unpushed: bool,
) -> tuple[RepoState, Pin]:
    from osmosis_client.platform.git import inspect_repo, plan_pin

    repo = inspect_repo(config_path.resolve().parent)
    exp = config.experiment
    pin = plan_pin(repo, commit_sha=exp.commit_sha, branch=exp.branch)
    refusal, warnings = pin_problems(
        pin, yes=yes, allow_dirty=allow_dirty, allow_unpushed=allow_unpushed
    )
    if refusal is not None:
        raise refusal
    for warning in warnings:
        out.warn(warning)
    return repo, pin


def _scope(client: Client, workspace: str | None, origin: str | None) -> str:
    """Where the run will land; refuses a workspace connected to another repository."""
    if workspace:
        _check_connected_repo(client, workspace, origin)
        return workspace
    if not origin:
        raise WorkspaceRequiredError(
            "no workspace selected and the repository has no origin remote",
            hint="pick a workspace with `osmosis workspace switch NAME`, or set OSMOSIS_WORKSPACE",
        )
    return f"the workspace connected to {origin}"


def _create(client: Client, out: Output, config: EvalConfig, pin: Pin) -> CreatedRun:
    import uuid

    created = client.eval_runs.create(config, pin.commit_sha or "", str(uuid.uuid4()))
    out.info(f"Submitted {created.name} ({created.id})")
    if created.platform_url:
        out.info(f"  {created.platform_url}")
    return created


def _report_created(out: Output, created: CreatedRun, pin: Pin, workspace: str | None) -> None:
    if out.json_mode:
        out.emit_json(
            {
                "id": created.id,
                "name": created.name,
                "status": created.status,
                "platform_url": created.platform_url,
                "commit_sha": pin.commit_sha,
                "workspace": workspace,
            }
        )
    else:
        out.print(created.name)


def _check_connected_repo(client: Client, workspace: str, origin: str | None) -> None:
    """The workspace's connected repo must be this repo, or the platform runs other code."""
    from osmosis_client.errors import InvalidInputError

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


def _summary(out: Output, path: Path, where: str, pin: Pin, config: EvalConfig) -> None:
    exp = config.experiment
    out.info(f"Workspace:  {where}")
    out.info(f"Config:     {path}")
    from osmosis_local_runner.run.overrides import describe_rollout, detect_mode

    out.info(f"Rollout:    {describe_rollout(config, detect_mode(config))}")
    out.info(f"Model:      {exp.model_path}")
    out.info(f"Dataset:    {exp.dataset}")
    out.info(f"Commit:     {pin.commit_sha or f'branch {pin.branch}'}")
    if config.secrets.required:
        out.info(f"Secrets:    {', '.join(config.secrets.required)} (provided by the platform)")


def _wait(client: Client, out: Output, name: str, timeout: float | None) -> EvalRun:
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


def _gate(
    out: Output, run: EvalRun, min_pass_rate: float | None, junit: Path | None = None
) -> None:
    """Print the final run (and the CI artefacts); exit 4 when it failed, stopped or
    scored below the gate."""
    from osmosis_cli.ci_outputs import after_hosted, hosted_cases

    if out.json_mode:
        out.emit_json(run.to_json())
    else:
        _render_run(out, run)
    cases = hosted_cases([(run.name, run)], min_pass_rate)
    after_hosted(out, junit, cases)
    if cases[0].verdict is not None:
        raise EvaluationNotPassed(f"run {run.name} {cases[0].verdict}")


# --------------------------------------------------------------------- list


@handle_errors
def list_runs(
    ctx: typer.Context,
    limit: Annotated[
        int, typer.Option("--limit", min=1, metavar="N", help="How many runs to show.")
    ] = 20,
    all_: Annotated[bool, typer.Option("--all", help="Every run (follows all pages).")] = False,
    status: Annotated[
        str | None,
        typer.Option(
            "--status", metavar="STATUS", help="pending, running, finished, failed or stopped."
        ),
    ] = None,
    suite: Annotated[
        str | None,
        typer.Option(
            "--suite", metavar="NAME", help="Only the runs of a suite submitted from here."
        ),
    ] = None,
    json_output: JsonOpt = False,
) -> None:
    """Recent eval runs of the workspace."""
    from osmosis_client.platform.models import RUN_STATUSES
    from osmosis_client.platform.resources.eval_calls import PAGE_LIMIT

    if status is not None and status not in RUN_STATUSES:
        raise InvalidInputError(
            f"unknown status {status!r}",
            hint="use one of " + ", ".join(s for s in RUN_STATUSES if s != "queued"),
            code="USAGE",
        )
    out = current_output()
    members: set[str] | None = None
    if suite is not None:
        from osmosis_cli.suite_hosted import suite_run_ids

        members = suite_run_ids(suite)
    client, _ = _scoped_client(state(ctx))
    runs: list[EvalRun] = []
    total: int | None = None
    offset: int | None = None
    page_size = PAGE_LIMIT if all_ or members is not None else min(PAGE_LIMIT, limit)
    with client:
        for page in client.eval_runs.pages(status, page_size):
            total = page.total_count
            found = page.eval_runs
            if members is not None:  # a suite's runs: looked for across every page
                found = [r for r in found if r.id in members or r.name in members]
            runs.extend(found)
            offset = page.next_offset if page.has_more else None
            if not all_ and len(runs) >= limit:
                break
    if members is not None:
        total, offset = len(runs), None
    if not all_ and len(runs) > limit:
        runs, offset = runs[:limit], limit  # offsets count runs from the newest
    doc = {
        "eval_runs": [r.to_json() for r in runs],
        "total_count": total,
        "has_more": False if all_ else offset is not None,
        "next_offset": None if all_ else offset,
    }
    if out.json_mode:
        out.emit_json(doc)
        return
    _render_list(out, runs, status)
    if doc["has_more"]:
        out.info(f"… more runs: use --limit {limit * 2} or --all")


def _render_list(out: Output, runs: list[EvalRun], status: str | None) -> None:
    if not runs:
        if status:
            out.info(f"No {status} eval runs.")
        else:
            out.info("No eval runs yet: submit one with `osmosis eval submit CONFIG`.")
        return
    out.table(
        ["name", "status", "model", "dataset", "score", "pass rate", "created"],
        [
            [
                r.name,
                r.status,
                r.model or "",
                r.dataset or "",
                _num(r.results.score if r.results else None),
                _pct(r.results.pass_rate if r.results else None),
                _when(r.created_at),
            ]
            for r in runs
        ],
        keep=("name",),  # the key users pass to `eval info`: never truncated
    )


def _num(value: float | None) -> str:
    from osmosis_local_runner.results.scoring import score_text

    return score_text(value, "")


def _pct(value: float | None) -> str:
    return "" if value is None else f"{value:.1%}"


def _when(value: str | None) -> str:
    if not value:
        return ""
    return value.replace("T", " ")[:16]


# --------------------------------------------------------------------- info


@handle_errors
def info(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(metavar="NAME_OR_ID", help="A run's name or id.")],
    watch: Annotated[bool, typer.Option("--watch", help="Follow until the run ends.")] = False,
    json_output: JsonOpt = False,
) -> None:
    """Details and results of one run (read-only)."""
    app_state = state(ctx)
    out = current_output()
    client, _ = _scoped_client(app_state)
    with client:
        run = _wait(client, out, name, None) if watch else client.eval_runs.get(name)
    if out.json_mode:
        out.emit_json(run.to_json())
    else:
        _render_run(out, run)


@handle_errors
def logs(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(metavar="NAME_OR_ID", help="A run's name or id.")],
    follow: Annotated[
        bool, typer.Option("--follow", "-f", help="Keep printing new entries until the run ends.")
    ] = False,
    limit: Annotated[
        int,
        typer.Option(
            "--limit", min=1, max=10_000, metavar="N", help="How many of the newest entries."
        ),
    ] = 50,
    json_output: Annotated[
        bool, typer.Option("--json", help="One JSON object per entry and line (JSON Lines).")
    ] = False,
) -> None:
    """A hosted run's logs: the newest entries (oldest of them first), or --follow to
    tail them until the run ends."""
    app_state = state(ctx)
    out = current_output()
    client, _ = _scoped_client(app_state)

    def show(entries: list[LogEntry]) -> None:
        for entry in entries:
            if out.json_mode:
                out.stdout.write(safe_json(json.dumps(entry.to_json(), ensure_ascii=False)) + "\n")
            else:
                out.stdout.write(safe_text(_log_line(entry)) + "\n")
        out.stdout.flush()

    with client:
        if not follow:
            entries = client.eval_runs.recent_logs(name, limit)
            if not entries:
                out.info(f"no log entries for {name} yet")
            show(entries)
            return
        final = client.eval_runs.follow_logs(name, show, limit=min(limit, 200))
    out.info(f"{final.name}: {final.status}")


def _log_line(entry: LogEntry) -> str:
    line = f"{entry.timestamp}  {entry.level.upper():<7} {entry.step or '-':<10} {entry.message}"
    if entry.details:
        details = json.dumps(entry.details, ensure_ascii=False, separators=(",", ":"))
        line += f"  {details if len(details) <= 200 else details[:199] + '…'}"
    return line


def _render_run(out: Output, run: EvalRun) -> None:
    rows: list[tuple[str, str]] = [
        ("Name", run.name),
        ("ID", run.id),
        ("Status", run.status),
        ("Model", run.model or ""),
        ("Dataset", run.dataset or ""),
        ("Rollout", f"{run.rollout or ''}/{run.entrypoint or ''}".strip("/")),
        ("Commit", run.commit_sha or (f"branch {run.branch}" if run.branch else "")),
        ("Created", _when(run.created_at)),
        ("Completed", _when(run.completed_at)),
        ("URL", run.platform_url or ""),
    ]
    if run.config:
        settings = run.config.model_dump(exclude={"model_path"}, exclude_none=True)
        if settings:
            rows.append(("Config", " ".join(f"{k}={v}" for k, v in settings.items())))
    results = run.results
    if results:
        rate = _pct(results.pass_rate)
        if results.graded is not None:
            rate += f" ({results.passed}/{results.graded} graded, {results.skipped or 0} skipped)"
        rows += [("Score", _num(results.score)), ("Pass rate", rate)]
        if results.sampled_rows is not None:
            total = results.total_dataset_rows
            rows.append(("Rows", f"{results.sampled_rows}" + (f" of {total}" if total else "")))
        if results.total_tokens is not None:
            rows.append(("Tokens", f"{results.total_tokens:,}"))
        stats = results.reward_stats
        if stats and stats.pass_at_k:
            ks = sorted(stats.pass_at_k.items(), key=lambda kv: int(kv[0]))
            rows.append(("pass@k", "  ".join(f"@{k}={_num(v)}" for k, v in ks)))
        if stats:
            parts = [
                f"{label} {_num(value)}"
                for label, value in (
                    ("mean", stats.mean),
                    ("std", stats.std),
                    ("min", stats.min),
                    ("median", stats.median),
                    ("max", stats.max),
                )
                if value is not None
            ]
            if parts:
                rows.append(("Reward", " ".join(parts)))
    for label, value in rows:
        if value:
            out.print(f"{label + ':':<11} {value}")


# --------------------------------------------------------------------- stop


@handle_errors
def stop(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(metavar="NAME_OR_ID", help="A run's name or id.")],
    yes: YesOpt = False,
    json_output: JsonOpt = False,
) -> None:
    """Stop a pending or running run."""
    from osmosis_client.errors import ConflictError, InvalidInputError, OsmosisError

    app_state = state(ctx)
    out = current_output()
    if not out.confirm(f"Stop eval run {name}?", yes=yes):
        raise InvalidInputError("stop cancelled", code="CANCELLED")
    client, _ = _scoped_client(app_state)
    with client:
        try:
            run = client.eval_runs.stop(name)
        except ConflictError:
            current = client.eval_runs.get(name)
            raise OsmosisError(
                f"run {current.name} is already {current.status}",
                hint="only pending or running runs can be stopped",
                code="ALREADY_TERMINAL",
            ) from None
    if out.json_mode:
        out.emit_json(run.to_json())
    else:
        out.info(f"Stop requested: {run.name} is {run.status}")


# --------------------------------------------------------------------- init


@handle_errors
def init(
    ctx: typer.Context,
    name: Annotated[
        str,
        typer.Argument(metavar="NAME", help="The evaluation's name (config, rollout, dataset)."),
    ],
    example: Annotated[
        str | None,
        typer.Option(
            "--example",
            metavar="EXAMPLE",
            help="Copy a bundled example workspace into ./NAME instead (e.g. quickstart).",
        ),
    ] = None,
) -> None:
    """Scaffold a runnable evaluation (config, rollout stub, sample data, mock model)."""
    from osmosis_cli.scaffold import copy_example, example_configs, scaffold

    out = current_output()
    if example is not None:
        folder = copy_example(example, name, Path.cwd())
        out.info(f"Wrote the {example} example to {folder}/")
        for config in example_configs(folder):
            out.info(f"Run it: cd {name} && osmosis eval run {config.relative_to(folder)}")
        return
    written = scaffold(name, Path.cwd())
    for path in written:
        out.info(f"Wrote {path.relative_to(Path.cwd())}")
    out.info(
        f"Run it offline: osmosis eval run configs/eval/{name}.toml "
        "(then point model_path at a real model)"
    )
