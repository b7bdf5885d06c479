"""What a run is called wherever results are shown."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

#: the file a run writes when no name or output is given: a stem that names nothing
DEFAULT_STEM = "results"


def label_of(path: Path, config: Mapping[str, Any] | None = None) -> str:
    """What a run is called in reports, comparisons, JUnit and step summaries — by its
    name, never "results":

    - a run directory's name (``.osmosis/evals/NAME/results.json``, local or downloaded);
    - else the eval config it ran and its model (``nightly · openai/gpt-5-mini``), as the
      document records them;
    - else a document's own file stem (``baseline.json`` → ``baseline``), or its model when
      the file kept the default name.
    """
    if path.name == f"{DEFAULT_STEM}.json" and path.parent.name not in ("", "."):
        return path.parent.name
    config = config or {}
    model = config.get("model")
    named = config.get("config_name")
    if isinstance(named, str) and named:
        return f"{named} · {model}" if isinstance(model, str) and model else named
    if path.stem == DEFAULT_STEM and isinstance(model, str) and model:
        return model
    return path.stem
