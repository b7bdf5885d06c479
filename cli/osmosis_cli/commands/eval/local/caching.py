"""The options of a local run's model-call cache (docs/cache.md): on, a name for weights
no endpoint can identify, and a previous run to replay."""

from __future__ import annotations

from typing import Annotated

from osmosis_cli.terminal.declare import option

JudgeCacheOpt = Annotated[
    bool,
    option(
        "--cache",
        "Answer a judge's model calls from the call cache when their input is the "
        "same (an unchanged attempt graded again costs nothing).",
    ),
]
