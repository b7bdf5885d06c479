"""``osmosis eval rescore RESULTS --eval-fn MODULE:FN``: the saved transcripts graded again."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from osmosis_cli.commands.eval.local.caching import JudgeCacheOpt
from osmosis_cli.terminal.declare import option
from osmosis_cli.terminal.errors import current_output, handle_errors

EvalFnOpt = Annotated[
    list[str] | None,
    option(
        "--eval-fn [NAME=]MODULE:FN",
        "An eval function (repeatable); NAME= names it in the new document, e.g. "
        "grader=rewards.py:fixed to compare it with the run's grader.",
    ),
]


@handle_errors
def rescore(
    ctx: typer.Context,
    results: Annotated[
        Path,
        typer.Argument(
            metavar="RESULTS", help="A results document, run directory or run name (hosted too)."
        ),
    ],
    eval_fn: EvalFnOpt = None,
    output: Annotated[
        Path | None, option("-o --output OUT", "The new document (default: RESULTS.rescored.json).")
    ] = None,
    dataset: Annotated[
        Path | None, option("--dataset FILE", "The dataset (default: the run's).")
    ] = None,
    batch_size: Annotated[int, option("--batch-size N", "Grades at once.", min=1, max=4096)] = 16,
    no_compat: Annotated[
        bool, option("--no-compat", "No `osmosis_ai` compatibility imports.")
    ] = False,
    cache: JudgeCacheOpt = False,
) -> None:
    """Re-grade a run's saved transcripts with new or fixed eval fns: no model calls, the
    same statistics, a new results document recording where it came from."""
    from osmosis_cli.commands.eval.local.outcome import report_result
    from osmosis_cli.user_code import prepare_user_imports
    from osmosis_client.errors import InvalidInputError
    from osmosis_local_runner.api.doors import rescore as run_rescore

    out = current_output()
    if not eval_fn:
        raise InvalidInputError(
            "give at least one --eval-fn MODULE:FN",
            hint="osmosis eval rescore RESULTS --eval-fn rewards:compute_reward",
            code="USAGE",
        )
    from osmosis_cli.commands.eval.hosted.download import results_path

    results = results_path(ctx, results)
    target = output or results.with_name(results.stem + ".rescored.json")
    with out.user_output_to_stderr():
        prepare_user_imports(out, no_compat=no_compat)
        result = run_rescore(
            results,
            eval_fn,
            target,
            dataset=dataset,
            batch_size=batch_size,
            on_note=out.info,
            cache=cache,
        )
    report_result(out, result, "eval.rescore")
