"""``eval report``: one self-contained HTML file for one run or several.

Everything is inline (CSS, a small hand-written script, the data as JSON, the charts as
SVG drawn here in Python): the file opens offline, from an e-mail or a CI artefact, and
a Content-Security-Policy forbids it any network access. Numbers shown are computed
here, from the documents, never re-derived in the browser; user content (prompts,
answers, transcripts) reaches the page only as text (``textContent``), never as markup.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from osmosis_client._fs import atomic_write
from osmosis_client.errors import InvalidInputError
from osmosis_local_runner.results.documents.sources import Source, sources_of
from osmosis_local_runner.results.reports.report_charts import (
    histogram_svg,
    pass_at_k_svg,
    slice_charts,
)
from osmosis_local_runner.results.reports.report_data import build_data, shown_path
from osmosis_local_runner.results.reports.report_suite import (
    ranked_html,
    setting_charts,
    suite_name,
)
from osmosis_local_runner.results.statistics.intervals import half_width_text
from osmosis_local_runner.results.statistics.scoring import score_text
from osmosis_local_runner.results.statistics.usage import usage_facts

if TYPE_CHECKING:
    from osmosis_local_runner.results.compare.compare import Comparison

ASSETS = Path(__file__).with_name("report_assets")


@dataclass
class Written:
    path: Path
    rows: int
    bytes: int


# ------------------------------------------------------------------ charts


def _fmt(value: Any) -> str:
    return score_text(value)


def cards_html(data: dict[str, Any]) -> str:
    cards = []
    for position, run in enumerate(data["runs"]):
        summary = run["summary"]
        fn = run["fns"][0] if run["fns"] else None
        stats = (summary.get("eval_fns") or {}).get(fn) or {}
        facts = [
            ("mean", _fmt(stats.get("mean")) + half_width_text(stats)),
            ("pass@1", _fmt(stats.get("pass_at_1"))),
            ("rows", f"{summary.get('total_rows') or 0:,}"),
            ("attempts", f"{summary.get('total_runs') or 0:,}"),
            ("errored", f"{summary.get('errored_runs') or 0:,}"),
            ("tokens", f"{summary.get('total_tokens') or 0:,}"),
            ("time", f"{(summary.get('total_duration_ms') or 0) / 1000:.1f}s"),
            *usage_facts(summary.get("usage")),
            *(
                [("reviewed", f"{summary['reviewed_attempts']:,}")]
                if summary.get("reviewed_attempts")
                else []
            ),
        ]
        facts_html = "".join(
            f'<div class="fact"><span class="value" '
            f'data-testid="{name.replace("@", "_at_").replace(" ", "_")}-{position}">'
            f'{html.escape(value)}</span><span class="name">{name}</span></div>'
            for name, value in facts
        )
        more = "".join(
            f"<li><code>{html.escape(name)}</code>: mean {_fmt(s.get('mean'))}, "
            f"pass@1 {_fmt(s.get('pass_at_1'))}</li>"
            for name, s in (summary.get("eval_fns") or {}).items()
        )
        cards.append(
            f'<section class="card" style="border-top-color:{run["colour"]}">'
            f"<h2>{html.escape(run['label'])}</h2>"
            f'<p class="muted">{html.escape(run["model"])} · n={run["n"]} · pass threshold '
            f"{run['threshold']:g} · {html.escape(str(summary.get('status', '?')))}"
            f"{_stopped_note(summary)}{_verdicts_note(summary)}</p>"
            f'<div class="facts">{facts_html}</div><ul class="fns">{more}</ul></section>'
        )
    return "".join(cards)


def _kappa_text(found: dict[str, Any]) -> str:
    """`` · Cohen's κ 0.62 [0.41, 0.80], agreement 85%, grader passes 70%, reviewers 60%``."""
    value, ci = found.get("stats_kappa"), found.get("stats_kappa_ci")
    if not isinstance(value, int | float):
        return ""
    interval = f" [{ci[0]:.2f}, {ci[1]:.2f}]" if isinstance(ci, list) else ""
    return (
        f' · <span data-testid="kappa">Cohen\'s κ {value:.2f}{interval}</span>, agreement '
        f"{found['stats_agreement']:.0%}, the grader passes {found['stats_grader_pass_rate']:.0%}, "
        f"the reviewers {found['stats_reviewer_pass_rate']:.0%}"
    )


def _stopped_note(summary: dict[str, Any]) -> str:
    """Why a stopped run stopped (its ``stopped_reason``), beside its status."""
    reason = summary.get("stopped_reason")
    if summary.get("status") != "stopped" or not isinstance(reason, str):
        return ""
    return f' (<span data-testid="stopped-reason">{html.escape(reason)}</span>)'


def _verdicts_note(summary: dict[str, Any]) -> str:
    reviewed = summary.get("reviewed_attempts")
    if not reviewed:
        return ""
    return (
        f' · <b data-testid="reviewed-note">{reviewed:,} attempt(s) scored as people '
        "reviewed them</b>, not as graded"
    )


# ------------------------------------------------------------------ page


def _script_json(data: dict[str, Any]) -> str:
    """JSON safe inside <script>: no closing tag, no HTML comment, no line separators."""
    text = json.dumps(data, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    return (
        text.replace("<", "\\u003c")
        .replace(">", "\\u003e")
        .replace("&", "\\u0026")
        .replace("\u2028", "\\u2028")
        .replace("\u2029", "\\u2029")
    )


def script_hash(script: str) -> str:
    """The CSP source allowing exactly this inline script."""
    digest = hashlib.sha256(script.encode("utf-8")).digest()
    return f"'sha256-{base64.b64encode(digest).decode()}'"


def live_update(sources: Sequence[Source]) -> dict[str, Any]:
    """What a live page (a running run in the viewer) takes in place: its rows and its
    cards, as the page would have them now (the charts wait for the finished page)."""
    data = build_data(sources)
    running = any(s.results.summary.get("status") == "running" for s in sources)
    return {
        "rows": data["rows"],
        "total_rows": data["total_rows"],
        "cards": cards_html(data),
        "running": running,
    }


def render(
    sources: Sequence[Source],
    *,
    by: str | None = None,
    live: str | None = None,
    home: str | None = None,
    review: dict[str, str] | None = None,
    toggle: str | None = None,
    relative_to: Path | None = None,
) -> tuple[str, int]:
    """The page and how many rows it covers. ``live``: the URL (same origin) a page of a
    running run polls for :func:`live_update` — it updates in place, keeping the reader's
    search, filters, open rows and place. ``home``: where the breadcrumbs lead back to
    (the viewer's run list; a written report has none). ``toggle``: the same page read
    the other way — with people's verdicts, or with the grader's. ``relative_to``: paths
    relative to this folder, none of the machine's (a page to publish)."""
    data = build_data(sources, by=by, relative_to=relative_to)
    if live is not None:
        data["live"] = live
    if review is not None:  # the viewer's page of one run: reviews are written from it
        data["review"] = review
    charts = data.pop("_charts")
    slice_means = data["slices"].pop("_means", {})
    suite = suite_name(sources)
    title = _title(sources, suite)
    reviewed = any(s.results.reviewed for s in sources)
    template = (ASSETS / "report.html").read_text(encoding="utf-8")
    script = (ASSETS / "report.js").read_text(encoding="utf-8")
    parts = {
        "TITLE": html.escape(f"osmosis eval report — {title}"),
        "HEADING": html.escape(title),
        "GENERATED": html.escape(data["generated"]),
        "CSS": (ASSETS / "report.css").read_text(encoding="utf-8"),
        "CARDS": cards_html(data),
        "SUITE": ranked_html(sources) + setting_charts(sources) if suite is not None else "",
        "COMPARISON": comparison_html(sources, charts["comparison"]),
        "BOUNDED": bounded_html(data, sources, relative_to),
        "HISTOGRAM": histogram_svg(data["runs"], charts["means"]),
        "PASS_AT_K": pass_at_k_svg(data),
        "SLICE_CHARTS": slice_charts(data, slice_means),
        "DATA": _script_json(data),
        "JS": script,
        # only our own script may run: an injection, should one ever get past the
        # escaping, is inert (no 'unsafe-inline')
        "SCRIPT_HASH": script_hash(script),
        # a live page may ask its own server for updates; a written report asks nothing
        "CONNECT": " connect-src 'self';" if live is not None or review is not None else "",
        "REVIEWS": reviews_html(data),
        "NAV": _crumbs(home, title, toggle if _judged(data) else None, reviewed),
    }
    # one pass over the template: text inserted (user content included) is never scanned
    page = re.sub(r"\{\{([A-Z_]+)\}\}", lambda m: parts[m.group(1)], template)
    return page, data["total_rows"]


def _title(sources: Sequence[Source], suite: str | None) -> str:
    if suite is not None:
        return f"suite {suite}"
    if len(sources) <= 2:
        return " vs ".join(s.label for s in sources)
    return f"{len(sources)} runs"


def _judged(data: dict[str, Any]) -> bool:
    """Whether people judged any attempt shown (else no verdicts to switch to)."""
    return any((run.get("agreement") or {}).get("reviewed") for run in data["runs"])


def _crumbs(home: str | None, title: str, toggle: str | None, reviewed: bool) -> str:
    """The way back to the viewer's run list (a written report has none), and the switch
    between the grader's verdicts and people's."""
    if home is None:
        return ""
    switch = ""
    if toggle is not None:
        what = "grader's verdicts" if reviewed else "reviewed verdicts"
        switch = (
            f' · <a data-testid="verdicts-toggle" href="{html.escape(toggle)}">'
            f"score with the {what}</a>"
        )
    return (
        f'<nav class="crumbs" data-testid="crumbs"><a href="{html.escape(home)}">runs</a>'
        f" › {html.escape(title)}{switch}</nav>"
    )


def reviews_html(data: dict[str, Any]) -> str:
    """Where reviewers and the grader disagree (each run's reviewed attempts)."""
    parts = []
    for run in data["runs"]:
        found = run.get("agreement") or {}
        if not found.get("reviewed"):
            continue
        label, fn = html.escape(run["label"]), html.escape(str(found.get("fn")))
        rows = "".join(
            f'<tr><td><a href="#row={d["row"]}">{d["row"]}</a></td><td>{d["attempt"]}</td>'
            f"<td>{'pass' if d['grader'] else 'fail'}</td>"
            f"<td>{'pass' if d['reviewer'] else 'fail'}</td>"
            f"<td>{html.escape(d.get('reason') or '')}</td>"
            f"<td>{html.escape(str(d.get('author') or ''))}</td></tr>"
            for d in found["disagree"][:200]
        )
        table = (
            "<table><thead><tr><th>row</th><th>attempt</th><th>grader</th><th>reviewer</th>"
            f"<th>reason</th><th>by</th></tr></thead><tbody>{rows}</tbody></table>"
            if rows
            else ""
        )
        parts.append(
            f'<section class="agreement" data-testid="agreement"><h2>Reviews of {label}</h2>'
            f'<p class="muted">{found["reviewed"]} attempt(s) reviewed; the grader '
            f"(<code>{fn}</code>) and the reviewers disagree on {len(found['disagree'])}"
            f"{_kappa_text(found)}</p>{table}</section>"
        )
    return "".join(parts)


def bounded_html(
    data: dict[str, Any], sources: Sequence[Source], relative_to: Path | None = None
) -> str:
    """When the page lists fewer rows than the runs hold: what it lists, and where all is
    (``relative_to``: a published page names the documents by their place in the project,
    with no link into the building machine)."""
    total, listed = data["total_rows"], len(data["rows"])
    transcripts = data["transcripts_shown"]
    if listed >= total and transcripts >= listed:
        return ""
    links = ", ".join(
        f"<code>{html.escape(shown_path(s.results.path, relative_to))}</code>"
        if relative_to is not None
        else f'<a href="{html.escape(s.results.path.resolve().as_uri())}">'
        f"{html.escape(str(s.results.path))}</a>"
        for s in sources
    )
    return (
        '<p class="bounded" data-testid="bounded">Every number and chart covers all '
        f"{total:,} rows. The table lists {listed:,} of them — those that errored, flipped "
        "or failed first (then the largest differences) — and keeps the transcripts of "
        f"{transcripts:,}. Every row and transcript is in the results: {links}.</p>"
    )


def comparison_html(sources: Sequence[Source], result: Comparison | None) -> str:
    """A vs B: ``eval compare``'s table (the same numbers), when the two runs pair."""
    if len(sources) != 2:
        return ""
    if result is None:
        from osmosis_local_runner.results.compare.compare import compare

        try:
            result = compare(
                sources[0].results.path,
                sources[1].results.path,
                reviewed=any(s.results.reviewed for s in sources),
            )
        except InvalidInputError as exc:
            return f'<p class="muted">Not compared: {html.escape(exc.message)}</p>'
    a, b = (html.escape(s.label) for s in sources)
    rows = []
    for fn, c in result.fns.items():
        rows.append(
            f"<tr><td><code>{html.escape(fn)}</code></td><td>{_fmt(c.mean_a)}</td>"
            f'<td>{_fmt(c.mean_b)}</td><td data-testid="diff-{html.escape(fn)}">'
            f"{c.diff_text()}</td><td>{c.interval_text()}</td><td>{c.flipped_to_fail}</td><td>{c.flipped_to_pass}</td>"
            f"<td>{c.mcnemar_p:.3g}</td></tr>"
        )
    return (
        f'<section class="comparison"><h2>{a} vs {b}</h2><p class="muted">'
        f"A is {a}, B is {b} (the page's order); {len(result.pairs)} paired rows (unpaired: "
        f"{result.unpaired_a} / {result.unpaired_b}); differences are B − A ({b} − {a}), as "
        "<code>osmosis eval compare</code> prints them</p><table><thead><tr><th>eval fn</th>"
        f"<th>mean {a}</th><th>mean {b}</th><th>difference</th><th>95% CI</th><th>pass→fail</th>"
        f"<th>fail→pass</th><th>McNemar p</th></tr></thead><tbody>{''.join(rows)}"
        "</tbody></table></section>"
    )


def write_report(
    paths: Sequence[Path], output: Path, *, by: str | None = None, reviewed: bool = False
) -> Written:
    """``reviewed``: attempts people reviewed count as they judged them (summary, table,
    comparison), the page saying so."""
    inputs = {str(p.resolve()) for p in paths if p.is_file()}
    if output.is_dir():
        raise InvalidInputError(
            f"{output} is a directory", hint="name a file, e.g. report.html", code="REPORT_PATH"
        )
    if str(output.resolve()) in inputs:
        raise InvalidInputError(
            f"{output} is one of the results documents",
            hint="choose another path for the report",
            code="REPORT_PATH",
        )
    sources = sources_of(paths)
    if reviewed:
        for source in sources:
            source.results.use_reviews()
    page, rows = render(sources, by=by)
    return Written(output, rows, write_page(output, page, mode=0o600))  # prompts, outputs


def read_page(path: Path) -> bytes:
    """A page this process wrote, read back to be published: never through a link."""
    from osmosis_client._fs import open_regular

    with open_regular(path) as handle:
        return handle.read()


def write_page(path: Path, page: str, *, mode: int = 0o644, code: str = "REPORT_PATH") -> int:
    """A page written whole (never through a link), its folders made; a place that
    cannot be written is one clear error (exit 2), not a traceback. Its size."""
    data = page.encode("utf-8")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, data, mode=mode)
    except OSError as exc:
        raise InvalidInputError(
            f"cannot write {path} ({exc.strerror or type(exc).__name__})",
            hint="choose a folder you can write to",
            code=code,
        ) from exc
    return len(data)
