"""What every hosted eval command shares: a client scoped by the selected workspace (else
the repository's origin), and waiting with progress lines."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from osmosis_cli.context import AppState
    from osmosis_cli.terminal.output import Output
    from osmosis_client import Client
    from osmosis_client.platform.models import EvalRun, RunMetrics

#: the run every hosted command names (info, stop, logs, download, retry)
RunArg = Annotated[str, typer.Argument(metavar="NAME_OR_ID", help="A hosted run's name or id.")]


def scoped_client(app_state: AppState) -> tuple[Client, str | None]:
    """A client scoped by the selected workspace, else by the cwd's git origin."""
    return app_state.scoped_client()


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
