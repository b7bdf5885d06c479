"""``osmosis eval plan``: the rows a paired comparison needs (the library's ``plan_rows``);
this face parses the options and renders the plan."""

from __future__ import annotations

from typing import Annotated

import typer

from osmosis_cli.terminal.errors import current_output, handle_errors


@handle_errors
def plan(
    ctx: typer.Context,
    effect: Annotated[
        float | None,
        typer.Option("--effect", metavar="D", help="The difference of mean score to detect."),
    ] = None,
    alpha: Annotated[
        float, typer.Option("--alpha", metavar="A", help="The test's level.")
    ] = 0.05,
    power: Annotated[
        float, typer.Option("--power", metavar="P", help="The chance to detect it.")
    ] = 0.8,
    pilot: Annotated[
        str | None, typer.Option("--from", metavar="RUN", help="A pilot run (its spread).")
    ] = None,
    vs: Annotated[
        str | None,
        typer.Option("--vs", metavar="RUN", help="The run to pair it with (their differences)."),
    ] = None,
    sd: Annotated[
        float | None,
        typer.Option("--sd", metavar="S", help="The spread of per-row differences, if known."),
    ] = None,
    correlation: Annotated[
        float,
        typer.Option(
            "--correlation",
            metavar="R",
            help="With --from alone: how alike two runs' rows are.",
        ),
    ] = 0.5,
) -> None:
    """How many rows a paired comparison needs to detect a difference (a two-sided paired
    t-test), and the smallest difference the rows you have can detect."""
    from osmosis_local_runner import plan_rows

    out = current_output()
    found = plan_rows(effect, alpha=alpha, power=power, sd=sd, pilot=pilot, vs=vs,
                      correlation=correlation)  # fmt: skip
    if out.detail_result(found):
        return
    out.print(f"spread of per-row differences: {found['sd']:.4f} ({found['sd_from']})")
    if found["rows_needed"] is not None:
        out.print(f"rows needed: {found['rows_needed']:,} to detect {effect:g} at α {alpha:g} "
                  f"with {power:.0%} power")  # fmt: skip
    if found["detectable_now"] is not None:
        out.print(f"with the {found['rows_now']:,} rows you have: the smallest difference "
                  f"detectable is {found['detectable_now']:.3f}")  # fmt: skip
