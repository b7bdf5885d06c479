"""``osmosis eval agreement RUN [--fn F]``: the grader against the people who reviewed
the run — the library's ``EvalResult.agreement``; this face renders it."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from osmosis_cli.terminal.errors import current_output, handle_errors


@handle_errors
def agreement(
    ctx: typer.Context,
    run: Annotated[
        str, typer.Argument(metavar="RUN", help="A local run's name, directory or results file.")
    ],
    fn: Annotated[
        str | None,
        typer.Option("--fn", metavar="FN", help="The eval fn to check (default: the first)."),
    ] = None,
) -> None:
    """How far the grader agrees with people: reviewed attempts, pass rates, raw
    agreement, Cohen's κ with its 95 % interval, the confusion matrix, per reviewer."""
    from osmosis_local_runner import load_run

    out = current_output()
    found = load_run(run).agreement(fn)
    if out.detail_result(found):
        return
    if not found["reviewed"]:
        out.info(
            f"No attempt of {run} has a reviewer's verdict yet: review some in `osmosis eval view`."
        )
        return
    out.print(_line("all reviewers", found))
    for author, one in found["reviewers"].items():
        out.print(_line(author, one))
    c = found["confusion"]
    out.print(f"{'':<16} reviewer pass  reviewer fail")
    for side in ("pass", "fail"):
        passed, failed = c[f"grader_{side}_reviewer_pass"], c[f"grader_{side}_reviewer_fail"]
        out.print(f"{'grader ' + side:<16} {passed:>13,}  {failed:>13,}")


def _line(who: str, found: dict[str, Any]) -> str:
    kappa, ci = found["kappa"], found["kappa_ci"]
    shown = "–" if kappa is None else f"{kappa:.2f}"
    if ci is not None:
        shown += f" [{ci[0]:.2f}, {ci[1]:.2f}]"
    return (
        f"{who}: {found['reviewed']:,} reviewed, agreement {found['agreement']:.0%}, "
        f"Cohen's κ {shown}; the grader passes {found['grader_pass_rate']:.0%}, "
        f"the reviewers {found['reviewer_pass_rate']:.0%}"
    )
