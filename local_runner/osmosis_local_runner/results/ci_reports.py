"""CI artefacts from results: JUnit XML and a Markdown summary (GitHub's step summary).

JUnit: one ``<testsuite>`` per eval fn of a run (per suite entry × eval fn), one
``<testcase>`` per row. A row passes when more than half of its (non-skipped)
attempts pass; a row that does not pass is an ``<error>`` when one of its attempts
errored (or its eval fn raised), else a ``<failure>``; a row whose attempts were all
skipped is ``<skipped>``. Messages carry the answer's excerpt and the error. The
layout follows the common JUnit schema (Jenkins' junit-10.xsd, which the tests
validate against).
"""

from __future__ import annotations

import re
import socket
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from osmosis_local_runner.results.documents import (
    ResultsFile,
    Row,
    excerpt,
    majority_passes,
    pass_at_key,
)
from osmosis_local_runner.results.scoring import score_text
from osmosis_local_runner.results.sources import Source, primary_score

if TYPE_CHECKING:
    from osmosis_local_runner.results.compare import Comparison

#: characters XML 1.0 cannot hold, even escaped
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
WORST_SHOWN = 5


def xml_text(text: Any) -> str:
    return _NOT_XML.sub("\ufffd", str(text))


def _seconds(ms: float) -> str:
    return f"{ms / 1000:.3f}"


@dataclass
class RowVerdict:
    """One row's outcome for one eval fn."""

    status: str  # "passed", "failed", "error", "skipped"
    attempts: int
    passing: int
    errored: int
    mean: float | None
    error: str | None
    answer: str
    duration_ms: int

    @classmethod
    def of(cls, row: Row, fn: str, threshold: float) -> RowVerdict:
        runs = row.scored()
        attempts, passing = row.passes(fn, threshold)
        failed_runs = [r for r in runs if not r.success or (r.fn_errors and fn in r.fn_errors)]
        first_error = next((r.error or (r.fn_errors or {}).get(fn) for r in failed_runs), None)
        mean = row.mean_score(fn)
        if not attempts:
            status = "skipped"
        elif majority_passes(attempts, passing):
            status = "passed"
        elif failed_runs:
            status = "error"
        else:
            status = "failed"
        answered = next((r for r in runs if r.answer), None)
        return cls(
            status=status,
            attempts=attempts,
            passing=passing,
            errored=len(failed_runs),
            mean=mean,
            error=first_error,
            answer=excerpt(answered.answer if answered else None, 500),
            duration_ms=sum(r.duration_ms for r in row.runs if r.model_tag is None),
        )


def junit_xml(sources: Sequence[Source], *, name: str = "osmosis eval") -> bytes:
    root = ET.Element("testsuites", name=xml_text(name))
    totals = {"tests": 0, "failures": 0, "errors": 0}
    total_ms = 0
    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S")
    host = socket.gethostname()
    for source in sources:
        doc = source.results
        rows = list(doc.rows())
        for fn in doc.eval_fns:
            verdicts = [(row, RowVerdict.of(row, fn, doc.pass_threshold)) for row in rows]
            counts = {
                status: sum(v.status == status for _, v in verdicts)
                for status in ("failed", "error", "skipped")
            }
            suite_ms = sum(v.duration_ms for _, v in verdicts)
            label = source.label if len(doc.eval_fns) == 1 else f"{source.label} · {fn}"
            suite = ET.SubElement(
                root,
                "testsuite",
                name=xml_text(label),
                tests=str(len(verdicts)),
                failures=str(counts["failed"]),
                errors=str(counts["error"]),
                skipped=str(counts["skipped"]),
                time=_seconds(suite_ms),
                timestamp=stamp,
                hostname=xml_text(host),
            )
            properties = ET.SubElement(suite, "properties")
            stats = (doc.summary.get("eval_fns") or {}).get(fn) or {}
            shown = {"model": doc.model, "eval_fn": fn, "pass_threshold": doc.pass_threshold}
            shown.update({k: v for k, v in stats.items() if v is not None})
            for key, value in shown.items():
                ET.SubElement(
                    properties,
                    "property",
                    name=key,
                    value=xml_text(f"{value:.6g}" if isinstance(value, float) else value),
                )
            for row, verdict in verdicts:
                _testcase(suite, f"{source.label}.{fn}", row, verdict, doc.pass_threshold)
            totals["tests"] += len(verdicts)
            totals["failures"] += counts["failed"]
            totals["errors"] += counts["error"]
            total_ms += suite_ms
    for key, value in totals.items():
        root.set(key, str(value))
    root.set("time", _seconds(total_ms))
    ET.indent(root)
    return _serialize(root)


def _testcase(
    suite: ET.Element, classname: str, row: Row, verdict: RowVerdict, threshold: float
) -> None:
    case = ET.SubElement(
        suite,
        "testcase",
        classname=xml_text(classname),
        name=f"row {row.index}",
        time=_seconds(verdict.duration_ms),
    )
    mean = "-" if verdict.mean is None else f"{verdict.mean:.3g}"
    summary = (
        f"{verdict.passing} of {verdict.attempts} attempts passed (mean score {mean}, "
        f"pass threshold {threshold:g})"
    )
    if verdict.status == "skipped":
        ET.SubElement(case, "skipped", message="every attempt was skipped (remove_sample)")
    elif verdict.status == "error":
        element = ET.SubElement(
            case,
            "error",
            message=xml_text(f"{verdict.errored} attempts errored: {excerpt(verdict.error, 300)}"),
            type="errored_attempt",
        )
        element.text = xml_text(f"{summary}\nerror: {verdict.error}\nanswer: {verdict.answer}")
    elif verdict.status == "failed":
        element = ET.SubElement(
            case, "failure", message=xml_text(summary), type="below_pass_threshold"
        )
        element.text = xml_text(f"{summary}\nanswer: {verdict.answer}")
    if verdict.answer:
        ET.SubElement(case, "system-out").text = xml_text(verdict.answer)


@dataclass
class HostedCase:
    """A hosted run as a JUnit test case (the platform serves no per-row results)."""

    label: str
    name: str
    status: str
    pass_rate: float | None
    score: float | None
    url: str | None
    verdict: str | None  # None: passed


def hosted_junit_xml(cases: Sequence[HostedCase], *, name: str = "osmosis eval") -> bytes:
    root = ET.Element("testsuites", name=xml_text(name))
    failures = sum(c.verdict is not None for c in cases)
    suite = ET.SubElement(
        root,
        "testsuite",
        name=xml_text(name),
        tests=str(len(cases)),
        failures=str(failures),
        errors="0",
        timestamp=datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S"),
    )
    for case in cases:
        element = ET.SubElement(suite, "testcase", classname="hosted", name=xml_text(case.label))
        rate = "-" if case.pass_rate is None else f"{case.pass_rate:.4g}"
        facts = f"run {case.name}: {case.status}, pass rate {rate}"
        if case.url:
            facts += f"\n{case.url}"
        if case.verdict is not None:
            failure = ET.SubElement(
                element, "failure", message=xml_text(case.verdict), type="not_passed"
            )
            failure.text = xml_text(facts)
        ET.SubElement(element, "system-out").text = xml_text(facts)
    root.set("tests", str(len(cases)))
    root.set("failures", str(failures))
    root.set("errors", "0")
    ET.indent(root)
    return _serialize(root)


# ------------------------------------------------------------------ Markdown


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
        cells = [_md(fn), _num(stats.get("mean")), _num(stats.get("std"))]
        cells += [_num(stats.get(k)) for k in ks]
        lines.append("| " + " | ".join(cells) + " |")
    worst = worst_rows(doc)
    if worst:
        lines += ["", f"Worst rows ({_md(doc.eval_fns[0])}):", ""]
        lines += ["| row | score | answer | error |", "|---:|---:|---|---|"]
        for row, verdict in worst:
            lines.append(
                f"| {row.index} | {_num(verdict.mean)} | {_md(excerpt(verdict.answer, 80))} | "
                f"{_md(excerpt(verdict.error, 80))} |"
            )
    return "\n".join(lines) + "\n"


def worst_rows(doc: ResultsFile, limit: int = WORST_SHOWN) -> list[tuple[Row, RowVerdict]]:
    """The rows of the first eval fn that did not pass, lowest mean score first."""
    if not doc.eval_fns:
        return []
    fn = doc.eval_fns[0]
    failing = []
    for row in doc.rows():
        verdict = RowVerdict.of(row, fn, doc.pass_threshold)
        if verdict.status in ("failed", "error"):
            failing.append((row, verdict))
            failing.sort(key=lambda item: (item[1].mean or 0.0, item[0].index))
            del failing[limit:]
    return failing


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


def compare_markdown(comparison: Comparison) -> str:
    """``eval compare``: the per-fn table and the largest drops."""
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
    for fn, c in comparison.fns.items():
        lines.append(
            f"| {_md(fn)} | {_num(c.mean_a)} | {_num(c.mean_b)} | {c.diff_text()} | "
            f"{c.interval_text()} | "
            f"{_num(c.pass_rate_a)} | {_num(c.pass_rate_b)} | {c.flipped_to_fail} | "
            f"{c.flipped_to_pass} | {c.mcnemar_p:.3g} |"
        )
    if comparison.worst:
        lines += ["", "Largest drops:", "", "| fn | row | A | B | prompt | answer B |"]
        lines.append("|---|---:|---:|---:|---|---|")
        for w in comparison.worst[:10]:
            lines.append(
                f"| {_md(w.fn)} | {w.a.index} | {_num(w.score_a)} | {_num(w.score_b)} | "
                f"{_md(excerpt(w.prompt, 60))} | {_md(excerpt(w.answer_b, 60))} |"
            )
    return "\n".join(lines) + "\n"


def _serialize(root: ET.Element) -> bytes:
    data: bytes = ET.tostring(root, encoding="utf-8", xml_declaration=True)
    return data + b"\n"
