"""What the results commands read: results documents, or a suite run's directory (its
``suite.json`` names the entries' documents, in order)."""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from osmosis_client.errors import InvalidInputError
from osmosis_client.layout import EVALS as RUNS
from osmosis_local_runner.results.documents.documents import ResultsFile

SUITE_DOCUMENT = "suite.json"


@dataclass
class Source:
    """A results document and the name its suites carry (the file's stem, a suite
    entry's name)."""

    label: str
    results: ResultsFile
    #: a suite entry's: the suite's name and its entry in suite.json (settings, sweep)
    suite: str | None = None
    entry: dict[str, Any] = field(default_factory=dict)


def sources_of(paths: Sequence[Path]) -> list[Source]:
    """Documents from paths; a directory is a suite directory (its entries, in order)."""
    found: list[Source] = []
    for path in paths:
        if path.is_dir():
            found.extend(_suite_sources(path))
        else:
            document = ResultsFile(path)
            found.append(Source(document.label, document))
    if not found:
        raise InvalidInputError("nothing to report", hint="give results documents")
    return unique_labels(found)


def unique_labels(sources: list[Source]) -> list[Source]:
    """Sources that share a label (a.json and other/a.json, a run beside itself) told
    apart: `` (2)`` after the second, and so on."""
    labels: dict[str, int] = defaultdict(int)
    for source in sources:
        labels[source.label] += 1
        if labels[source.label] > 1:
            source.label = f"{source.label} ({labels[source.label]})"
    return sources


def suite_document(directory: Path) -> dict[str, Any] | None:
    """A suite run's ``suite.json`` when it is one: an object whose ``entries`` are
    objects (never read through a link, never more than 16 MB)."""
    from osmosis_client._fs import read_capped

    raw = read_capped(directory / SUITE_DOCUMENT, 16 << 20)
    try:
        document = json.loads(raw) if raw is not None else None
    except (ValueError, RecursionError):
        return None
    if not isinstance(document, dict):
        return None
    entries = document.get("entries")
    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        return None
    return document


def _suite_sources(directory: Path) -> list[Source]:
    document = suite_document(directory)
    if document is None:
        raise InvalidInputError(
            f"{directory} is a directory but not a suite directory (no readable suite.json "
            "whose entries are objects)",
            hint="give results documents, or a suite run's directory",
            code="NOT_RESULTS",
        )
    entries = document["entries"]
    sources = []
    for entry in entries:
        output = Path(str(entry.get("output", "")))
        if not output.is_absolute() and not output.exists():
            output = directory / output.name
        if output.is_file():
            name = str(entry.get("name") or output.stem)
            suite_name = str(document.get("suite") or directory.name)
            sources.append(Source(name, ResultsFile(output), suite=suite_name, entry=dict(entry)))
    return sources


def primary_score(summary: dict[str, Any] | None) -> float | None:
    """The first eval fn's mean: what a suite's comparison table is sorted by."""
    fns = (summary or {}).get("eval_fns") or {}
    for stats in fns.values():
        mean = stats.get("mean") if isinstance(stats, dict) else None
        return float(mean) if isinstance(mean, int | float) else None
    return None


def run_path(ref: str | Path, *, root: Path | None = None) -> Path:
    """The results document of a run: a file, a run directory, or a run's name under
    ``root/.osmosis/evals`` (``root``: the current directory)."""
    given = Path(ref)
    if given.is_file():
        return given
    if given.is_dir() and (given / "results.json").is_file():
        return given / "results.json"
    named = (root or Path.cwd()) / RUNS / str(ref) / "results.json"
    if named.is_file():
        return named
    if isinstance(ref, Path) or given.suffix == ".json" or len(given.parts) > 1:
        return given  # a path: reading it says what is wrong with it
    raise InvalidInputError(
        f"no run {str(ref)!r}: not a results file, a run directory or a run under {RUNS}",
        hint="give the run's name, its directory, or its results file",
        code="RUN_NOT_FOUND",
    )
