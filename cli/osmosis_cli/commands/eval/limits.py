"""The options that stop a local run before its end, or an attempt before its own: what
it may cost, how a call without usage counts, an attempt's tokens, and how many first
calls refused alike make the request broken."""

from __future__ import annotations

from typing import Annotated

import typer

MaxCostOpt = Annotated[
    float | None,
    typer.Option(
        "--max-cost",
        min=0.000001,
        metavar="USD",
        help="Stop the run once its model calls have cost this much (status stopped; "
        "resumable). Needs a price for the model.",
    ),
]
UnknownUsageOpt = Annotated[
    str | None,
    typer.Option(
        "--unknown-usage",
        metavar="unknown|free",
        help="A model call whose answer carries no usage: its cost is unknown (default: "
        "with --max-cost the run stops), or counted as free.",
    ),
]
MaxAttemptTokensOpt = Annotated[
    int | None,
    typer.Option(
        "--max-attempt-tokens",
        min=1,
        metavar="N",
        help="An attempt's rollout gets no more model calls once it has used N tokens "
        "(the attempt ends, truncated).",
    ),
]
MaxSameErrorsOpt = Annotated[
    int | None,
    typer.Option(
        "--max-same-errors",
        min=0,
        metavar="K",
        help="Stop when the run's first K model calls are refused alike (one 4xx, one "
        "message: a broken request); default 5, 0: never.",
    ),
]
