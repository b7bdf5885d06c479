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
from typing import Any

from osmosis_local_runner.results.documents.documents import Row, excerpt
from osmosis_local_runner.results.documents.sources import Source
from osmosis_local_runner.results.statistics.usage import usage_properties
from osmosis_local_runner.results.statistics.verdicts import RowVerdict

#: characters XML 1.0 cannot hold, even escaped
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def xml_text(text: Any) -> str:
    return _NOT_XML.sub("\ufffd", str(text))


def _seconds(ms: float) -> str:
    """Seconds to the millisecond (JUnit's schema allows three decimals); a time under a
    millisecond (a mock attempt) shows as 0.001, never as no time at all."""
    return f"{max(ms, 1.0) / 1000:.3f}" if ms > 0 else "0.000"


def junit_xml(sources: Sequence[Source], *, name: str = "osmosis eval") -> bytes:
    root = ET.Element("testsuites", name=xml_text(name))
    totals = {"tests": 0, "failures": 0, "errors": 0}
    total_ms = 0.0
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
            shown.update({k: v for k, v in stats.items() if isinstance(v, int | float)})
            shown.update(usage_properties(doc.summary.get("usage")))
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
        name=xml_text(case_name(row.index, verdict.prompt)),
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
        element.text = xml_text(f"{summary}\nerror: {verdict.error}\n{_expected_got(verdict)}")
    elif verdict.status == "failed":
        element = ET.SubElement(
            case, "failure", message=xml_text(summary), type="below_pass_threshold"
        )
        element.text = xml_text(f"{summary}\n{_expected_got(verdict)}")
    if verdict.answer or verdict.expected is not None:
        ET.SubElement(case, "system-out").text = xml_text(_expected_got(verdict))


def case_name(index: int, prompt: str | None) -> str:
    """``row 7: What is 17 * 23?`` (the prompt's excerpt; ``row 7`` without one)."""
    return f"row {index}: {excerpt(prompt, 60)}" if prompt else f"row {index}"


def _expected_got(verdict: RowVerdict) -> str:
    lines = [] if verdict.prompt is None else [f"prompt: {excerpt(verdict.prompt, 500)}"]
    if verdict.expected is not None:
        lines.append(f"expected: {excerpt(verdict.expected, 500)}")
    lines.append(f"answer: {verdict.answer}")
    return "\n".join(lines)


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


def _serialize(root: ET.Element) -> bytes:
    data: bytes = ET.tostring(root, encoding="utf-8", xml_declaration=True)
    return data + b"\n"
