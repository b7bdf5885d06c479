"""Where osmosis-client keeps what it writes in a project — everything under
``.osmosis/``, named once (the published CLI's layout where it has one:
published-cli-0.3.8.md §6.2)::

    .osmosis/
      evals/NAME/          named local runs; downloaded hosted runs
      evals/.locks/        one invocation of a run at a time
      suites/NAME-…/       local suite runs; suites/hosted/ the records of submitted ones
      servers/             records of running rollout servers (reaped after a kill)
      metrics/             training metrics saved by ``train info``
      benchmarks/NAME/     downloaded benchmark runs
      rubrics/             rubric scoring results

``Layout(root)`` gives each place under a project root; the relative paths are
module constants for code that resolves them against the current directory.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

STATE = Path(".osmosis")
EVALS = STATE / "evals"
SUITES = STATE / "suites"
HOSTED_SUITES = SUITES / "hosted"
SERVERS = STATE / "servers"
METRICS = STATE / "metrics"
BENCHMARKS = STATE / "benchmarks"
RUBRICS = STATE / "rubrics"


class _Under:
    """A place of :class:`Layout`: its relative path under the project's root."""

    def __init__(self, relative: Path) -> None:
        self.relative = relative

    def __get__(self, layout: Layout, owner: type | None = None) -> Path:
        return layout.root / self.relative


@dataclass(frozen=True)
class Layout:
    """The places under one project's ``.osmosis/`` (``Layout(root).evals`` …)."""

    root: Path
    state = _Under(STATE)
    evals = _Under(EVALS)
    suites = _Under(SUITES)
    hosted_suites = _Under(HOSTED_SUITES)
    servers = _Under(SERVERS)
    metrics = _Under(METRICS)
    benchmarks = _Under(BENCHMARKS)
    rubrics = _Under(RUBRICS)


__all__ = [
    "BENCHMARKS",
    "EVALS",
    "HOSTED_SUITES",
    "METRICS",
    "RUBRICS",
    "SERVERS",
    "STATE",
    "SUITES",
    "Layout",
]
