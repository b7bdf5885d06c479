"""eval compare's model: pairing by content, per-fn statistics, flips, worst rows."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from osmosis_client.errors import InvalidInputError
from osmosis_local_runner.results.compare.compare import compare
from osmosis_local_runner.results.documents.documents import ResultsFile
from tests.results_docs import attempt, write


def test_rows_pair_by_content_not_position(tmp_path: Path) -> None:
    # B holds the same rows in another order and at other indices (another sample)
    a = write(tmp_path / "a.json", {0: [1.0], 1: [0.0], 2: [1.0]})
    b = write(
        tmp_path / "b.json",
        {5: [1.0], 7: [0.0], 9: [1.0]},
        digests={5: "d2", 7: "d0", 9: "d1"},
    )
    result = compare(a, b)
    pairs = {(ra.index, rb.index) for ra, rb in result.pairs}
    assert pairs == {(0, 7), (1, 9), (2, 5)}
    c = result.fns["grader"]
    assert (c.mean_a, c.mean_b) == pytest.approx((2 / 3, 2 / 3))
    assert c.diff == pytest.approx((0.0 - 1.0 + 1.0 - 0.0 + 1.0 - 1.0) / 3)
    assert c.flipped_to_fail == 1 and c.flipped_to_pass == 1


def test_duplicates_pair_in_row_order_and_unpaired_are_counted(tmp_path: Path) -> None:
    a = write(
        tmp_path / "a.json",
        {0: [1.0], 1: [1.0], 2: [0.0], 3: [1.0]},
        digests={0: "x", 1: "x", 2: "x", 3: "only-a"},
    )
    b = write(
        tmp_path / "b.json",
        {0: [0.0], 1: [1.0], 4: [1.0]},
        digests={0: "x", 1: "x", 4: "only-b"},
    )
    result = compare(a, b)
    assert [(ra.index, rb.index) for ra, rb in result.pairs] == [(0, 0), (1, 1)]
    assert (result.unpaired_a, result.unpaired_b) == (2, 1)
    assert any("2 rows only in A and 1 only in B" in note for note in result.notes)
    doc = result.to_json()
    assert doc["paired_rows"] == 2 and doc["unpaired"] == {"a": 2, "b": 1}


def test_row_scores_are_attempt_means_and_flips_use_majorities(tmp_path: Path) -> None:
    a = write(tmp_path / "a.json", {0: [1, 1, 0], 1: [1, 0, 0], 2: [0, 0, 0], 3: [1, 1, 1]})
    b = write(tmp_path / "b.json", {0: [0, 0, 1], 1: [1, 1, 0], 2: [0, 0, 0], 3: [1, 1, 1]})
    c = compare(a, b).fns["grader"]
    assert c.mean_a == pytest.approx((2 / 3 + 1 / 3 + 0 + 1) / 4)
    assert c.diff == pytest.approx((-1 / 3 + 1 / 3 + 0 + 0) / 4)
    # row 0: 2/3 → 1/3 passes (pass → fail); row 1: 1/3 → 2/3 (fail → pass)
    assert (c.flipped_to_fail, c.flipped_to_pass) == (1, 1)
    assert c.mcnemar_p == 1.0
    flipped = compare(a, b).to_json()["flipped_rows"]
    assert [(f["row_index"], f["direction"]) for f in flipped] == [(0, "to_fail"), (1, "to_pass")]
    assert flipped[0]["score_a"] == pytest.approx(2 / 3) and flipped[0]["fn"] == "grader"
    assert c.pass_at_k_a[1] == pytest.approx(c.mean_a)
    assert set(c.pass_at_k_a) == {1, 3}
    assert c.pass_at_k_a[3] == pytest.approx(3 / 4)


def test_worst_rows_are_the_largest_drops_with_answers(tmp_path: Path) -> None:
    scores_a = {i: [1.0] for i in range(15)}
    scores_b = {i: [1.0 if i % 2 else 0.0] for i in range(15)}
    a = write(tmp_path / "a.json", scores_a)
    b = write(tmp_path / "b.json", scores_b)
    result = compare(a, b)
    worst = result.to_json()["worst_rows"]
    assert len(worst) == 8  # only rows that dropped, at most 10
    assert [w["row_index"] for w in worst] == [0, 2, 4, 6, 8, 10, 12, 14]
    first = worst[0]
    assert first["fn"] == "grader" and (first["score_a"], first["score_b"]) == (1.0, 0.0)
    assert first["prompt"] == "question 0" and first["answer_b"] == "answer 0.0"


def test_worst_rows_stop_at_ten(tmp_path: Path) -> None:
    a = write(tmp_path / "a.json", {i: [1.0] for i in range(30)})
    b = write(tmp_path / "b.json", {i: [i / 30] for i in range(30)})
    worst = compare(a, b).worst
    assert [w.a.index for w in worst] == list(range(10))  # biggest drop first


def test_regression_needs_the_whole_interval_below_minus_delta(tmp_path: Path) -> None:
    a = write(tmp_path / "a.json", {i: [1.0] for i in range(40)})
    worse = write(tmp_path / "b.json", {i: [0.0 if i < 20 else 1.0] for i in range(40)})
    c = compare(a, worse).fns["grader"]
    assert c.interval is not None and c.interval.high < -0.3
    assert compare(a, worse).regressions(0.1) == ["grader"]
    assert compare(a, worse).regressions(0.9) == []
    same = write(tmp_path / "c.json", {i: [1.0] for i in range(40)})
    assert compare(a, same).regressions(0.0) == []


def test_errored_attempts_score_zero_and_skipped_ones_are_left_out(tmp_path: Path) -> None:
    a = write(tmp_path / "a.json", {0: [1.0], 1: [1.0]})
    b = write(
        tmp_path / "b.json",
        {},
        extra={
            0: [attempt(0, 0, None, error="workflow: boom")],
            1: [attempt(1, 0, 1.0), attempt(1, 1, None, skipped=True)],
        },
    )
    c = compare(a, b).fns["grader"]
    assert c.mean_b == pytest.approx(0.5) and c.flipped_to_fail == 1


def test_no_shared_eval_fn_or_no_common_row_is_a_clear_error(tmp_path: Path) -> None:
    a = write(tmp_path / "a.json", {0: [1.0]})
    b = write(tmp_path / "b.json", {0: [1.0]}, fn="rewards:other")
    with pytest.raises(InvalidInputError, match="share no eval fn"):
        compare(a, b)
    c = write(tmp_path / "c.json", {0: [1.0]}, digests={0: "elsewhere"})
    with pytest.raises(InvalidInputError, match="no row of"):
        compare(a, c)
    with pytest.raises(InvalidInputError, match="not in both"):
        compare(a, a, eval_fns=["nope"])


def test_a_reformatted_document_is_read_whole(tmp_path: Path) -> None:
    a = write(tmp_path / "a.json", {0: [1.0], 1: [0.0]})
    pretty = tmp_path / "pretty.json"
    pretty.write_text(json.dumps(json.loads(a.read_text()), indent=4, sort_keys=True))
    rows = list(ResultsFile(pretty).rows())
    assert [r.index for r in rows] == [0, 1]
    assert compare(a, pretty).fns["grader"].diff == 0.0


def _doc_with_run(run: dict[str, object]) -> str:
    full = {"run_index": 0, "success": True, "duration_ms": 1, "tokens": 1, "error": None, **run}
    return json.dumps({"config": {}, "summary": {}, "rows": [{"row_index": 0, "runs": [full]}]})


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("", "not valid JSON"),
        ('{"config": {}, "rows": []}', "no config and summary"),
        ("[1, 2]", "not an osmosis results document"),
        ('{"config": {}, "summary": {}, "rows": [{"runs": []}]}', "lacks row_index"),
        ('{"config": {}, "summary": {}, "rows": [{"row_index": 0, "runs": [{}]}]}', "malformed"),
        (_doc_with_run({"scores": {"g": "1"}}), "score 'g' is not a finite number"),
        (_doc_with_run({"scores": {"g": float("nan")}}), "NaN is not a JSON number"),
        (_doc_with_run({"scores": {"g": 1}, "answer": 42}), "answer must be text"),
        (_doc_with_run({"scores": {"g": 1}, "messages": "hi"}), "messages must be a list"),
        (_doc_with_run({"scores": {"g": 1}, "tokens": "many"}), "tokens must be a number"),
    ],
)
def test_broken_documents_are_named_not_tracebacks(
    tmp_path: Path, content: str, message: str
) -> None:
    path = tmp_path / "broken.json"
    path.write_text(content)
    with pytest.raises(InvalidInputError, match=message):
        list(ResultsFile(path).rows())


# ------------------------------------------------------------------ at scale (issue 25)


def test_rows_at_reads_only_the_rows_asked_for(tmp_path: Path) -> None:
    doc = ResultsFile(write(tmp_path / "a.json", {i: [1.0] for i in range(50)}))
    assert [row.index for row in doc.rows_at({3, 41})] == [3, 41]
    assert [row.index for row in doc.rows_at(set())] == []


def test_two_large_documents_are_scanned_at_once_with_the_same_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from osmosis_local_runner.results.compare import pairing

    a = write(tmp_path / "a.json", {i: [float(i % 3 == 0), 1.0] for i in range(40)})
    b = write(tmp_path / "b.json", {i: [float(i % 2 == 0), 0.0] for i in range(40)})
    alone = compare(a, b).to_json()
    monkeypatch.setattr(pairing, "PARALLEL_BYTES", 0)
    monkeypatch.setattr(pairing.os, "cpu_count", lambda: 2)
    together = compare(a, b).to_json()
    assert together == alone
    document = json.loads(b.read_text())
    document["rows"][5]["runs"][0]["scores"]["grader"] = "high"
    b.write_text(json.dumps(document))
    with pytest.raises(InvalidInputError, match="row 5: a malformed run"):
        compare(a, b)  # B's problem, found in the second process, said as ever
