"""What people do with results documents: ``eval compare``, ``eval rescore`` and
``eval report``."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from osmosis_cli._typer import Command
from osmosis_cli.errors import EXIT_NOT_PASSED, current_output, handle_errors

if TYPE_CHECKING:
    from osmosis_cli.output import Output
    from osmosis_local_runner.results.compare import Comparison

FLIPS_SHOWN = 20
JsonOpt = Annotated[bool, typer.Option("--json", help="Print a JSON document on stdout.")]


def register(app: typer.Typer) -> None:
    app.command("compare", cls=Command)(compare)
    app.command("rescore", cls=Command)(rescore)
    app.command("report", cls=Command)(report)


# ------------------------------------------------------------------ compare


@handle_errors
def compare(
    ctx: typer.Context,
    a: Annotated[Path, typer.Argument(metavar="A", help="The baseline results document.")],
    b: Annotated[Path, typer.Argument(metavar="B", help="The candidate results document.")],
    fail_if_worse: Annotated[
        float | None,
        typer.Option(
            "--fail-if-worse",
            min=0.0,
            metavar="DELTA",
            help="Exit 4 when B is established worse than A by more than DELTA: the upper "
            "bound of B−A's 95% interval is below −DELTA (any compared eval fn).",
        ),
    ] = None,
    eval_fn: Annotated[
        list[str] | None,
        typer.Option("--eval-fn", metavar="NAME", help="Compare only this eval fn (repeatable)."),
    ] = None,
    json_output: JsonOpt = False,
) -> None:
    """Compare two results documents row by row: paired difference with a 95% interval,
    pass rates and pass@k, flipped rows with McNemar's exact test, the largest drops."""
    from osmosis_local_runner.results.compare import compare as run_compare

    out = current_output()
    for path in (a, b):
        _require_local(path)
    comparison = run_compare(a, b, eval_fns=eval_fn)
    from osmosis_cli.ci_outputs import STEP_SUMMARY, step_summary
    from osmosis_local_runner.results.ci_reports import compare_markdown

    if os.environ.get(STEP_SUMMARY):
        step_summary(out, compare_markdown(comparison))
    if out.json_mode:
        out.emit_json(comparison.to_json(fail_if_worse))
    else:
        show_comparison(out, comparison, fail_if_worse)
    if fail_if_worse is not None and comparison.regressions(fail_if_worse):
        raise typer.Exit(EXIT_NOT_PASSED)


def _require_local(path: Path) -> None:
    from osmosis_client.errors import InvalidInputError

    if path.exists() or path.suffix == ".json" or "/" in str(path):
        return
    raise InvalidInputError(
        f"{path} is not a file: comparing hosted runs needs their per-row results, which "
        "the platform does not serve yet",
        hint="compare local results documents (osmosis eval run … -o PATH)",
        code="NOT_RESULTS",
    )


def _num(value: float | None) -> str:
    from osmosis_local_runner.results.scoring import score_text

    return score_text(value, "-")


def _p(value: float) -> str:
    return f"{value:.3g}" if value >= 0.001 else f"{value:.1e}"


def show_comparison(out: Output, comparison: Comparison, fail_if_worse: float | None) -> None:
    for label, doc in (("A", comparison.a), ("B", comparison.b)):
        summary = doc.summary
        out.print(
            f"{label}: {doc.path}  {doc.model}  ({summary.get('total_rows', '?')} rows, n={doc.n})"
        )
    out.print(
        f"Paired rows: {len(comparison.pairs)} (unpaired: A {comparison.unpaired_a}, "
        f"B {comparison.unpaired_b})"
    )
    methods = {c.interval.method for c in comparison.fns.values() if c.interval}
    method = "/".join(sorted(methods)) or "none"
    out.print()
    out.table(
        [
            "eval fn",
            "mean A",
            "mean B",
            "B−A",
            f"95% CI ({method})",
            "pass A",
            "pass B",
            "→fail",
            "→pass",
            "McNemar p",
        ],
        [
            [
                fn,
                _num(c.mean_a),
                _num(c.mean_b),
                c.diff_text(missing="-"),
                c.interval_text(method=False, missing="-"),
                _num(c.pass_rate_a),
                _num(c.pass_rate_b),
                str(c.flipped_to_fail),
                str(c.flipped_to_pass),
                _p(c.mcnemar_p),
            ]
            for fn, c in comparison.fns.items()
        ],
        keep=["eval fn"],
    )
    ks = sorted({k for c in comparison.fns.values() for k in c.pass_at_k_a})
    if len(ks) > 1:
        out.print()
        out.table(
            ["eval fn", *(f"pass@{k} A→B" for k in ks)],
            [
                [fn, *(f"{_num(c.pass_at_k_a[k])}→{_num(c.pass_at_k_b[k])}" for k in ks)]
                for fn, c in comparison.fns.items()
            ],
            keep=["eval fn"],
        )
    for fn, c in comparison.fns.items():
        if c.flips:
            out.print()
            out.print(
                f"Flipped rows ({fn}): {c.flipped_to_fail} pass→fail, {c.flipped_to_pass} fail→pass"
            )
            out.table(
                ["row", "flip", "A", "B", "prompt"],
                [
                    [
                        str(ra.index),
                        "pass→fail" if direction == "to_fail" else "fail→pass",
                        _num(ra.means.get(fn)),
                        _num(rb.means.get(fn)),
                        _clip(ra.prompt or rb.prompt, 60),
                    ]
                    for ra, rb, direction in c.flips[:FLIPS_SHOWN]
                ],
                keep=["row"],
            )
            if len(c.flips) > FLIPS_SHOWN:
                out.print(f"… {len(c.flips) - FLIPS_SHOWN} more (--json lists them all)")
    for fn in comparison.fns:
        worst = [w for w in comparison.worst if w.fn == fn]
        if not worst:
            continue
        out.print()
        out.print(f"Largest drops ({fn}):")
        out.table(
            ["row", "A", "B", "prompt", "answer A", "answer B"],
            [
                [
                    str(w.a.index),
                    _num(w.score_a),
                    _num(w.score_b),
                    _clip(w.prompt, 48),
                    _clip(w.answer_a, 32),
                    _clip(w.answer_b, 32),
                ]
                for w in worst
            ],
            keep=["row"],
        )
    for note in comparison.notes:
        out.info(f"note: {note}")
    if fail_if_worse is not None:
        regressions = comparison.regressions(fail_if_worse)
        if regressions:
            out.line(
                f"REGRESSION: B is worse than A on {', '.join(regressions)} — the 95% interval "
                f"of B−A lies below −{fail_if_worse:g}"
            )
        else:
            out.info(f"no regression established beyond −{fail_if_worse:g}")


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


# ------------------------------------------------------------------ rescore


@handle_errors
def rescore(
    ctx: typer.Context,
    results: Annotated[Path, typer.Argument(metavar="RESULTS", help="A results document.")],
    eval_fn: Annotated[
        list[str] | None,
        typer.Option("--eval-fn", metavar="MODULE:FN", help="An eval function (repeatable)."),
    ] = None,
    output: Annotated[
        Path | None,
        typer.Option(
            "-o",
            "--output",
            metavar="OUT",
            help="The new document (default: RESULTS.rescored.json).",
        ),
    ] = None,
    dataset: Annotated[
        Path | None,
        typer.Option("--dataset", metavar="FILE", help="The dataset (default: the run's)."),
    ] = None,
    batch_size: Annotated[
        int, typer.Option("--batch-size", min=1, max=4096, metavar="N", help="Grades at once.")
    ] = 16,
    no_compat: Annotated[
        bool, typer.Option("--no-compat", help="No `osmosis_ai` compatibility imports.")
    ] = False,
    json_output: JsonOpt = False,
) -> None:
    """Re-grade a run's saved transcripts with new or fixed eval fns: no model calls, the
    same statistics, a new results document recording where it came from."""
    from osmosis_cli.eval_local import report_result
    from osmosis_cli.user_imports import prepare_user_imports
    from osmosis_client.errors import InvalidInputError
    from osmosis_local_runner.run.rescore import rescore as run_rescore

    out = current_output()
    if not eval_fn:
        raise InvalidInputError(
            "give at least one --eval-fn MODULE:FN",
            hint="osmosis eval rescore RESULTS --eval-fn rewards:compute_reward",
            code="USAGE",
        )
    target = output or results.with_name(results.stem + ".rescored.json")
    with out.user_output_to_stderr():
        prepare_user_imports(out, no_compat=no_compat)
        result = run_rescore(
            results, eval_fn, target, dataset=dataset, batch_size=batch_size, on_note=out.info
        )
    report_result(out, result)


# ------------------------------------------------------------------ report


@handle_errors
def report(
    ctx: typer.Context,
    results: Annotated[
        list[Path],
        typer.Argument(metavar="RESULTS...", help="Results documents, or a suite directory."),
    ],
    output: Annotated[
        Path,
        typer.Option("-o", "--output", metavar="PATH", help="The HTML file to write."),
    ] = Path("report.html"),
) -> None:
    """Write one self-contained HTML report (no network needed to view it) of one run or
    several (a suite's entries, A vs B): summary cards, charts, a searchable per-row
    table and every attempt's transcript."""
    from osmosis_local_runner.results.report import write_report

    out = current_output()
    written = write_report(results, output)
    out.info(f"Report written to {written.path} ({written.rows:,} rows, {_size(written.bytes)})")


def _size(count: int) -> str:
    value = float(count)
    for unit in ("B", "KB", "MB"):
        if value < 1024 or unit == "MB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{count} B"
