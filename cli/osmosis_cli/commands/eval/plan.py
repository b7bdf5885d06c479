"""``osmosis eval plan``: the rows a paired comparison needs (the library's ``plan_rows``);
this face parses the options and renders the plan."""

from __future__ import annotations

from typing import Annotated

import typer

from osmosis_cli.terminal.errors import current_output, handle_errors

EffectOpt = Annotated[
    float | None,
    typer.Option("--effect", metavar="D", help="The difference of mean score to detect."),
]
AlphaOpt = Annotated[float, typer.Option("--alpha", metavar="A", help="The test's level.")]
PowerOpt = Annotated[float, typer.Option("--power", metavar="P", help="The chance to detect it.")]
PilotOpt = Annotated[
    str | None, typer.Option("--from", metavar="RUN", help="A pilot run (its spread).")
]
VsOpt = Annotated[
    str | None,
    typer.Option("--vs", metavar="RUN", help="The run to pair it with (their differences)."),
]
SdOpt = Annotated[
    float | None,
    typer.Option("--sd", metavar="S", help="The spread of per-row differences, if known."),
]
CorrelationOpt = Annotated[
    float,
    typer.Option(
        "--correlation", metavar="R", help="With --from alone: how alike two runs' rows are."
    ),
]
AttemptsOpt = Annotated[
    int | None,
    typer.Option(
        "--attempts",
        min=1,
        metavar="K",
        help="Plan for K attempts per row (the pilot's otherwise).",
    ),
]


@handle_errors
def plan(
    ctx: typer.Context,
    effect: EffectOpt = None,
    alpha: AlphaOpt = 0.05,
    power: PowerOpt = 0.8,
    pilot: PilotOpt = None,
    vs: VsOpt = None,
    sd: SdOpt = None,
    correlation: CorrelationOpt = 0.5,
    attempts: AttemptsOpt = None,
) -> None:
    """How many rows a paired comparison needs to detect a difference (a two-sided paired
    t-test), and the smallest difference the rows you have can detect."""
    from osmosis_local_runner import plan_rows

    out = current_output()
    found = plan_rows(
        effect,
        alpha=alpha,
        power=power,
        sd=sd,
        pilot=pilot,
        vs=vs,
        correlation=correlation,
        attempts=attempts,
    )
    if out.detail_result(found):
        return
    per_row = f", {attempts} attempts a row" if attempts else ""
    out.print(f"spread of per-row differences: {found['sd']:.4f} ({found['sd_from']}{per_row})")
    if found["rows_needed"] is not None:
        out.print(
            f"rows needed: {found['rows_needed']:,} to detect {effect:g} at α {alpha:g} "
            f"with {power:.0%} power"
        )
    if found["detectable_now"] is not None:
        out.print(
            f"with the {found['rows_now']:,} rows you have: the smallest difference "
            f"detectable is {found['detectable_now']:.3f}"
        )
    choices = found.get("by_attempts")
    if choices and effect:
        now = found.get("attempts_now")
        out.print(f"rows needed by attempts per row (the pilot had {now:g}):")
        for choice in choices:
            out.print(f"  {choice['attempts']:>2} a row: {choice['rows_needed']:,} rows")
