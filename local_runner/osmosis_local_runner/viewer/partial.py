"""An unfinished run's page: the attempts its journal holds so far (``run/session/partial.py``),
written as a results document for the report's code — marked ``running`` while an
invocation holds the run (the page then reloads itself), else ``stopped``."""

from __future__ import annotations

import os
from pathlib import Path

from osmosis_client.errors import InvalidInputError
from osmosis_local_runner.results.documents.document import write_document
from osmosis_local_runner.results.documents.documents import ResultsFile
from osmosis_local_runner.results.documents.sources import Source
from osmosis_local_runner.run.session.partial import journal_results
from osmosis_local_runner.run.session.rundir import RunDirectory, check_name


def partial_document(run: RunDirectory, into: Path) -> Path | None:
    """The document of what ``run``'s journal has finished, written at ``into``; None
    when there is no readable journal or nothing finished yet."""
    found = journal_results(run.results, "running" if run.held() else "stopped")
    if found is None:
        return None
    write_document(into, *found)
    return into


def run_source(runs: Path, name: str, scratch: Path) -> Source:
    """A run by name under ``runs``: its document, or — while it runs, or killed before
    it wrote one — what its journal holds (written in ``scratch``). Only a run inside
    ``runs`` (no link leads out)."""
    run = RunDirectory(runs, check_name(name))
    inside = os.path.realpath(run.results).startswith(os.path.realpath(runs) + os.sep)
    found: Path | None = None
    state = run.state() if inside else "absent"
    if state == "unfinished":  # running, or killed before it wrote its document
        found = partial_document(run, scratch / f"{name}.json")
    elif state == "finished":
        found = run.results
    if found is None:
        raise InvalidInputError(
            f"no local run named {name!r} with results yet", code="RUN_NOT_FOUND"
        )
    return Source(name, ResultsFile(found))
