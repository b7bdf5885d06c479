"""An unfinished run's page: the attempts its journal holds so far (``run/partial.py``),
written as a results document for the report's code — marked ``running`` while an
invocation holds the run (the page then reloads itself), else ``stopped``."""

from __future__ import annotations

from pathlib import Path

from osmosis_local_runner.results.document import write_document
from osmosis_local_runner.run.partial import journal_results
from osmosis_local_runner.run.rundir import RunDirectory


def partial_document(run: RunDirectory, into: Path) -> Path | None:
    """The document of what ``run``'s journal has finished, written at ``into``; None
    when there is no readable journal or nothing finished yet."""
    found = journal_results(run.results, "running" if run.held() else "stopped")
    if found is None:
        return None
    write_document(into, *found)
    return into
