"""The report's numbers, computed in Python (the page only formats them): expected and
answers per row, B − A per row, pass@k over every k ≤ n, slices, a suite's ranking."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path
from typing import Any

import pytest

from osmosis_client.errors import InvalidInputError
from osmosis_local_runner.results.compare.compare import compare
from osmosis_local_runner.results.compare.compare_slices import compare_by
from osmosis_local_runner.results.documents.documents import ResultsFile
from osmosis_local_runner.results.documents.sources import Source, sources_of
from osmosis_local_runner.results.reports.report import render
from osmosis_local_runner.results.reports.report_charts import pass_at_k_svg
from osmosis_local_runner.results.reports.report_data import build_data, ks_up_to
from osmosis_local_runner.results.statistics.scoring import mean_pass_at_k
from tests.results_docs import attempt, write


def scores_for(seed: int, rows: int, n: int) -> dict[int, list[float]]:
    rng = random.Random(seed)
    return {i: [float(rng.random() < 0.5) for _ in range(n)] for i in range(rows)}


def pair(tmp_path: Path, n: int = 3, rows: int = 30) -> list[Source]:
    meta = {
        i: {"level": ["easy", "hard"][i % 2], "id": f"r{i}", "one": "same"} for i in range(rows)
    }
    a = write(tmp_path / "a.json", scores_for(1, rows, n), metadata=meta)
    b = write(tmp_path / "b.json", scores_for(2, rows, n), metadata=meta, model="mock/b")
    return sources_of([a, b])


def test_rows_carry_expected_answers_and_b_minus_a(tmp_path: Path) -> None:
    data = build_data(pair(tmp_path))
    row = data["rows"][3]
    assert row["expected"] == "truth 3"
    a, b = row["cells"]
    assert row["diff"]["grader"] == pytest.approx(b["mean"]["grader"] - a["mean"]["grader"])
    assert a["answer"]["grader"].startswith("answer 3.")  # the telling answer
    assert [t["pass"]["grader"] for t in a["attempts"]] == [
        t["scores"]["grader"] >= 1.0 for t in a["attempts"]
    ]


def test_an_errored_row_carries_its_first_error_for_the_table(tmp_path: Path) -> None:
    failing = [attempt(1, 0, None, error="workflow: RuntimeError: boom"), attempt(1, 1, 1.0)]
    data = build_data(sources_of([write(tmp_path / "r.json", {0: [1.0]}, extra={1: failing})]))
    cells = {row["cells"][0]["row"]: row["cells"][0] for row in data["rows"]}
    assert cells[1]["error"] == {"grader": "workflow: RuntimeError: boom"}
    assert cells[0]["error"] == {}


@pytest.mark.parametrize("n", [1, 2, 4])
def test_pass_at_k_covers_every_k_up_to_n(tmp_path: Path, n: int) -> None:
    scores = scores_for(3, 25, n)
    data = build_data(sources_of([write(tmp_path / "r.json", scores)]))
    points = data["runs"][0]["pass_at_k"]["grader"]
    assert [k for k, _ in points] == list(range(1, n + 1))
    counts = [(n, sum(1 for s in values if s >= 1.0)) for values in scores.values()]
    for k, value in points:
        assert value == pytest.approx(mean_pass_at_k(counts, k))
    chart = pass_at_k_svg(data)
    if n == 1:
        assert "pass@1 only" in chart
    else:
        assert chart.count("<circle") == n and f"k={n}" in chart  # n = 2 is drawn too


def test_many_attempts_draw_every_k_to_fifty_then_doubling() -> None:
    assert ks_up_to(3) == [1, 2, 3]
    assert ks_up_to(300) == [*range(1, 51), 100, 200, 300]


def test_only_columns_worth_slicing_are_offered_and_their_numbers_are_compares(
    tmp_path: Path,
) -> None:
    sources = pair(tmp_path)
    data = build_data(sources)
    assert data["columns"] == ["level"]  # "id": 30 values… fine; "one": a single value
    sliced = data["slices"]["level"]
    comparison = compare(sources[0].results.path, sources[1].results.path, by=["level"])
    assert sliced["compare"] == compare_by(comparison, "level").to_json()
    easy = sliced["runs"][0]["values"][0]
    assert easy["value"] == "easy" and easy["rows"] == 15
    assert all(
        row["meta"] == {"level": ["easy", "hard"][row["cells"][0]["row"] % 2]}
        for row in data["rows"]
    )


def test_by_opens_the_page_on_a_column_even_one_with_many_values(tmp_path: Path) -> None:
    sources = pair(tmp_path, rows=60)  # 60 ids: more than a slice picker lists
    data = build_data(sources, by="id")
    assert data["slice_by"] == "id" and "id" in data["columns"]
    assert len(data["slices"]["id"]["runs"][0]["values"]) == 50
    with pytest.raises(InvalidInputError, match="'nope'"):
        build_data(sources, by="nope")


def test_a_runs_own_slice_by_is_the_default(tmp_path: Path) -> None:
    meta = {i: {"level": ["easy", "hard"][i % 2]} for i in range(6)}
    doc = write(tmp_path / "r.json", scores_for(4, 6, 2), metadata=meta, slice_by="level")
    assert build_data(sources_of([doc]))["slice_by"] == "level"


def _suite(tmp_path: Path) -> Path:
    directory = tmp_path / "suite"
    directory.mkdir()
    entries = []
    for name, model, n, score in (
        ("base", "mock/a", 1, 0.2),
        ("big-n1", "mock/b", 1, 0.9),
        ("big-n3", "mock/b", 3, 0.7),
        ("small-n3", "mock/a", 3, 0.4),
    ):
        write(directory / f"{name}.json", {i: [float(i / 10 < score)] * n for i in range(10)})
        sweep: dict[str, Any] = {} if name == "base" else {"model_path": model, "n": n}
        entries.append({"name": name, "output": f"{name}.json", "sweep": sweep, "settings": {}})
    (directory / "suite.json").write_text(json.dumps({"suite": "nightly", "entries": entries}))
    return directory


def test_a_suite_report_is_titled_ranked_and_charts_each_swept_setting(tmp_path: Path) -> None:
    page, rows = render(sources_of([_suite(tmp_path)]))
    assert '<h1 data-testid="title">suite nightly</h1>' in page
    ranking = page.split('data-testid="suite-ranking"', 1)[1].split("</table>", 1)[0]
    names = re.findall(r"<tr><td>\d+</td><td>([^<]+)</td>", ranking)
    assert names == ["big-n1", "big-n3", "small-n3", "base"]  # best mean first, as printed
    # model_path and n each swept over two values: mean and pass@1 against each
    assert page.count('data-testid="setting-chart"') == 4
    assert rows == 10


def test_pass_at_k_chart_uses_the_rows_not_the_summary(tmp_path: Path) -> None:
    doc = write(tmp_path / "r.json", scores_for(5, 12, 4))
    source = Source("r", ResultsFile(doc))
    source.results.summary["eval_fns"]["grader"].pop("pass_at_4", None)  # an old document
    points = build_data([source])["runs"][0]["pass_at_k"]["grader"]
    assert points[-1][0] == 4


def test_a_large_run_lists_its_most_telling_rows_and_counts_every_row(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from osmosis_local_runner.results.reports import report_data

    monkeypatch.setattr(report_data, "ROWS_SHOWN", 12)
    monkeypatch.setattr(report_data, "TRANSCRIPTS_SHOWN", 5)
    scores = {i: [0.0 if i % 3 == 0 else 1.0] for i in range(30)}  # rows 0, 3, … 27 fail
    doc = write(tmp_path / "r.json", scores, metadata={i: {"k": "ab"[i % 2]} for i in scores})
    page, rows = render(sources_of([doc]))
    data = json.loads(page.split('id="data">', 1)[1].split("</script>", 1)[0])
    listed = [row["cells"][0]["row"] for row in data["rows"]]
    assert rows == 30 and data["total_rows"] == 30 and len(listed) == 12
    assert set(range(0, 30, 3)) <= set(listed) and listed == sorted(listed)  # failures first
    with_transcripts = [
        row for row in data["rows"] if row["cells"][0]["attempts"][0]["messages"] is not None
    ]
    assert len(with_transcripts) == 5 and data["transcripts_shown"] == 5
    assert 'data-testid="bounded"' in page and "covers all 30 rows" in page
    assert "The table lists 12 of them" in page and "r.json</a>" in page
    # every row counted: the histogram and the slices are over all 30
    histogram = page.split('data-testid="histogram"')[1].split("</svg>")[0]
    assert sum(int(b) for b in re.findall(r"<title>r: (\d+) rows</title>", histogram)) == 30
    assert sum(v["rows"] for v in data["slices"]["k"]["runs"][0]["values"]) == 30
