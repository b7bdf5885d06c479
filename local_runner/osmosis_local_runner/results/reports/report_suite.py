"""A suite's report: its entries ranked as the terminal ranks them, and each metric
against each swept setting (one line per combination of the other swept settings)."""

from __future__ import annotations

import html
import json
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from osmosis_local_runner.results.documents.sources import Source, primary_score
from osmosis_local_runner.results.statistics.scoring import score_text

#: the metrics drawn against each swept setting: (name, summary key of the first fn)
METRICS = (("mean", "mean"), ("pass@1", "pass_at_1"))
SERIES_COLOURS = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#000000")


def suite_name(sources: Sequence[Source]) -> str | None:
    """The suite all sources are entries of, or None."""
    names = {source.suite for source in sources}
    return names.pop() if len(names) == 1 and None not in names else None


def _first_fn(source: Source) -> dict[str, Any]:
    stats = (source.results.summary.get("eval_fns") or {}).values()
    return next((s for s in stats if isinstance(s, dict)), {})


def ranked_html(sources: Sequence[Source]) -> str:
    """The entries sorted by the primary score (the first eval fn's mean), as printed."""
    ordered = sorted(
        sources,
        key=lambda s: (
            primary_score(s.results.summary) is None,
            -(primary_score(s.results.summary) or 0.0),
        ),
    )
    rows = []
    for rank, source in enumerate(ordered, 1):
        summary, stats = source.results.summary, _first_fn(source)
        ks = sorted(int(k[8:]) for k in stats if k.startswith("pass_at_") and k[8:].isdigit())
        best = f"pass@{ks[-1]} {score_text(stats.get(f'pass_at_{ks[-1]}'))}" if ks else "–"
        sweep = ", ".join(f"{k}={_text(v)}" for k, v in (source.entry.get("sweep") or {}).items())
        cells = [
            str(rank),
            source.label,
            source.results.model,
            score_text(stats.get("mean")),
            score_text(stats.get("pass_at_1")),
            best,
            f"{summary.get('total_tokens') or 0:,}",
            f"{(summary.get('total_duration_ms') or 0) / 1000:.1f}s",
            f"{summary.get('errored_runs') or 0:,}",
            str(summary.get("status") or ""),
            sweep,
        ]
        rows.append("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in cells) + "</tr>")
    heads = [
        "#",
        "entry",
        "model",
        "mean",
        "pass@1",
        "best k",
        "tokens",
        "time",
        "errors",
        "status",
        "sweep",
    ]
    return (
        '<section class="suite" data-testid="suite-ranking"><h2>Entries, best first</h2>'
        "<table><thead><tr>" + "".join(f"<th>{h}</th>" for h in heads) + "</tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table></section>"
    )


def _text(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:g}"
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True)


def _swept(sources: Sequence[Source]) -> list[str]:
    keys: list[str] = []
    for source in sources:
        for key in source.entry.get("sweep") or {}:
            if key not in keys:
                keys.append(key)
    return keys


def setting_charts(sources: Sequence[Source]) -> str:
    """For each swept setting × metric: the metric at each of the setting's values."""
    figures = []
    for key in _swept(sources):
        sweeps = [s.entry.get("sweep") or {} for s in sources]
        if len({_text(sweep[key]) for sweep in sweeps if key in sweep}) < 2:
            continue  # swept over one value: nothing to see
        for name, stat in METRICS:
            figures.append(_setting_chart(sources, key, name, stat))
    if not figures:
        return ""
    return (
        '<section class="suite-charts"><h2>Metrics against the swept settings</h2>'
        f'<div class="charts">{"".join(figures)}</div></section>'
    )


def _setting_chart(sources: Sequence[Source], key: str, name: str, stat: str) -> str:
    series: dict[str, list[tuple[str, float, str]]] = defaultdict(list)
    values: list[str] = []
    for source in sources:
        sweep = source.entry.get("sweep") or {}
        value = _first_fn(source).get(stat)
        if key not in sweep or not isinstance(value, int | float):
            continue
        x = _text(sweep[key])
        if x not in values:
            values.append(x)
        others = ", ".join(f"{k}={_text(v)}" for k, v in sweep.items() if k != key) or "all"
        series[others].append((x, float(value), source.label))
    values.sort(key=_numeric_first)
    width, height, pad, side = 420, 200, 36, 70
    top = max([1.0, *(v for points in series.values() for _, v, _ in points)])

    def px(x: str) -> float:
        slot = (width - 2 * side) / max(1, len(values) - 1)
        return side + slot * values.index(x) if len(values) > 1 else width / 2

    def py(y: float) -> float:
        return height - pad - (height - 2 * pad) * (y / top)

    parts = [
        f"<figure><figcaption>{html.escape(name)} by {html.escape(key)}</figcaption>"
        f'<svg class="chart" viewBox="0 0 {width} {height}" role="img" '
        f'aria-label="{html.escape(name)} by {html.escape(key)}" data-testid="setting-chart">',
        f'<line x1="{pad}" y1="{py(0):.1f}" x2="{width - pad}" y2="{py(0):.1f}" class="axis"/>',
    ]
    for tick in (0.0, top / 2, top):
        parts.append(f'<text x="2" y="{py(tick) + 4:.1f}" class="tick">{tick:.2g}</text>')
    for x in values:
        parts.append(
            f'<text x="{px(x):.1f}" y="{height - pad + 16}" class="tick" text-anchor="middle">'
            f"{html.escape(x if len(x) <= 22 else x[:21] + '…')}</text>"
        )
    for i, (label, points) in enumerate(sorted(series.items())):
        colour = SERIES_COLOURS[i % len(SERIES_COLOURS)]
        points.sort(key=lambda p: values.index(p[0]))
        path = " ".join(f"{px(x):.1f},{py(v):.1f}" for x, v, _ in points)
        parts.append(f'<polyline points="{path}" fill="none" stroke="{colour}" stroke-width="2"/>')
        for x, v, entry in points:
            parts.append(
                f'<circle cx="{px(x):.1f}" cy="{py(v):.1f}" r="4" fill="{colour}"><title>'
                f"{html.escape(entry)} ({html.escape(label)}): {name} = {v:.3f}</title></circle>"
            )
    parts.append("</svg>")
    parts.append('<div class="series">')
    for i, label in enumerate(sorted(series)):
        colour = SERIES_COLOURS[i % len(SERIES_COLOURS)]
        parts.append(f'<span style="--c:{colour}">{html.escape(label)}</span>')
    parts.append("</div></figure>")
    return "".join(parts)


def _numeric_first(text: str) -> tuple[int, float, str]:
    try:
        return (0, float(text), "")
    except ValueError:
        return (1, 0.0, text)
