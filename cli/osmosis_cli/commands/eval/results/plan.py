"""``osmosis eval plan``: the rows a paired comparison needs (the library's ``plan_rows``);
this face parses the options and renders the plan."""

from __future__ import annotations

from typing import Annotated

import typer

from osmosis_cli.terminal.declare import option
from osmosis_cli.terminal.errors import current_output, handle_errors

EffectOpt = Annotated[float | None, option("--effect D", "The difference of mean score to detect.")]
AlphaOpt = Annotated[float, option("--alpha A", "The test's level.")]
PowerOpt = Annotated[float, option("--power P", "The chance to detect it.")]
PilotOpt = Annotated[str | None, option("--from RUN", "A pilot run (its spread).")]
VsOpt = Annotated[str | None, option("--vs RUN", "The run to pair it with (their differences).")]
SdOpt = Annotated[float | None, option("--sd S", "The spread of per-row differences, if known.")]
CorrelationOpt = Annotated[
    float, option("--correlation R", "With --from alone: how alike two runs' rows are.")
]
AttemptsOpt = Annotated[
    int | None,
    option("--attempts K", "Plan for K attempts per row (the pilot's otherwise).", min=1),
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
