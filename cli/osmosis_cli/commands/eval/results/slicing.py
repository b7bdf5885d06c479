"""Statistics by a dataset column at the terminal: a run's (``eval run --by``) and a
comparison's (``eval compare --by``), one table each, one row per value (× eval fn);
and the options naming such a column."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from osmosis_cli.terminal.output import Output
    from osmosis_local_runner.results.compare.compare_slices import SlicedComparison


def cell(value: Any) -> str:
    """A score or rate in a table's cell ("-" when there is none)."""
    from osmosis_local_runner.results.statistics.scoring import score_text

    return score_text(value, "-")


def difference_cells(c: Any) -> list[str]:
    """A paired comparison's cells, as every comparison table shows them: mean A, mean B,
    B − A and its 95 % interval."""
    return [
        cell(c.mean_a),
        cell(c.mean_b),
        c.diff_text(missing="-"),
        c.interval_text(method=False, missing="-"),
    ]


def show_run_slices(out: Output, sliced: dict[str, Any] | None) -> None:
    """``summary.slices`` of a results document: rows, attempts, mean and pass@k."""
    if not sliced or not sliced.get("values"):
        return
    values = sliced["values"]
    fns = list(values[0]["eval_fns"])
    ks = sorted(
        {
            int(key[len("pass_at_") :])
            for v in values
            for stats in v["eval_fns"].values()
            for key in stats
            if key.startswith("pass_at_")
        }
    )
    by = str(sliced["by"])
    columns = [by, *(["eval fn"] if len(fns) > 1 else []), "rows", "attempts", "mean"]
    rows = [
        [
            str(v["value"]),
            *([fn] if len(fns) > 1 else []),
            f"{v['rows']:,}",
            f"{v['attempts']:,}",
            cell(v["eval_fns"][fn].get("mean")),
            *(cell(v["eval_fns"][fn].get(f"pass_at_{k}")) for k in ks),
        ]
        for v in values
        for fn in fns
    ]
    out.print()
    out.print(f"By {by}:")
    out.table([*columns, *(f"pass@{k}" for k in ks)], rows, keep=[by])
    _hidden(out, sliced.get("values_not_shown"), by)


def show_compare_slices(out: Output, sliced: SlicedComparison) -> None:
    """Per value: paired rows, means, B − A with its 95% interval, flips."""
    fns = list(sliced.slices[0].fns) if sliced.slices else []
    by = sliced.by
    columns = [by, *(["eval fn"] if len(fns) > 1 else []), "pairs", "mean A", "mean B"]
    rows = [
        [
            s.value,
            *([fn] if len(fns) > 1 else []),
            f"{s.pairs:,}",
            *difference_cells(c),
            str(c.flipped_to_fail),
            str(c.flipped_to_pass),
        ]
        for s in sliced.slices
        for fn, c in s.fns.items()
    ]
    out.print()
    out.print(f"By {by} (B − A per value, paired):")
    out.table([*columns, "B−A", "95% CI", "→fail", "→pass"], rows, keep=[by])
    _hidden(out, sliced.hidden, by)


def _hidden(out: Output, hidden: Any, by: str) -> None:
    if hidden:
        out.print(f"… {hidden:,} more values of {by} (the largest are shown)")
