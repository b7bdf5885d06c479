"""The options of a local run's model-call cache (docs/cache.md): on, a name for weights
no endpoint can identify, and a previous run to replay."""

from __future__ import annotations

from typing import Annotated

import typer

CacheOpt = Annotated[
    bool,
    typer.Option(
        "--cache",
        help="Answer model calls from the call cache when everything that decides the "
        "answer is the same (the weights, the whole request, the row and attempt).",
    ),
]
CacheScopeOpt = Annotated[
    str | None,
    typer.Option(
        "--cache-scope",
        metavar="NAME",
        help="Name the weights behind an endpoint that cannot say which they are "
        "(no root in its /models): its calls are cached under NAME.",
    ),
]
JudgeCacheOpt = Annotated[
    bool,
    typer.Option(
        "--cache",
        help="Answer a judge's model calls from the call cache when their input is the "
        "same (an unchanged attempt graded again costs nothing).",
    ),
]
ReplayOpt = Annotated[
    str | None,
    typer.Option(
        "--replay",
        metavar="RUN",
        help="Answer each call a previous run recorded (same row, attempt, place and "
        "request) with its recorded answer; call the model for the rest.",
    ),
]
