"""Intervals where people read a run on the command line (issue 53): the summary table's
``mean ± half-width``, ``eval info --local``'s interval and variance split, JUnit's
properties — the same numbers as the document's."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

from tests.osmosis_cli.conftest import Invoke

RUN = [
    "eval",
    "run",
    "configs/eval/quickstart.toml",
    "--model",
    "mock/flaky-calculator",
    "--limit",
    "20",
    "--n",
    "4",
    "--name",
    "flaky",
]


def test_the_table_info_and_junit_carry_the_documents_interval(
    quickstart_project: Path, invoke: Invoke
) -> None:
    ran = invoke(*RUN, "--junit", "junit.xml")
    assert ran.exit_code in (0, 1), ran.stderr
    stats = json.loads((quickstart_project / ".osmosis/evals/flaky/results.json").read_text())[
        "summary"
    ]["eval_fns"]["grader"]
    half = (stats["ci_high"] - stats["ci_low"]) / 2
    assert f"{stats['mean']:.3f} ± {half:.3f}" in ran.stdout
    info = invoke("eval", "info", "--local", "flaky").stdout
    assert f"interval:  {stats['ci_low']:.3f} – {stats['ci_high']:.3f}" in info
    assert "within a row" in info and "4 attempts a row" in info
    suite = ET.parse(quickstart_project / "junit.xml").getroot().find("testsuite")
    assert suite is not None
    found = {p.get("name"): p.get("value") for p in suite.iter("property")}
    assert (
        float(str(found["ci_low"])) == round(stats["ci_low"], 6)
        or abs(float(str(found["ci_low"])) - stats["ci_low"]) < 1e-5
    )
    assert "ci_pass_at_k" not in found and "variance" not in found  # numbers only
