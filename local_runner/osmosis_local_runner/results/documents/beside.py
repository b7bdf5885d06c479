"""What people and tools add to a run is kept beside it, never in it: a named run's
reviews and tracker record in its directory, a standalone document's next to it."""

from __future__ import annotations

from pathlib import Path


def beside(results: Path, name: str) -> Path:
    """``name`` in a named run's directory (``results.json`` with its ``manifest.json``),
    else ``<results>.<name>`` beside a results document."""
    if results.name == "results.json" and (results.parent / "manifest.json").exists():
        return results.parent / name
    return results.with_name(f"{results.name}.{name}")
