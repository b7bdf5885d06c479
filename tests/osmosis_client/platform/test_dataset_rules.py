"""Dataset checks before an upload (published-cli-0.3.8.md §3.1), located by line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from osmosis_client.platform.dataset.dataset_rules import check_dataset


def jsonl(path: Path, rows: list[object]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def qa(i: int) -> dict[str, object]:
    return {"user_prompt": f"q{i}", "ground_truth": str(i)}


def test_a_good_jsonl_file(tmp_path: Path) -> None:
    path = tmp_path / "good.jsonl"
    path.write_text("\n".join(json.dumps(qa(i)) for i in range(4)) + "\n\n")  # blank: skipped
    report = check_dataset(path)
    assert report.valid, report.errors
    assert (report.rows, report.extension, report.dataset_name) == (4, "jsonl", "good")
    assert report.to_json()["file_size"] == path.stat().st_size


def test_file_level_rules(tmp_path: Path) -> None:
    assert check_dataset(tmp_path / "none.jsonl").errors[0].startswith("file not found")
    (tmp_path / "x.txt").write_text("a")
    assert "unsupported file type '.txt'" in check_dataset(tmp_path / "x.txt").errors[0]
    (tmp_path / "empty.csv").write_text("")
    assert check_dataset(tmp_path / "empty.csv").errors == ["the file is empty"]
    few = jsonl(tmp_path / "few.jsonl", [qa(0), qa(1)])
    assert check_dataset(few).errors == ["2 row(s): the platform needs at least 4"]


def test_jsonl_rows_keep_the_first_rows_keys_and_problems_name_lines(tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    lines = [
        json.dumps(qa(0)),
        json.dumps({"user_prompt": "q"}),
        "[1, 2]",
        "{not json",
        json.dumps({**qa(4), "extra": 1}),
        json.dumps(qa(5)),
    ]
    path.write_text("\n".join(lines) + "\n")
    errors = check_dataset(path).errors
    assert errors[0] == "line 2: missing ground_truth (every row needs the keys of line 1)"
    assert errors[1] == "line 3: a row must be a JSON object, not array"
    assert errors[2].startswith("line 4: not JSON (")
    assert errors[3] == "line 5: extra extra (every row needs the keys of line 1)"
    assert len(errors) == 4


def test_the_prompt_and_answer_columns_unless_metadata(tmp_path: Path) -> None:
    rows = [{"question": "q", "answer": "a"}] * 4
    (error,) = check_dataset(jsonl(tmp_path / "a.jsonl", rows)).errors
    assert error.startswith("line 1: missing user_prompt, ground_truth")
    labelled = [{"user_prompt": "q", "label": "a"}] * 4
    assert check_dataset(jsonl(tmp_path / "b.jsonl", labelled)).valid
    meta = [{"metadata": {"x": i}} for i in range(4)]
    report = check_dataset(jsonl(tmp_path / "c.jsonl", meta))
    assert report.valid and report.metadata_mode


@pytest.mark.parametrize(
    ("cell", "message"),
    [
        (None, "metadata is missing"),
        ("  ", "metadata is missing"),
        ("nope", "metadata is not JSON"),
        ([1], "metadata must be an object, not array"),
        ({}, "metadata is an empty object"),
        ({"a": {"b": {}}}, "metadata.a.b is an empty object"),
        ({"a": [{"b": 1}, {}]}, "metadata.a[] is an empty object"),
        ({"n": 2**63}, f"metadata.n = {2**63} does not fit in 64 bits"),
        ({"x": "one"}, "metadata.x is string here but number at line 1"),
    ],
)
def test_metadata_cells(tmp_path: Path, cell: object, message: str) -> None:
    rows = [{"metadata": {"x": 1}}, {"metadata": cell}] + [{"metadata": {"x": 2.5}}] * 3
    errors = check_dataset(jsonl(tmp_path / "m.jsonl", rows)).errors
    assert errors == [f"line 2: {message}"]


def test_csv_header_cells_and_metadata_strings(tmp_path: Path) -> None:
    path = tmp_path / "d.csv"
    path.write_text('user_prompt,ground_truth\nq0,0\nq1\n"q,2",2\nq3,3\nq4,4\n', encoding="utf-8")
    assert check_dataset(path).errors == ["line 3: 1 cells, the header has 2"]
    meta = tmp_path / "m.csv"
    meta.write_text('metadata\n"{""a"": 1}"\n"{""a"": 2}"\n"{""a"": 3}"\n"[1]"\n')
    assert check_dataset(meta).errors == ["line 5: metadata must be an object, not array"]
    (tmp_path / "latin.csv").write_bytes(b"user_prompt,ground_truth\n\xe9,1\n")
    assert "not UTF-8" in check_dataset(tmp_path / "latin.csv").errors[0]


def test_problems_past_the_cap_are_counted(tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    path.write_text(json.dumps(qa(0)) + "\n" + "x\n" * 80)
    report = check_dataset(path, max_errors=5)
    assert len(report.errors) == 5 and report.more_errors == 76  # 80 lines + too few rows


def test_parquet(tmp_path: Path) -> None:
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    good = tmp_path / "good.parquet"
    pq.write_table(pa.table({"user_prompt": ["q"] * 4, "ground_truth": ["a"] * 4}), good)
    assert check_dataset(good).valid
    bad = tmp_path / "bad.parquet"
    pq.write_table(pa.table({"metadata": [1, 2, 3, 4]}), bad)
    assert check_dataset(bad).errors == [
        "column metadata is int64; it must be a struct or a string"
    ]
    mixed = tmp_path / "mixed.parquet"
    cells = ['{"a": 1}', '{"a": 2}', '{"a": "x"}', '{"a": 4}']
    pq.write_table(pa.table({"metadata": cells}), mixed)
    assert check_dataset(mixed).errors == ["row 3: metadata.a is string here but number at row 1"]
