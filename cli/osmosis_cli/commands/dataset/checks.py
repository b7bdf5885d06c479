"""A dataset check as the CLI reports it: the problems as located lines (exit 2)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from osmosis_cli.terminal.sizes import size_text

if TYPE_CHECKING:
    from osmosis_client.platform.dataset.dataset_rules import DatasetReport


def require_valid(report: DatasetReport, lead: str) -> None:
    """Raise the report's problems as one error, one line each (``FILE:LINE: message``)."""
    from osmosis_client.errors import ConfigError, Problem

    if report.valid:
        return
    problems = []
    for where, message in report.located:
        line = int(where.split()[1]) if where and where.startswith("line ") else None
        key = where if where and line is None else ""
        problems.append(Problem(str(report.file), line, None, key, message))
    more = f" (and {report.more_errors} more)" if report.more_errors else ""
    count = len(report.errors) + report.more_errors
    raise ConfigError(
        f"{lead}: {report.file_name} has {count} problem{'s' if count > 1 else ''}{more}",
        problems,
        hint="fix the lines named below, then run `osmosis dataset validate FILE` again",
        code="VALIDATION",
        data=report.to_json(),
    )


def show_report(report: DatasetReport) -> list[str]:
    kind = f"{'metadata-mode ' if report.metadata_mode else ''}{report.extension}"
    return [
        f"File: {report.file}",
        f"Size: {size_text(report.file_size)}",
        f"Rows: {report.rows:,}" if report.checked else "Rows: not checked",
        f"Status: Valid {kind} file",
        *(f"Warning: {w}" for w in report.warnings),
    ]
