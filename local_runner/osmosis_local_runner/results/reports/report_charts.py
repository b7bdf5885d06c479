"""The report's charts, drawn here as inline SVG (the same numbers as the tables;
testable without a browser): per-row mean scores binned (per slice too), and pass@k over
every k."""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import Any

from osmosis_local_runner.results.documents.documents import is_number

HISTOGRAM_BINS = 10


def histogram_svg(
    runs: Sequence[dict[str, Any]], means: Sequence[Sequence[float]], *, small: bool = False
) -> str:
    """Per-row mean scores of each run's first eval fn (every row), binned (grouped
    bars)."""
    series = [(r["label"], r["colour"], scores) for r, scores in zip(runs, means, strict=True)]
    values = [s for _, _, scores in series for s in scores]
    if not values:
        return '<p class="muted">No scores to chart.</p>'
    low, high = min(values), max(values)
    if low >= 0.0 and high <= 1.0:  # the usual reward range: show all of it
        low, high = 0.0, 1.0
    if high == low:
        high = low + 1.0
    bins = HISTOGRAM_BINS
    width, height, pad = (320, 130, 24) if small else (640, 220, 36)
    testid = "" if small else ' data-testid="histogram"'
    counts = []
    # halves: scores near ±1.8e308 must not overflow the span; equal scores so large that
    # adding 1 changes nothing leave no span at all: they share the first bin
    span = (high / 2 - low / 2) or 1.0
    for _, _, scores in series:
        bucket = [0] * bins
        for score in scores:
            bucket[max(0, min(bins - 1, int((score / 2 - low / 2) / span * bins)))] += 1
        counts.append(bucket)
    top = max(max(bucket) for bucket in counts) or 1
    slot = (width - 2 * pad) / bins
    bar = slot * 0.8 / len(series)
    parts = [
        f'<svg class="chart" viewBox="0 0 {width} {height}" role="img" '
        f'aria-label="Histogram of per-row mean scores"{testid}>'
    ]
    base = height - pad
    parts.append(f'<line x1="{pad}" y1="{base}" x2="{width - pad}" y2="{base}" class="axis"/>')
    for b in range(bins + 1):
        x = pad + b * slot
        if b % 2 == 0 or bins <= 5:
            edge = low * (1 - b / bins) + high * (b / bins)
            parts.append(f'<text x="{x:.1f}" y="{base + 14}" class="tick">{edge:.2g}</text>')
    for s, (label, colour, _) in enumerate(series):
        for b, count in enumerate(counts[s]):
            if not count:
                continue
            h = (height - 2 * pad) * count / top
            x = pad + b * slot + slot * 0.1 + s * bar
            parts.append(
                f'<rect x="{x:.1f}" y="{base - h:.1f}" width="{bar:.1f}" height="{h:.1f}" '
                f'fill="{colour}"><title>{html.escape(label)}: {count} rows</title></rect>'
            )
    parts.append(f'<text x="{pad}" y="{pad - 12}" class="tick">rows (max {top})</text>')
    parts.append("</svg>")
    return "".join(parts)


def pass_at_k_svg(data: dict[str, Any]) -> str:
    """pass@k of each run's first eval fn over every k ≤ n (computed from the rows)."""
    lines = []
    for run in data["runs"]:
        fn = run["fns"][0] if run["fns"] else None
        points = [
            (int(k), min(1.0, max(0.0, float(value))))
            for k, value in (run.get("pass_at_k") or {}).get(fn, [])
            if is_number(value)
        ]
        if points:
            lines.append((run["label"], run["colour"], points))
    ks = sorted({k for _, _, points in lines for k, _ in points})
    if len(ks) < 2:
        return '<p class="muted">One attempt per row (n = 1): pass@1 only, on the cards.</p>'
    width, height, pad = 640, 220, 36
    span = ks[-1] - ks[0]

    def x(k: int) -> float:
        return pad + (width - 2 * pad) * (k - ks[0]) / span

    def y(value: float) -> float:
        return height - pad - (height - 2 * pad) * value

    parts = [
        f'<svg class="chart" viewBox="0 0 {width} {height}" role="img" '
        'aria-label="pass@k curve" data-testid="pass-at-k">'
    ]
    parts.append(
        f'<line x1="{pad}" y1="{y(0):.1f}" x2="{width - pad}" y2="{y(0):.1f}" class="axis"/>'
    )
    for tick in (0.0, 0.5, 1.0):
        parts.append(f'<text x="4" y="{y(tick) + 4:.1f}" class="tick">{tick:g}</text>')
        parts.append(
            f'<line x1="{pad}" y1="{y(tick):.1f}" x2="{width - pad}" y2="{y(tick):.1f}" '
            'class="grid"/>'
        )
    step = max(1, len(ks) // 12)  # at most a dozen labels, the last k always
    for i, k in enumerate(ks):
        if i % step == 0 or k == ks[-1]:
            parts.append(f'<text x="{x(k):.1f}" y="{height - pad + 16}" class="tick">k={k}</text>')
    for label, colour, points in lines:
        path = " ".join(f"{x(k):.1f},{y(v):.1f}" for k, v in points)
        parts.append(f'<polyline points="{path}" fill="none" stroke="{colour}" stroke-width="2"/>')
        for k, v in points:
            parts.append(
                f'<circle cx="{x(k):.1f}" cy="{y(v):.1f}" r="3" fill="{colour}">'
                f"<title>{html.escape(label)}: pass@{k} = {v:.3f}</title></circle>"
            )
    parts.append("</svg>")
    return "".join(parts)


#: slices drawn per column (the largest); the table lists them all
SLICES_DRAWN = 12


def slice_charts(data: dict[str, Any], means: dict[str, list[dict[str, list[float]]]]) -> str:
    """Per column worth slicing by: the per-row mean scores of the first eval fn (every
    row), one small histogram per value (largest values first), a bar per run; hidden
    until picked."""
    figures = []
    for column in data["columns"]:
        sliced = data["slices"].get(column) or {}
        first = (sliced.get("runs") or [{}])[0].get("values", [])
        counts = {v["value"]: v["rows"] for v in first}
        values = list(counts)
        panels = []
        for value in values[:SLICES_DRAWN]:
            scores = [per_run.get(value, []) for per_run in means.get(column, [])]
            panels.append(
                f'<div class="panel"><div class="panel-title">{html.escape(value)} '
                f'<span class="muted">({counts[value]:,} rows)</span></div>'
                f"{histogram_svg(data['runs'], scores, small=True)}</div>"
            )
        more = len(values) - SLICES_DRAWN
        note = f'<p class="muted">… {more} more values in the table.</p>' if more > 0 else ""
        figures.append(
            f'<figure class="slice-chart" data-column="{html.escape(column)}" hidden>'
            f"<figcaption>Per-row mean score by {html.escape(column)} (first eval fn)"
            f'</figcaption><div class="panels">{"".join(panels)}</div>{note}</figure>'
        )
    return "".join(figures)
