"""What a run is called wherever results are shown."""

from __future__ import annotations

from pathlib import Path


def label_of(path: Path) -> str:
    """What a run is called in reports, comparisons, JUnit and step summaries: a run
    directory's name (``.osmosis/evals/NAME/results.json``, local or downloaded), never
    "results"; a document of its own, its file's stem."""
    if path.name == "results.json" and path.parent.name not in ("", "."):
        return path.parent.name
    return path.stem
