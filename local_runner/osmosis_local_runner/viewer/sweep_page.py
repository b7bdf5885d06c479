"""The viewer's sweep page: a series' runs along training, from ``results.sweep`` — each
statistic by recorded step (x placed by the step's value, axes labelled, each point
linked to its run), every run against the baseline (corrected for the comparisons), and
where each row was first solved. Server-rendered: no script, the report's policy."""

from __future__ import annotations

import html
from collections import Counter
from collections.abc import Callable
from urllib.parse import quote

from osmosis_local_runner.results.statistics.sweep import STATS, Sweep

LABELS = {
    "mean": "mean",
    "pass_at_1": "pass@1",
    "output_tokens": "output tokens per attempt",
    "reasoning_tokens": "reasoning tokens per attempt",
    "truncation_rate": "truncated",
    "cost_usd": "cost per attempt ($)",
}
STYLE = """
body { font: 14px system-ui, sans-serif; margin: 2em; color: #1d2330; }
table { border-collapse: collapse; margin: .5em 0 1.5em; }
th, td { padding: 4px 10px; border-bottom: 1px solid #e3e6ec; text-align: left; }
tr.regression td { color: #b00020; }
.curves { display: flex; flex-wrap: wrap; gap: 1em; }
figure { margin: 0; } figcaption, .muted { color: #667; }
"""
POLICY = "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'"


def viewer_link(name: str) -> str:
    """A run's page in the live viewer."""
    return f"/runs/{quote(name)}"


def sweep_page(found: Sweep, home: str = "/", link: Callable[[str], str] = viewer_link) -> str:
    """The page (``home``: where its breadcrumbs lead: the viewer's list, or a static
    site's index; ``link``: a run's page by its name)."""
    esc = html.escape

    def named(name: str) -> str:
        return f'<a href="{esc(link(name))}">{esc(name)}</a>'

    curves = "".join(_curve(found, stat, link) for stat in STATS)
    rows = "".join(
        f'<tr class="{"regression" if a.regression else ""}"><td>{named(a.name)}</td>'
        f"<td>{_num(a.diff, sign=True)}</td><td>[{_num(a.low, sign=True)}, "
        f"{_num(a.high, sign=True)}]</td><td>{a.mcnemar_p:.3g}</td><td>{a.adjusted_p:.3g}</td>"
        f"<td>{'regression' if a.regression else ''}</td></tr>"
        for a in found.against
    )
    counts = Counter(found.first_solved.values())
    firsts = "".join(
        f"<tr><td>{named(run.name)}</td><td>{run.step}</td><td>{counts.get(run.name, 0)}</td></tr>"
        for run in found.runs
    )
    never = counts.get(None, 0)
    first = found.runs[0].name
    late = [(row, at) for row, at in found.first_solved.items() if at != first][:100]
    late_rows = "".join(
        f"<tr><td>{esc(row)}</td><td>{esc(at) if at else 'never'}</td></tr>" for row, at in late
    )
    series = found.runs[0].series or "?"
    title = f"{series}: {len(found.runs)} steps"
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{POLICY}">
<title>osmosis — {esc(title)}</title>
<style>{STYLE}</style></head><body>
<nav data-testid="crumbs"><a href="{esc(home)}">runs</a> › {esc(title)}</nav>
<h1 data-testid="title">{esc(title)}</h1>
<p class="muted">eval fn <code>{esc(found.fn)}</code> · baseline (A) <b>{esc(found.baseline)}</b>
 · every other run is B · x: the step each run recorded</p>
<div class="curves">{curves}</div>
<h2>Against the baseline</h2>
<p class="muted">paired difference B − A of the mean, its 95% interval, McNemar's p and the
same p corrected for the {len(found.against)} comparisons (Holm); a regression: the
interval below 0 and the corrected p under 0.05</p>
<table data-testid="against"><thead><tr><th>run</th><th>B − A</th><th>95% CI</th>
<th>McNemar p</th><th>corrected p</th><th></th></tr></thead><tbody>{rows}</tbody></table>
<h2>First solved at</h2>
<p class="muted">rows first solved (an attempt passed) at each run; {never} never solved</p>
<table data-testid="first-solved"><thead><tr><th>run</th><th>step</th>
<th>rows first solved</th></tr>
</thead><tbody>{firsts}</tbody></table>
<h3>Rows not solved at the first step</h3>
<p class="muted">each with the checkpoint that first solved it (the first 100)</p>
<table data-testid="late-rows"><thead><tr><th>row</th><th>first solved at</th></tr></thead>
<tbody>{late_rows}</tbody></table>
</body></html>
"""


def _curve(found: Sweep, stat: str, link: Callable[[str], str] = viewer_link) -> str:
    """One statistic by step: x placed by each run's recorded step, both axes labelled,
    each point a link to its run's page."""
    points = [run for run in found.runs if run.values.get(stat) is not None]
    if len(points) < 2:
        return ""
    values = [run.values[stat] or 0.0 for run in points]
    lo, hi = min(0.0, min(values)), max(values)
    if stat in ("mean", "pass_at_1", "truncation_rate"):
        hi = max(hi, 1.0)
    hi = hi if hi > lo else lo + 1
    w, h, pad, left = 320, 140, 18, 44
    first, last = points[0].step or 0, points[-1].step or 0
    span = (last - first) or 1

    def x(step: int | None) -> float:
        return left + ((step or 0) - first) * (w - left - pad) / span

    def y(v: float) -> float:
        return h - pad - (v - lo) * (h - 2 * pad) / (hi - lo)

    esc = html.escape
    line = " ".join(f"{x(run.step):.1f},{y(run.values[stat] or 0.0):.1f}" for run in points)
    ticks = "".join(
        f'<text x="{x(run.step):.1f}" y="{h + 2}" font-size="10" fill="#667" '
        f'text-anchor="middle">{run.step}</text>'
        for run in points
    )
    dots = "".join(
        f'<a href="{esc(link(run.name))}"><circle cx="{x(run.step):.1f}" '
        f'cy="{y(run.values[stat] or 0.0):.1f}" r="4" fill="#3b6fd4">'
        f"<title>step {run.step} ({esc(run.name)}): {_num(run.values[stat])}</title>"
        "</circle></a>"
        for run in points
    )
    bars = "".join(  # the mean's 95 % interval at each step
        f'<line class="error-bar" x1="{x(run.step):.1f}" x2="{x(run.step):.1f}" '
        f'y1="{y(run.interval[0]):.1f}" y2="{y(run.interval[1]):.1f}" stroke="#3b6fd4" '
        f'stroke-opacity="0.45" stroke-width="2"/>'
        for run in points
        if stat == "mean" and run.interval is not None
    )
    axes = (
        f'<text x="{(left + w - pad) / 2:.0f}" y="{h + 16}" font-size="10" fill="#667" '
        f'text-anchor="middle">step</text>'
        f'<text x="10" y="{h / 2:.0f}" font-size="10" fill="#667" text-anchor="middle" '
        f'transform="rotate(-90 10 {h / 2:.0f})">{esc(LABELS[stat])}</text>'
    )
    return (
        f'<figure data-testid="curve-{stat}"><figcaption>{LABELS[stat]} by step</figcaption>'
        f'<svg width="{w}" height="{h + 22}" role="img">'
        f'<text x="16" y="{pad + 4}" font-size="10" fill="#667">{_num(hi)}</text>'
        f'<text x="16" y="{h - pad + 4}" font-size="10" fill="#667">{_num(lo)}</text>'
        f'<polyline points="{line}" fill="none" stroke="#3b6fd4" stroke-width="2"/>'
        f"{bars}{dots}{ticks}{axes}</svg></figure>"
    )


def _num(value: float | None, sign: bool = False) -> str:
    if value is None:
        return "–"
    return f"{value:+.3g}" if sign else f"{value:.3g}"
