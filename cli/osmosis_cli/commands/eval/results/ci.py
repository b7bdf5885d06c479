"""CI artefacts written after a command: ``--junit PATH`` and, when the
``GITHUB_STEP_SUMMARY`` variable names a file, a Markdown summary appended to it.

Neither may lose the run: a JUnit path is checked before anything runs (exit 2), and
a step summary that cannot be written is a warning.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from osmosis_cli.terminal.output import Output
    from osmosis_client.platform.models import EvalRun
    from osmosis_local_runner.results.documents.sources import Source
    from osmosis_local_runner.results.reports.ci_reports import HostedCase

STEP_SUMMARY = "GITHUB_STEP_SUMMARY"


def check_junit_path(path: Path | None, results: Path | None = None) -> None:
    """Before a run: the JUnit path must be a creatable file, never the results."""
    if path is None:
        return
    from osmosis_client.errors import InvalidInputError

    def refuse(message: str) -> InvalidInputError:
        return InvalidInputError(message, hint="choose another --junit PATH", code="JUNIT_PATH")

    if path.is_dir():
        raise refuse(f"the JUnit path {path} is a directory")
    if results is not None and path.resolve() == results.resolve():
        raise refuse(f"the JUnit path {path} is the results document")
    parent = next((p for p in (path.parent, *path.parent.parents) if p.exists()), None)
    if parent is None or not parent.is_dir() or not os.access(parent, os.W_OK | os.X_OK):
        raise refuse(f"cannot create {path}: {parent} is not a writable directory")


def _write_junit(out: Output, path: Path, data: bytes) -> None:
    from osmosis_client._fs import atomic_write

    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, data, mode=0o644)
    out.info(f"JUnit XML written to {path}")


def step_summary(out: Output, markdown: str) -> None:
    """Append to ``$GITHUB_STEP_SUMMARY`` when it is set (a warning if it can't be)."""
    target = os.environ.get(STEP_SUMMARY)
    if not target:
        return
    try:
        with open(target, "a", encoding="utf-8") as handle:
            handle.write(markdown.rstrip("\n") + "\n\n")
    except OSError as exc:
        out.warn(f"cannot append to {STEP_SUMMARY} ({exc.strerror or exc})")


def after_local(
    out: Output,
    junit: Path | None,
    sources: Sequence[Source],
    *,
    suite: dict[str, Any] | None = None,
) -> None:
    """After a local run (or suite): JUnit and the step summary from its documents (their
    modules imported only when asked for)."""
    if junit is not None:
        from osmosis_local_runner.results.reports.ci_reports import junit_xml

        name = f"osmosis eval suite {suite['suite']}" if suite else "osmosis eval"
        _write_junit(out, junit, junit_xml(sources, name=name))
    if not os.environ.get(STEP_SUMMARY):
        return
    from osmosis_local_runner.results.reports.markdown import run_markdown, suite_markdown

    if suite is None:
        step_summary(out, "## osmosis eval run\n\n" + "\n".join(run_markdown(s) for s in sources))
        return
    parts = [suite_markdown(suite["suite"], suite["entries"])]
    for source in sources:
        parts.append(
            f"<details><summary>{source.label}</summary>\n\n{run_markdown(source)}\n</details>"
        )
    step_summary(out, "\n".join(parts))


def local_sources(entries: Sequence[tuple[str | None, Path]]) -> list[Source]:
    """The documents that exist (an entry that failed before writing has none); a label
    of None: the document's own (its run's name)."""
    from osmosis_local_runner.results.documents.documents import ResultsFile
    from osmosis_local_runner.results.documents.sources import Source

    found = [(label, ResultsFile(path)) for label, path in entries if path.is_file()]
    return [Source(label or document.label, document) for label, document in found]


def hosted_cases(
    runs: Sequence[tuple[str, EvalRun]], min_pass_rate: float | None
) -> list[HostedCase]:
    from osmosis_local_runner.results.reports.ci_reports import HostedCase

    return [
        HostedCase(
            label=label,
            name=run.name,
            status=run.status,
            pass_rate=run.results.pass_rate if run.results else None,
            score=run.results.score if run.results else None,
            url=run.platform_url,
            verdict=hosted_verdict(run, min_pass_rate),
        )
        for label, run in runs
    ]


def hosted_verdict(run: EvalRun, min_pass_rate: float | None) -> str | None:
    """Why a finished hosted run does not pass (None: it passes)."""
    if run.status in ("failed", "stopped"):
        return f"ended {run.status}"
    if min_pass_rate is None:
        return None
    rate = run.results.pass_rate if run.results else None
    if rate is None:
        return "reported no pass rate"
    if rate < min_pass_rate:
        return f"pass rate {rate:.4g} is below --min-pass-rate {min_pass_rate:g}"
    return None


def after_hosted(out: Output, junit: Path | None, cases: Sequence[HostedCase]) -> None:
    from osmosis_local_runner.results.reports.ci_reports import hosted_junit_xml
    from osmosis_local_runner.results.reports.markdown import hosted_markdown

    if junit is not None:
        _write_junit(out, junit, hosted_junit_xml(cases))
    step_summary(out, hosted_markdown(cases))
