"""The project's suite runs (``.osmosis/suites/<name>/``, each with its ``suite.json``),
for the viewer: a line per suite on the home page, and a suite's entries as the sources
of its page (what ``eval report SUITE_DIR`` shows).

A ``suite.json`` names its entries' documents by path; the viewer reads only those inside
the suite's own directory (resolved: no symlink or ``..`` leads out), whatever it says.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from osmosis_client.errors import InvalidInputError
from osmosis_local_runner.results.documents.sources import (
    SUITE_DOCUMENT,
    Source,
    sources_of,
    suite_document,
)
from osmosis_local_runner.run.session.rundir import check_name
from osmosis_local_runner.run.suite.suite_settings import SUITES_DIR


def list_suites(root: Path) -> list[dict[str, Any]]:
    """Every suite run under ``root``, newest first: name, suite, status, entries."""
    base = root / SUITES_DIR
    if not base.is_dir():
        return []
    found = []
    for directory in base.iterdir():
        document = _document(directory)
        if document is None:
            continue
        listed = document.get("entries")
        entries: list[Any] = listed if isinstance(listed, list) else []
        found.append(
            {
                "name": directory.name,
                "suite": str(document.get("suite") or directory.name),
                "status": str(document.get("status") or "unknown"),
                "entries": len(entries),
                "finished": len(
                    [e for e in entries if isinstance(e, dict) and e.get("status") == "finished"]
                ),
                "modified": directory.joinpath(SUITE_DOCUMENT).stat().st_mtime,
            }
        )
    return sorted(found, key=lambda s: (-s["modified"], s["name"]))


def suite_sources(root: Path, name: str) -> list[Source]:
    """A suite run's entries (by its directory's name), every document inside it."""
    base = os.path.realpath(root / SUITES_DIR)
    directory = root / SUITES_DIR / check_name(name)
    inside = os.path.realpath(directory)
    if not inside.startswith(base + os.sep) or _document(directory) is None:
        raise InvalidInputError(f"no suite run named {name!r}", code="RUN_NOT_FOUND")
    sources = sources_of([directory])
    for source in sources:
        if not os.path.realpath(source.results.path).startswith(inside + os.sep):
            raise InvalidInputError(
                f"suite {name!r} names a document outside its directory", code="NOT_RESULTS"
            )
    return sources


def _document(directory: Path) -> dict[str, Any] | None:
    if directory.name.startswith(".") or directory.is_symlink():
        return None
    return suite_document(directory)


__all__ = ["list_suites", "suite_sources"]
