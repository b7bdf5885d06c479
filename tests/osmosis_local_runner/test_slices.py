"""Statistics by a dataset column: a run's slices are its summary computed over each
value's rows; a comparison's slices are eval compare over each value's pairs."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from osmosis_local_runner.results.compare.compare import compare
from osmosis_local_runner.results.compare.compare_slices import compare_by
from osmosis_local_runner.results.documents.documents import ResultsFile
from osmosis_local_runner.results.statistics.slices import (
    MAX_SLICES,
    MISSING,
    NoSuchColumn,
    check_column,
    slice_rows,
    slice_value,
)
from tests.results_docs import write


def test_values_are_text_numbers_as_json_and_missing_is_none() -> None:
    assert slice_value({"d": "hard"}, "d") == "hard"
    assert slice_value({"d": 3}, "d") == "3" and slice_value({"d": True}, "d") == "true"
    assert slice_value({"d": {"b": 1, "a": [2]}}, "d") == '{"a": [2], "b": 1}'
    assert slice_value({}, "d") == MISSING and slice_value({"d": None}, "d") == MISSING
    assert slice_value({"d": "  two\nlines "}, "d") == "two lines"
    assert len(slice_value({"d": "x" * 500}, "d")) == 60


def scores_for(seed: int, rows: int, n: int) -> dict[int, list[float]]:
    rng = random.Random(seed)
    return {i: [float(rng.random() < 0.3 + 0.05 * (i % 7)) for _ in range(n)] for i in range(rows)}


def test_a_runs_slices_are_its_summary_over_each_values_rows(tmp_path: Path) -> None:
    scores = scores_for(1, 40, 4)
    level = {i: {"level": ["easy", "hard", "mid"][i % 3]} for i in scores}
    whole = write(tmp_path / "all.json", scores, metadata=level, slice_by="level")
    sliced = ResultsFile(whole).summary["slices"]
    assert sliced["by"] == "level"
    assert [v["value"] for v in sliced["values"]] == ["easy", "hard", "mid"]  # 14, 13, 13 rows
    for value in sliced["values"]:
        rows = {i: s for i, s in scores.items() if level[i]["level"] == value["value"]}
        alone = ResultsFile(write(tmp_path / f"{value['value']}.json", rows)).summary
        expected = alone["eval_fns"]["grader"]
        got = value["eval_fns"]["grader"]
        assert value["rows"] == len(rows) and value["attempts"] == 4 * len(rows)
        assert got["mean"] == pytest.approx(expected["mean"])
        for k in (1, 3, 4):  # pass@k always includes k = n
            assert got[f"pass_at_{k}"] == pytest.approx(expected[f"pass_at_{k}"])


def test_largest_first_missing_last_numbers_in_number_order(tmp_path: Path) -> None:
    metadata = {0: {"k": 10}, 1: {"k": 9}, 2: {"k": 10}, 3: {}, 4: {"k": 2}, 5: {"k": 9}}
    doc = ResultsFile(write(tmp_path / "d.json", {i: [1.0] for i in metadata}, metadata=metadata))
    found = slice_rows(((r.metadata, r.runs) for r in doc.rows()), "k", ["grader"], 1.0)
    assert [(s.value, s.rows) for s in found.slices] == [
        ("9", 2),
        ("10", 2),
        ("2", 1),
        (MISSING, 1),
    ]


def test_an_identifier_column_keeps_the_largest_values_and_counts_the_rest(tmp_path: Path) -> None:
    rows = MAX_SLICES + 7
    metadata = {i: {"id": f"row-{i}"} for i in range(rows)}
    doc = ResultsFile(
        write(tmp_path / "d.json", {i: [1.0] for i in range(rows)}, metadata=metadata)
    )
    found = slice_rows(((r.metadata, r.runs) for r in doc.rows()), "id", ["grader"], 1.0)
    assert len(found.slices) == MAX_SLICES and found.hidden == 7
    assert found.to_json(["grader"], 1)["values_not_shown"] == 7


def test_a_column_no_row_has_is_refused_naming_the_columns(tmp_path: Path) -> None:
    with pytest.raises(NoSuchColumn, match="'nope'") as caught:
        check_column("nope", {"level", "topic"})
    assert caught.value.hint == "slice by one of its columns: level, topic"
    check_column(None, set())
    doc = ResultsFile(write(tmp_path / "d.json", {0: [1.0]}, metadata={0: {"a": 1}}))
    with pytest.raises(NoSuchColumn):
        slice_rows(((r.metadata, r.runs) for r in doc.rows()), "nope", ["grader"], 1.0)


def test_compare_by_is_compare_over_each_values_pairs(tmp_path: Path) -> None:
    a_scores, b_scores = scores_for(2, 60, 3), scores_for(3, 60, 3)
    level = {i: {"level": "easy" if i % 4 else "hard"} for i in a_scores}
    a = write(tmp_path / "a.json", a_scores, metadata=level)
    b = write(tmp_path / "b.json", b_scores, metadata=level, model="mock/b")
    comparison = compare(a, b, by=["level"])
    comparison.sliced = compare_by(comparison, "level")
    document = comparison.to_json()
    assert [v["value"] for v in document["slices"]["values"]] == ["easy", "hard"]
    for value in document["slices"]["values"]:
        keep = [i for i in a_scores if level[i]["level"] == value["value"]]
        alone = compare(
            write(tmp_path / "a1.json", {i: a_scores[i] for i in keep}),
            write(tmp_path / "b1.json", {i: b_scores[i] for i in keep}),
        ).fns["grader"]
        got = value["eval_fns"]["grader"]
        assert value["paired_rows"] == len(keep)
        assert got["diff"] == pytest.approx(alone.diff)
        assert (got["ci_low"], got["ci_high"]) == pytest.approx(
            (alone.interval.low, alone.interval.high)  # type: ignore[union-attr]
        )
        assert got["flipped_to_fail"] == alone.flipped_to_fail
    json.dumps(document, allow_nan=False)  # strict JSON
