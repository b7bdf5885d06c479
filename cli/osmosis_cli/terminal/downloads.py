"""A platform download's outcome as every download command says it (eval runs,
benchmark runs)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

from osmosis_cli.terminal.declare import option
from osmosis_cli.terminal.sizes import size_text

if TYPE_CHECKING:
    from osmosis_cli.terminal.output import Output
    from osmosis_client.platform.eval.run_download import DownloadReport

#: the options every download command takes: fetch all again, and no question when large
RefetchOpt = Annotated[
    bool, option("--overwrite", "Fetch every file again, replacing what is there.")
]
LargeYesOpt = Annotated[bool, option("--yes -y", "Do not ask (over 100 MiB).")]


def show_download(
    out: Output, report: DownloadReport, operation: str, scope: dict[str, object] | None = None
) -> None:
    """A download's outcome (eval, benchmark runs): the operation envelope or its line,
    then each file that failed."""
    count = len(report.downloaded)
    message = (
        f"Downloaded {count} file{'s' * (count != 1)} ({size_text(report.bytes_downloaded)}) "
        f"to {report.plan.root}"
    )
    if report.plan.skipped:
        message += f" ({len(report.plan.skipped)} already up to date)"
    if report.failed:
        message += f" ({len(report.failed)} failed; re-run to retry)"
    resource = {**report.to_json(), **(scope or {})}
    if not out.operation_result(
        operation, status=report.status, resource=resource, message=message
    ):
        out.info(message)
    elif out.json_mode:
        return
    for path, problem in report.failed:
        out.print(f"Failed: {path} — {problem}")
