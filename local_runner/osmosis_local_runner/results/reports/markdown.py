"""CI step summaries in Markdown (GitHub's ``GITHUB_STEP_SUMMARY``): a run's scores, pass@k
and worst rows (prompt, expected, answer); a suite's table; hosted runs; a comparison
with its verdict."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from osmosis_local_runner.results.documents.documents import excerpt, pass_at_key
from osmosis_local_runner.results.documents.sources import Source, primary_score
from osmosis_local_runner.results.reports.ci_reports import HostedCase
from osmosis_local_runner.results.statistics.intervals import half_width_text
from osmosis_local_runner.results.statistics.scoring import score_text
from osmosis_local_runner.results.statistics.usage import usage_lines
from osmosis_local_runner.results.statistics.verdicts import worst_rows

if TYPE_CHECKING:
    from osmosis_local_runner.results.compare.compare import Comparison


def _md(text: Any) -> str:
    """A table cell: no pipes or newlines, no HTML."""
    value = str(text).replace("|", "\\|").replace("\n", " ").replace("<", "&lt;")
    return value


def _num(value: Any) -> str:
    return score_text(value)


def _pass_ks(stats: dict[str, Any]) -> list[str]:
    """The ``pass_at_<k>`` keys of a summary's statistics, by k (other keys ignored)."""
    found = [(n, k) for k in stats if (n := pass_at_key(k)) is not None]
    return [k for _, k in sorted(found)]


def run_markdown(source: Source) -> str:
    """A run's scores, pass@k and worst rows."""
    doc = source.results
    summary = doc.summary
    fns: dict[str, Any] = summary.get("eval_fns") or {}
    ks = sorted(
        {k for stats in fns.values() for k in _pass_ks(stats)}, key=lambda k: pass_at_key(k) or 0
    )
    lines = [
        f"### {_md(source.label)}",
        "",
        f"Model `{_md(doc.model)}` · {summary.get('total_rows', 0)} rows × {doc.n} · "
        f"{summary.get('errored_runs', 0)} errored · {summary.get('status', '?')}",
        "",
        "| eval fn | mean | std | " + " | ".join(f"pass@{k[8:]}" for k in ks) + " |",
        "|---|---:|---:|" + "---:|" * len(ks),
    ]
    for fn, stats in fns.items():
        mean = _num(stats.get("mean")) + half_width_text(stats)
        cells = [_md(fn), mean, _num(stats.get("std"))]
        cells += [_num(stats.get(k)) for k in ks]
        lines.append("| " + " | ".join(cells) + " |")
    usage = usage_lines(summary.get("usage"))  # tokens by kind, truncation, cost
    if usage:
        lines += ["", *(f"{_md(line.strip())}  " for line in usage)]
    worst = worst_rows(doc)
    if worst.rows:
        lines += [
            "",
            f"Worst rows ({_md(doc.eval_fns[0])}, {worst.failed} of {worst.total} failed):",
        ]
        lines += ["", "| row | score | prompt | expected | answer | error |"]
        lines.append("|---:|---:|---|---|---|---|")
        for row, verdict in worst.rows:
            texts = (verdict.prompt, verdict.expected, verdict.answer, verdict.error)
            shown = " | ".join(_md(excerpt(text, 80)) for text in texts)
            lines.append(f"| {row.index} | {_num(verdict.mean)} | {shown} |")
    return "\n".join(lines) + "\n"


def suite_markdown(name: str, entries: Sequence[dict[str, Any]]) -> str:
    """The comparison table of a suite (its document's entries, best first)."""

    def score(entry: dict[str, Any]) -> float:
        value = primary_score(entry.get("summary"))
        return float("-inf") if value is None else value

    lines = [
        f"## osmosis eval suite {_md(name)}",
        "",
        "| entry | status | mean | pass@1 | errored | tokens |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for entry in sorted(entries, key=score, reverse=True):
        summary = entry.get("summary") or {}
        fns = summary.get("eval_fns") or {}
        first: dict[str, Any] = next(iter(fns.values()), {})
        lines.append(
            f"| {_md(entry.get('name'))} | {_md(entry.get('status', '?'))} | "
            f"{_num(first.get('mean'))} | {_num(first.get('pass_at_1'))} | "
            f"{summary.get('errored_runs', '–')} | {summary.get('total_tokens', '–')} |"
        )
    return "\n".join(lines) + "\n"


def hosted_markdown(cases: Sequence[HostedCase]) -> str:
    lines = [
        "## osmosis hosted eval",
        "",
        "| run | status | score | pass rate | verdict |",
        "|---|---|---:|---:|---|",
    ]
    for case in cases:
        name = f"[{_md(case.name)}]({case.url})" if case.url else _md(case.name)
        if case.label != case.name:
            name = f"{_md(case.label)}: {name}"
        lines.append(
            f"| {name} | {_md(case.status)} | {_num(case.score)} | {_num(case.pass_rate)} | "
            f"{'✅ passed' if case.verdict is None else '❌ ' + _md(case.verdict)} |"
        )
    return "\n".join(lines) + "\n"


#: slices a comparison's Markdown lists (the worst first); the rest are counted
SLICES_SHOWN = 10


def compare_markdown(
    comparison: Comparison, fail_if_worse: float | None = None, link: str | None = None
) -> str:
    """``eval compare``: the verdict (with ``--fail-if-worse``), the per-fn table, the
    worst values of a column (``--by``: their paired difference, worst first), the
    largest drops, and ``link`` (where the whole comparison can be read: a report, a
    static site)."""
    lines = [
        f"## osmosis eval compare: `{_md(comparison.a.label)}` → `{_md(comparison.b.label)}`",
        "",
        f"{len(comparison.pairs)} paired rows (unpaired: A {comparison.unpaired_a}, "
        f"B {comparison.unpaired_b})",
        "",
        "| eval fn | mean A | mean B | B−A | 95% CI | pass A | pass B | →fail | →pass "
        "| McNemar p |",
        "|---|---:|---:|---:|---|---:|---:|---:|---:|---:|",
    ]
    if fail_if_worse is not None:
        failed = bool(comparison.regressions(fail_if_worse))
        mark = "❌ **" if failed else "✅ **"
        verdict = comparison.verdict(fail_if_worse)
        head, _, rest = verdict.partition(":") if failed else (verdict, "", "")
        lines[1:1] = ["", f"{mark}{_md(head)}**{':' + _md(rest) if rest else ''}"]
    for fn, c in comparison.fns.items():
        lines.append(
            f"| {_md(fn)} | {_num(c.mean_a)} | {_num(c.mean_b)} | {c.diff_text()} | "
            f"{c.interval_text()} | "
            f"{_num(c.pass_rate_a)} | {_num(c.pass_rate_b)} | {c.flipped_to_fail} | "
            f"{c.flipped_to_pass} | {c.mcnemar_p:.3g} |"
        )
    if comparison.usage:  # tokens, truncation and cost per paired row
        lines += ["", "| per row | A | B | B−A | 95% CI |", "|---|---:|---:|---:|---|"]
        lines += [
            "| " + " | ".join(_md(cell) for cell in c.row()) + " |"
            for c in comparison.usage.values()
        ]
    if comparison.sliced is not None:
        lines += _worst_slices(comparison.sliced)
    if comparison.worst:
        lines += ["", "Largest drops:", "", "| fn | row | A | B | prompt | expected | answer B |"]
        lines.append("|---|---:|---:|---:|---|---|---|")
        for w in comparison.worst[:10]:
            lines.append(
                f"| {_md(w.fn)} | {w.a.index} | {_num(w.score_a)} | {_num(w.score_b)} | "
                f"{_md(excerpt(w.prompt, 60))} | {_md(excerpt(w.expected, 40))} | "
                f"{_md(excerpt(w.answer_b, 60))} |"
            )
    if link:
        lines += ["", f"[The whole comparison, row by row]({_md(link)})"]
    return "\n".join(lines) + "\n"


def _worst_slices(sliced: Any) -> list[str]:
    """A column's values by their paired difference, the worst first (at most
    :data:`SLICES_SHOWN`; the others counted)."""
    cells = [
        (c.diff if c.diff is not None else 0.0, s, fn, c)
        for s in sliced.slices
        for fn, c in s.fns.items()
    ]
    cells.sort(key=lambda cell: cell[0])
    lines = [
        "",
        f"By {_md(sliced.by)}, the worst first:",
        "",
        "| value | fn | pairs | B−A | 95% CI |",
        "|---|---|---:|---:|---|",
    ]
    for _, s, fn, c in cells[:SLICES_SHOWN]:
        lines.append(
            f"| {_md(s.value)} | {_md(fn)} | {s.pairs} | {c.diff_text()} | "
            f"{c.interval_text(method=False)} |"
        )
    if len(cells) > SLICES_SHOWN:
        lines += ["", f"… and {len(cells) - SLICES_SHOWN} more (`osmosis eval compare --by`)"]
    return lines
