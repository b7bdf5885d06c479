"""docs/compare.md's worked example: its numbers are what `eval compare` prints, and
they agree with scipy (computed independently here, never in the package)."""

from __future__ import annotations

import json
import re
import statistics
from pathlib import Path

import pytest
from scipy import stats as sp

from tests.osmosis_cli.conftest import Invoke
from tests.results_docs import write

DOC = Path(__file__).resolve().parents[2] / "docs" / "compare.md"


def _example() -> tuple[list[float], list[float], dict[str, object]]:
    text = DOC.read_text(encoding="utf-8")
    table = text.split("<!-- worked-example-scores -->", 1)[1].split("\n\n", 1)[0]
    a, b = [], []
    for line in table.strip().splitlines()[2:]:
        cells = [c.strip() for c in line.strip("|").split("|")]
        a.append(float(cells[1]))
        b.append(float(cells[2]))
    block = text.split("<!-- worked-example-output -->", 1)[1]
    shown = json.loads(re.search(r"```json\n(.*?)```", block, re.S).group(1))  # type: ignore[union-attr]
    return a, b, shown


def test_the_worked_example_is_what_compare_prints(tmp_path: Path, invoke: Invoke) -> None:
    a, b, shown = _example()
    base = write(tmp_path / "baseline.json", {i: [s] for i, s in enumerate(a)})
    cand = write(tmp_path / "candidate.json", {i: [s] for i, s in enumerate(b)})
    result = invoke("eval", "compare", str(base), str(cand), "--json", "--fail-if-worse", "0.05")
    assert result.exit_code == 0, result.stderr  # the interval includes 0: no regression
    doc = result.data()
    assert doc["paired_rows"] == shown["paired_rows"] and doc["unpaired"] == shown["unpaired"]
    ours = doc["eval_fns"]["grader"]
    for key, value in shown["eval_fns"]["grader"].items():  # type: ignore[index, union-attr]
        if isinstance(value, float):
            assert ours[key] == pytest.approx(value, abs=5e-5), key
        else:
            assert ours[key] == value, key
    text = invoke("eval", "compare", str(base), str(cand)).stdout
    assert "[-0.375, +0.146]" in text and "0.625" in text
    flips = [
        line.split("\t")[:2] for line in text.split("Flipped rows (grader)")[1].splitlines()[2:6]
    ]
    assert flips == [
        ["4", "pass→fail"],
        ["8", "pass→fail"],
        ["10", "fail→pass"],
        ["11", "pass→fail"],
    ]


def test_the_worked_example_agrees_with_scipy() -> None:
    a, b, shown = _example()
    numbers = shown["eval_fns"]["grader"]  # type: ignore[index]
    diffs = [y - x for x, y in zip(a, b, strict=True)]
    assert numbers["mean_a"] == pytest.approx(statistics.fmean(a), abs=5e-5)
    assert numbers["mean_b"] == pytest.approx(statistics.fmean(b), abs=5e-5)
    assert numbers["diff"] == pytest.approx(statistics.fmean(diffs), abs=5e-5)
    low, high = sp.t.interval(
        0.95, len(diffs) - 1, loc=statistics.fmean(diffs), scale=sp.sem(diffs)
    )
    assert (numbers["t_ci_low"], numbers["t_ci_high"]) == pytest.approx((low, high), abs=5e-5)
    flips_down = sum(x >= 1.0 > y for x, y in zip(a, b, strict=True))
    flips_up = sum(y >= 1.0 > x for x, y in zip(a, b, strict=True))
    assert (numbers["flipped_to_fail"], numbers["flipped_to_pass"]) == (flips_down, flips_up)
    p = sp.binomtest(min(flips_down, flips_up), flips_down + flips_up, 0.5).pvalue
    assert numbers["mcnemar_p"] == pytest.approx(p, abs=5e-5)
    assert numbers["pass_rate_a"] == pytest.approx(sum(x >= 1.0 for x in a) / len(a), abs=5e-5)
    boot = sp.bootstrap(
        (diffs,),
        lambda x, axis: x.mean(axis=axis),
        method="percentile",
        n_resamples=10_000,
        random_state=0,
    ).confidence_interval
    # another random stream: equal to Monte Carlo error (the resampled means move in
    # steps of 1/48 here, so one step of tolerance)
    assert numbers["ci_low"] == pytest.approx(boot.low, abs=0.021)
    assert numbers["ci_high"] == pytest.approx(boot.high, abs=0.021)
