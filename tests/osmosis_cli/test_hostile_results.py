"""The results commands (compare, report) on documents from elsewhere: hand-edited,
hostile, or holding scores near the limits of a float. Every such document is one
clear error naming the file and the place (exit 2) or a valid result — never an
internal error, never ``NaN``/``Infinity`` in JSON, never hundreds of digits."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.osmosis_cli.conftest import Invoke
from tests.results_docs import write


def strict(text: str) -> Any:
    """JSON as a standards-following reader takes it (no NaN/Infinity)."""

    def refuse(constant: str) -> Any:
        raise ValueError(f"not JSON: {constant}")

    return json.loads(text, parse_constant=refuse)


@pytest.fixture
def good(tmp_path: Path) -> Path:
    return write(tmp_path / "a.json", {0: [1.0, 0.0], 1: [1.0, 1.0], 2: [0.0, 0.0]})


def edited(good: Path, name: str, change: Callable[[dict[str, Any]], Any]) -> Path:
    document = json.loads(good.read_text())
    text = change(document)
    path = good.with_name(f"{name}.json")
    path.write_text(text if isinstance(text, str) else json.dumps(document))
    return path


def raw(old: str, new: str) -> Callable[[dict[str, Any]], str]:
    def change(document: dict[str, Any]) -> str:
        text = json.dumps(document)
        assert old in text, old
        return text.replace(old, new, 1)

    return change


def setter(*path: Any, value: Any) -> Callable[[dict[str, Any]], None]:
    def change(document: dict[str, Any]) -> None:
        target = document
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value

    return change


HOSTILE = {
    "nested head": (
        raw('"config": {', '"x": ' + "[" * 50_000 + "]" * 50_000 + ', "config": {'),
        "nested too deeply",
    ),
    "an integer score of 10**400": (raw('"grader": 1.0', '"grader": 1' + "0" * 400), "score"),
    "NaN in the summary": (raw('"mean": ', '"mean": NaN, "x": '), "NaN is not a JSON number"),
    "Infinity in a duration": (raw('"duration_ms": 100', '"duration_ms": Infinity'), "Infinity"),
    "1e400 tokens": (raw('"tokens": 10', '"tokens": 1e400'), "too large"),
    "NaN threshold": (raw('"pass_threshold": 1.0', '"pass_threshold": NaN'), "NaN"),
    "summary.eval_fns a list": (setter("summary", "eval_fns", value=[1]), "summary.eval_fns"),
    "a statistic that is text": (
        setter("summary", "eval_fns", "grader", "mean", value="high"),
        "summary.eval_fns.grader.mean",
    ),
    "total_runs as text": (setter("summary", "total_runs", value="many"), "summary.total_runs"),
    "total_tokens negative": (setter("summary", "total_tokens", value=-3), "total_tokens"),
    "status a number": (setter("summary", "status", value=3), "summary.status"),
    "n_runs as text": (setter("config", "n_runs", value="3"), "config.n_runs"),
    "eval_fns an object": (setter("config", "eval_fns", value={"a": 1}), "config.eval_fns"),
    "model a list": (setter("config", "model", value=[1]), "config.model"),
    "threshold as text": (setter("config", "pass_threshold", value="1"), "pass_threshold"),
    "model_tag a number": (setter("rows", 0, "runs", 0, "model_tag", value=5), "model_tag"),
    "skipped as text": (setter("rows", 0, "runs", 0, "skipped", value="yes"), "skipped"),
    "run_index as text": (setter("rows", 0, "runs", 0, "run_index", value="x"), "run_index"),
    "row_digest a number": (setter("rows", 0, "row_digest", value=5), "row_digest"),
    "fn_errors not text": (setter("rows", 0, "runs", 0, "fn_errors", value={"g": 5}), "fn_errors"),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_a_hostile_document_is_one_clear_error(invoke: Invoke, good: Path, case: str) -> None:
    change, expected = HOSTILE[case]
    bad = edited(good, "bad", change)
    for args in (
        ("eval", "compare", str(good), str(bad)),
        ("eval", "compare", str(bad), str(good), "--json"),
        ("eval", "report", str(bad), "-o", str(good.with_name("r.html"))),
        ("eval", "report", str(good), str(bad), "-o", str(good.with_name("r2.html"))),
    ):
        result = invoke(*args)
        assert result.exit_code == 2, (case, args, result.stderr)
        assert "internal error" not in result.stderr and "Traceback" not in result.stderr
        assert f"{bad}:" in result.stderr and expected in result.stderr, result.stderr


def test_unknown_keys_in_a_summary_are_ignored_not_fatal(invoke: Invoke, good: Path) -> None:
    other = edited(
        good,
        "other",
        setter("summary", "eval_fns", "grader", "pass_at_k", value={"1": 0.5}),
    )
    assert invoke("eval", "compare", str(good), str(other)).exit_code == 0
    report = invoke("eval", "report", str(other), "-o", str(good.with_name("r.html")))
    assert report.exit_code == 0, report.stderr


def test_messages_of_any_shape_render(invoke: Invoke, good: Path) -> None:
    odd = edited(
        good,
        "odd",
        setter("rows", 0, "runs", 0, "messages", value=[1, "x", None, {"role": 5, "content": {}}]),
    )
    report = invoke("eval", "report", str(odd), str(good), "-o", str(good.with_name("r.html")))
    assert report.exit_code == 0, report.stderr


def huge(good: Path, name: str, a: float, b: float) -> Path:
    document = json.loads(good.read_text())
    for row in document["rows"]:
        for position, run in enumerate(row["runs"]):
            run["scores"]["grader"] = a if position == 0 else b
    path = good.with_name(f"{name}.json")
    path.write_text(json.dumps(document))
    return path


@pytest.mark.parametrize(
    ("a", "b"), [(1e308, 1e308), (1e308, -1e308), (-1.7e308, -1.7e308), (1.5e308, 1.7e308)]
)
def test_scores_near_the_limits_of_a_float_compare_and_report(
    invoke: Invoke, good: Path, a: float, b: float
) -> None:
    """Runs allow any finite score; the results commands must cope with all of them."""
    big = huge(good, "big", a, b)
    low = huge(good, "low", -a, -b)
    result = invoke("eval", "compare", str(low), str(big), "--json")
    assert result.exit_code == 0, result.stderr
    data = strict(result.stdout)["data"]  # no Infinity, no NaN
    grader = data["eval_fns"]["grader"]
    assert grader["mean_a"] is not None and grader["mean_b"] is not None
    human = invoke("eval", "compare", str(low), str(big))
    assert human.exit_code == 0, human.stderr
    for text in (human.stdout, human.stderr):
        assert "inf" not in text.lower().replace("info", "") and "nan" not in text.lower()
    cells = [c for line in human.stdout.splitlines() for c in line.split("\t")]
    numbers = [c for c in cells if c[:1] in "+-0123456789["]
    assert numbers and all(len(cell) < 40 for cell in numbers), numbers
    report = invoke("eval", "report", str(low), str(big), "-o", str(good.with_name("r.html")))
    assert report.exit_code == 0, report.stderr
    page = good.with_name("r.html").read_text()
    assert "NaN" not in page and "Infinity" not in page


def test_a_difference_beyond_a_float_is_missing_with_a_note(invoke: Invoke, good: Path) -> None:
    low = huge(good, "low", -1.7e308, -1.7e308)
    high = huge(good, "high", 1.7e308, 1.7e308)
    result = invoke("eval", "compare", str(low), str(high), "--json")
    assert result.exit_code == 0, result.stderr
    data = strict(result.stdout)["data"]
    assert data["eval_fns"]["grader"]["diff"] is None
    assert data["eval_fns"]["grader"]["ci_low"] is None
    assert any("beyond the range of a number" in note for note in data["notes"])
    assert data["eval_fns"]["grader"]["mean_b"] == pytest.approx(1.7e308)


def test_statistics_of_values_at_the_limits_of_a_float() -> None:
    from osmosis_local_runner.results.statistics.stats import bootstrap_interval, mean, t_interval

    assert mean([1.7e308, -1.7e308, 1.7e308, 1.7e308]) == pytest.approx(0.85e308)
    assert mean([1.7e308, 1.7e308]) == 1.7e308  # a plain sum would be inf
    t = t_interval([1e308, 0.9e308, 1.1e308])
    assert t is not None and t.low < 1e308 < t.high
    assert t.low - t.low == 0.0 and t.high - t.high == 0.0  # finite
    boot = bootstrap_interval([1.7e308, -1.7e308, 1.7e308], resamples=200)
    assert boot is not None and -1.7e308 <= boot.low <= boot.high <= 1.7e308


@pytest.mark.parametrize(
    ("a", "b"),
    [(1.79e308, 1.79e308), (-1.79e308, 1.7976931348623157e308), (1.7976931348623157e308, 0.0)],
)
def test_a_report_of_one_run_near_the_largest_float(
    invoke: Invoke, good: Path, a: float, b: float
) -> None:
    """Issue 33: equal scores near ±1.8e308 left the histogram no span (ZeroDivisionError)."""
    big = huge(good, "big", a, b)
    report = invoke("eval", "report", str(big), "-o", str(good.with_name("r.html")))
    assert report.exit_code == 0, report.stderr
    page = good.with_name("r.html").read_text()
    assert "NaN" not in page and "Infinity" not in page
