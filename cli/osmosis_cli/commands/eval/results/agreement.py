"""``osmosis eval agreement RUN [--fn F] [--against SPEC [--repeat K]]``: the grader
against the people who reviewed the run — the library's ``EvalResult.agreement``; this
face renders it."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from osmosis_cli.commands.eval.local.caching import JudgeCacheOpt
from osmosis_cli.terminal.declare import option
from osmosis_cli.terminal.errors import current_output, handle_errors

if TYPE_CHECKING:
    from osmosis_cli.terminal.output import Output


RunArg = Annotated[
    str, typer.Argument(metavar="RUN", help="A local run's name, directory or results file.")
]
FnOpt = Annotated[str | None, option("--fn FN", "The eval fn to check (default: the first).")]
AgainstOpt = Annotated[
    str | None,
    option(
        "--against MODULE:FN",
        "A candidate grader: grade only the reviewed attempts with it, and compare.",
    ),
]
RepeatOpt = Annotated[
    int | None,
    option(
        "--repeat K",
        "Grade the reviewed attempts K times with --against: its self-consistency.",
        min=2,
    ),
]
DatasetOpt = Annotated[Path | None, option("--dataset PATH", "The run's dataset, if it moved.")]


@handle_errors
def agreement(
    ctx: typer.Context,
    run: RunArg,
    fn: FnOpt = None,
    against: AgainstOpt = None,
    repeat: RepeatOpt = None,
    dataset: DatasetOpt = None,
    cache: JudgeCacheOpt = False,
) -> None:
    """How far the grader agrees with people: reviewed attempts, pass rates, raw
    agreement, Cohen's κ with its 95 % interval, the confusion matrix, per reviewer."""
    from osmosis_local_runner import load_run

    out = current_output()
    if repeat is not None and against is None:
        from osmosis_client.errors import InvalidInputError

        raise InvalidInputError(
            "--repeat grades the reviewed attempts again with a judge",
            hint="name it: --against MODULE:FN --repeat 2",
            code="USAGE",
        )
    found = load_run(run).agreement(
        fn, against=against, repeat=repeat, dataset=dataset, cache=cache
    )
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
    _more(out, found)


def _more(out: Output, found: dict[str, Any]) -> None:
    """Scores' α, a candidate grader's paired agreement, a judge against itself."""
    scores = found.get("scores")
    if scores:
        out.print(
            f"scores: {scores['reviewed']:,} with a reviewer's score, Krippendorff's α "
            f"{_with_ci(scores['alpha'], scores['alpha_ci'])}"
        )
    candidate = found.get("against")
    if candidate:
        out.print(_line(candidate["grader"], candidate))
        out.print(
            f"{candidate['grader']} − {found['fn']}: κ "
            f"{_with_ci(candidate['kappa_difference'], candidate['kappa_difference_ci'], '+.2f')}"
            f"; only {candidate['grader']} agrees on {candidate['only_candidate_agrees']:,}, "
            f"only {found['fn']} on {candidate['only_grader_agrees']:,}"
        )
    repeated = found.get("self_consistency")
    if repeated and repeated["agreement"] is not None:
        out.print(
            f"self-consistency over {repeated['repeats']} gradings of "
            f"{repeated['attempts']:,} attempts: agreement {repeated['agreement']:.0%}, κ "
            f"{_with_ci(repeated['kappa'], repeated['kappa_ci'])}, every grading the same on "
            f"{repeated['all_agree']:.0%}"
        )


def _with_ci(value: float | None, ci: list[float] | None, spec: str = ".2f") -> str:
    shown = "–" if value is None else format(value, spec)
    if ci is not None:
        shown += f" [{format(ci[0], spec)}, {format(ci[1], spec)}]"
    return shown


def _line(who: str, found: dict[str, Any]) -> str:
    return (
        f"{who}: {found['reviewed']:,} reviewed, agreement {found['agreement']:.0%}, "
        f"Cohen's κ {_with_ci(found['kappa'], found['kappa_ci'])}; the grader passes "
        f"{found['grader_pass_rate']:.0%}, the reviewers {found['reviewer_pass_rate']:.0%}"
    )
