"""``osmosis eval download NAME``: a hosted run's outputs on this machine (published-cli-
0.3.8.md §5.1) — resumable, verified, atomic per file, path-safe — and the results
document made from them, so ``eval compare / report / rescore`` take a hosted run's name."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from osmosis_cli.commands.eval.hosted.platform import RunArg
from osmosis_cli.context import state, workspace_top
from osmosis_cli.terminal.commands import runnable
from osmosis_cli.terminal.declare import option
from osmosis_cli.terminal.downloads import LargeYesOpt, RefetchOpt, show_download
from osmosis_cli.terminal.errors import current_output, handle_errors
from osmosis_cli.terminal.sizes import size_text
from osmosis_client.errors import InvalidInputError

if TYPE_CHECKING:
    from osmosis_cli.context import AppState
    from osmosis_cli.terminal.output import Output
    from osmosis_client import Client
    from osmosis_client.platform.eval.run_download import DownloadReport

CONFIRM_BYTES = 100 * 1024 * 1024


def runs_root() -> Path:
    """``.osmosis/evals`` at the top of the checkout holding the cwd (else the cwd)."""
    from osmosis_client.platform.eval.run_download import EVAL_OUTPUT_DIR

    return workspace_top() / EVAL_OUTPUT_DIR


def _check_not_local(root: Path) -> None:
    """A local run's directory is never filled with a hosted run's files."""
    if (root / "manifest.json").is_file() and (root / "index.jsonl").is_file():
        raise InvalidInputError(
            f"{root} holds a local run of the same name",
            hint="download elsewhere (-o DIR)",
            code="RESULTS_EXIST",
        )


@handle_errors
def download(
    ctx: typer.Context,
    name: RunArg,
    output: Annotated[
        Path | None, option("--output -o DIR", "The run's directory (default .osmosis/evals/NAME).")
    ] = None,
    types: Annotated[
        str, option("--type T[,T…]", "metrics, trajectories, artifacts, logs, or all.")
    ] = "metrics,trajectories",
    rows: Annotated[str | None, option("--rows SPEC", 'Only these rows: "3,7,10-20".')] = None,
    overwrite: RefetchOpt = False,
    yes: LargeYesOpt = False,
) -> None:
    """Download a hosted run's outputs: metrics, per-sample summaries and trajectories
    (artifacts and logs with --type). A re-run fetches only what is missing; every file is
    checked (size, and hash when the platform gives one) and written whole or not at
    all. Then `osmosis eval compare NAME OTHER` and `eval report NAME` work on it."""
    from osmosis_client.platform.eval.run_download import check_rows, parse_types

    out = current_output()
    selected = parse_types(types)
    check_rows(rows)
    app_state = state(ctx)
    client, _ = app_state.scoped_client()
    with client:
        report = fetch_run(client, out, name, output, selected, rows, overwrite=overwrite, yes=yes)
    if report is None:
        out.cancelled("eval.download")
        return
    show_download(out, report, "eval.download")
    if report.failed:
        raise typer.Exit(1)


def fetch_run(
    client: Client,
    out: Output,
    name: str,
    output: Path | None,
    types: list[str],
    rows: str | None,
    *,
    overwrite: bool = False,
    yes: bool = False,
) -> DownloadReport | None:
    """Plan, confirm (over 100 MiB), fetch; None when declined."""
    from osmosis_cli.terminal.progress import byte_progress
    from osmosis_client.platform.eval.run_download import (
        EVAL_OUTPUT_DIR,
        default_root,
        plan_download,
        run_download,
    )

    run = client.eval_runs.get(name)
    if output is not None:
        root = output.expanduser()
    else:
        root = default_root(workspace_top(), EVAL_OUTPUT_DIR, run.name, run.id)
    _check_not_local(root)
    plan = plan_download(client, run, root, types=types, rows=rows, overwrite=overwrite)
    if plan.pending_bytes > CONFIRM_BYTES:
        out.info(
            f"{len(plan.pending)} files, {size_text(plan.pending_bytes)} → {root} "
            f"(types: {', '.join(types)})"
        )
        if not out.confirm("Download these run outputs?", yes=yes):
            return None
    root.mkdir(parents=True, exist_ok=True)
    with byte_progress(out, plan.pending_bytes, "downloading") as got:
        report = run_download(client, plan, on_bytes=got)
    if report.downloaded or report.plan.skipped:
        _make_results(out, report)
    return report


def _make_results(out: Output, report: DownloadReport) -> None:
    """``results.json`` beside the downloaded files (what the results commands read)."""
    from pydantic import BaseModel

    from osmosis_local_runner.api.doors import write_hosted_results

    try:
        run = report.plan.run
        data = run.model_dump(mode="json") if isinstance(run, BaseModel) else {}
        write_hosted_results(report.plan.root, data)
    except InvalidInputError as exc:
        out.warn(f"no results document: {exc.message}", code="NO_RESULTS_DOCUMENT")


def hosted_results(app_state: AppState, out: Output, name: str) -> Path:
    """The results document of a hosted run, downloading its outputs when they are not
    here yet (what `eval compare / report / rescore` call for a run name)."""
    from osmosis_client.errors import NotFoundError
    from osmosis_client.platform.eval.run_download import EVAL_OUTPUT_DIR, default_root

    client, _ = app_state.scoped_client()
    with client:
        try:
            run = client.eval_runs.get(name)
        except NotFoundError as exc:
            raise InvalidInputError(
                f"{name} is neither a results file nor a hosted run",
                hint="give a results document, a run directory, or a hosted run's name",
                code="NOT_RESULTS",
            ) from exc
        root = default_root(workspace_top(), EVAL_OUTPUT_DIR, run.name, run.id)
        document = root / "results.json"
        if not (run.is_terminal and document.is_file()):
            out.info(f"fetching {run.name}'s samples into {root}")
            report = fetch_run(client, out, run.name, root, ["metrics", "trajectories"], None)
            if report is None or report.failed:
                raise InvalidInputError(
                    f"could not download all of {run.name}'s samples",
                    hint=f"run `{runnable('osmosis', 'eval', 'download', run.name)}` to see which",
                    code="DOWNLOAD_INCOMPLETE",
                )
    if not document.is_file():
        raise InvalidInputError(f"{run.name} has no per-sample results yet", code="NOT_RESULTS")
    return document


def results_path(ctx: typer.Context, given: Path) -> Path:
    """What a results command's argument names: a results document, a run directory
    (its ``results.json``), a local run's name, or a hosted run's name (its samples
    downloaded on demand and kept)."""
    if given.is_file():
        return given
    if given.is_dir():
        inside = given / "results.json"
        return inside if inside.is_file() and not (given / "suite.json").exists() else given
    text = str(given)
    if given.suffix == ".json" or "/" in text or "\\" in text:
        return given  # a path that is not there: the command says so
    local = runs_root() / text / "results.json"
    if local.is_file() and (local.parent / "manifest.json").is_file():
        return local
    return hosted_results(state(ctx), current_output(), text)
