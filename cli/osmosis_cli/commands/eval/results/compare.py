"""``osmosis eval compare A B``: is B better or worse than A, and how sure are we?"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from osmosis_cli.commands.eval.results.slicing import cell, difference_cells
from osmosis_cli.terminal.declare import option
from osmosis_cli.terminal.errors import EXIT_NOT_PASSED, current_output, handle_errors

if TYPE_CHECKING:
    from osmosis_cli.terminal.output import Output
    from osmosis_local_runner.results.compare.compare import Comparison, FnComparison, WorstRow

FLIPS_SHOWN = 20


ReviewedOpt = Annotated[
    bool,
    option(
        "--reviewed",
        "Count the attempts people reviewed (in the viewer, or load_run().review) "
        "as they judged them, not as the grader did.",
    ),
]


MarkdownOpt = Annotated[
    bool,
    option(
        "--markdown",
        "Print the comparison as Markdown (the verdict, the table, the largest drops): "
        "a pull request's comment.",
    ),
]


LinkOpt = Annotated[
    str | None,
    option(
        "--link URL",
        "With --markdown: where the whole comparison is (a report, eval view --bundle).",
    ),
]


@handle_errors
def compare(
    ctx: typer.Context,
    a: Annotated[
        Path,
        typer.Argument(metavar="A", help="The baseline: a results document, run dir or run name."),
    ],
    b: Annotated[
        Path,
        typer.Argument(metavar="B", help="The candidate: a results document, run dir or run name."),
    ],
    fail_if_worse: Annotated[
        float | None,
        option(
            "--fail-if-worse DELTA",
            "Exit 4 when B is established worse than A by more than DELTA: the upper "
            "bound of B−A's 95% interval is below −DELTA (any compared eval fn).",
            min=0.0,
        ),
    ] = None,
    eval_fn: Annotated[
        list[str] | None, option("--eval-fn NAME", "Compare only this eval fn (repeatable).")
    ] = None,
    by: Annotated[
        str | None,
        option(
            "--by COLUMN",
            "Also compare per value of this dataset column (paired difference and "
            "interval per value).",
        ),
    ] = None,
    reviewed: ReviewedOpt = False,
    markdown: MarkdownOpt = False,
    link: LinkOpt = None,
) -> None:
    """Compare two runs row by row: paired difference with a 95% interval, pass rates and
    pass@k, flipped rows with McNemar's exact test, the largest drops. A and B are results
    documents, run directories, or run names (a hosted run's samples are downloaded)."""
    from osmosis_cli.commands.eval.hosted.download import results_path

    out = current_output()
    a, b = results_path(ctx, a), results_path(ctx, b)
    comparison = _compared(a, b, eval_fn, by, reviewed)
    from osmosis_cli.commands.eval.results.ci import STEP_SUMMARY, step_summary
    from osmosis_local_runner.results.reports.markdown import compare_markdown

    if os.environ.get(STEP_SUMMARY):
        step_summary(out, compare_markdown(comparison, fail_if_worse))
    if markdown:  # a pull request's comment, a report's section
        out.stdout.write(compare_markdown(comparison, fail_if_worse, link) + "\n")
        out.stdout.flush()
        out.emitted = True
    else:
        _show(out, comparison, fail_if_worse)
    if fail_if_worse is not None and comparison.regressions(fail_if_worse):
        raise typer.Exit(EXIT_NOT_PASSED)


def _show(out: Output, comparison: Comparison, fail_if_worse: float | None) -> None:
    document = comparison.to_json(fail_if_worse)
    lines = [
        "\t".join(
            [fn, *(cell(stats.get(k)) for k in ("mean_a", "mean_b", "diff", "ci_low", "ci_high"))]
        )
        for fn, stats in document["eval_fns"].items()
    ]
    if not out.detail_result(document, lines=lines):
        show_comparison(out, comparison, fail_if_worse)


def _compared(
    a: Path, b: Path, eval_fns: list[str] | None, by: str | None, reviewed: bool = False
) -> Comparison:
    from osmosis_local_runner.api.comparing import compare_runs

    return compare_runs(a, b, eval_fns=eval_fns, by=by, reviewed=reviewed).comparison


def _p(value: float) -> str:
    return f"{value:.3g}" if value >= 0.001 else f"{value:.1e}"


def show_comparison(out: Output, comparison: Comparison, fail_if_worse: float | None) -> None:
    """eval compare's terminal output: the runs, the per-fn table, pass@k, flipped rows,
    the largest drops, notes and the verdict."""
    for label, doc in (("A", comparison.a), ("B", comparison.b)):
        rows = doc.summary.get("total_rows", "?")
        out.print(f"{label}: {doc.path}  {doc.model}  ({rows} rows, n={doc.n})")
    out.print(
        f"Paired rows: {len(comparison.pairs)} (unpaired: A {comparison.unpaired_a}, "
        f"B {comparison.unpaired_b})"
    )
    _means(out, comparison)
    _pass_at_k(out, comparison)
    _usage(out, comparison)
    for fn, c in comparison.fns.items():
        _flips(out, fn, c, comparison)
    for fn in comparison.fns:
        _drops(out, fn, [w for w in comparison.worst if w.fn == fn])
    if comparison.sliced is not None:
        from osmosis_cli.commands.eval.results.slicing import show_compare_slices

        show_compare_slices(out, comparison.sliced)
    for note in comparison.notes:
        out.info(f"note: {note}")
    if fail_if_worse is not None:
        if comparison.regressions(fail_if_worse):
            out.line(comparison.verdict(fail_if_worse))
        else:
            out.info(comparison.verdict(fail_if_worse))


def _means(out: Output, comparison: Comparison) -> None:
    methods = {c.interval.method for c in comparison.fns.values() if c.interval}
    method = "/".join(sorted(methods)) or "none"
    out.print()
    columns = ["eval fn", "mean A", "mean B", "B−A", f"95% CI ({method})", "pass A", "pass B"]
    out.table(
        [*columns, "→fail", "→pass", "McNemar p"],
        [
            [
                fn,
                *difference_cells(c),
                cell(c.pass_rate_a),
                cell(c.pass_rate_b),
                str(c.flipped_to_fail),
                str(c.flipped_to_pass),
                _p(c.mcnemar_p),
            ]
            for fn, c in comparison.fns.items()
        ],
        keep=["eval fn"],
    )


def _usage(out: Output, comparison: Comparison) -> None:
    """Tokens, truncation and cost per paired row, B − A with its interval."""
    if not comparison.usage:
        return
    methods = {c.interval.method for c in comparison.usage.values() if c.interval}
    out.print()
    out.table(
        ["per row", "A", "B", "B−A", f"95% CI ({'/'.join(sorted(methods)) or 'none'})"],
        [c.row() for c in comparison.usage.values()],
        keep=["per row"],
    )


def _pass_at_k(out: Output, comparison: Comparison) -> None:
    ks = sorted({k for c in comparison.fns.values() for k in c.pass_at_k_a})
    if len(ks) <= 1:
        return
    out.print()
    out.table(
        ["eval fn", *(f"pass@{k} A→B" for k in ks)],
        [
            [fn, *(f"{cell(c.pass_at_k_a[k])}→{cell(c.pass_at_k_b[k])}" for k in ks)]
            for fn, c in comparison.fns.items()
        ],
        keep=["eval fn"],
    )


def _flips(out: Output, fn: str, c: FnComparison, comparison: Comparison) -> None:
    if not c.flips:
        return
    out.print()
    out.print(f"Flipped rows ({fn}): {c.flipped_to_fail} pass→fail, {c.flipped_to_pass} fail→pass")
    out.table(
        ["row", "flip", "A", "B", "prompt"],
        [
            [
                str(ra.index),
                "pass→fail" if direction == "to_fail" else "fail→pass",
                cell(ra.means.get(fn)),
                cell(rb.means.get(fn)),
                _clip(ra.prompt or rb.prompt, 60),
            ]
            for ra, rb, direction in comparison.flip_views(fn, FLIPS_SHOWN)
        ],
        keep=["row"],
    )
    if len(c.flips) > FLIPS_SHOWN:
        out.print(f"… {len(c.flips) - FLIPS_SHOWN} more (--json lists them all)")


def _drops(out: Output, fn: str, worst: list[WorstRow]) -> None:
    if not worst:
        return
    out.print()
    out.print(f"Largest drops ({fn}):")
    out.table(
        ["row", "A", "B", "prompt", "expected", "answer A", "answer B"],
        [
            [
                str(w.a.index),
                cell(w.score_a),
                cell(w.score_b),
                _clip(w.prompt, 40),
                _clip(w.expected, 24),
                _clip(w.answer_a, 32),
                _clip(w.answer_b, 32),
            ]
            for w in worst
        ],
        keep=["row"],
    )


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"
