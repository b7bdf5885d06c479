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


@dataclass(frozen=True)
class Layout:
    """The places under one project's ``.osmosis/``."""

    root: Path

    @property
    def state(self) -> Path:
        return self.root / STATE

    @property
    def evals(self) -> Path:
        return self.root / EVALS

    @property
    def suites(self) -> Path:
        return self.root / SUITES

    @property
    def hosted_suites(self) -> Path:
        return self.root / HOSTED_SUITES

    @property
    def servers(self) -> Path:
        return self.root / SERVERS

    @property
    def metrics(self) -> Path:
        return self.root / METRICS

    @property
    def benchmarks(self) -> Path:
        return self.root / BENCHMARKS

    @property
    def rubrics(self) -> Path:
        return self.root / RUBRICS


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
