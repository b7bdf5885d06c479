from __future__ import annotations

import json
from pathlib import Path

import pytest

from osmosis_client.errors import ConfigError, InvalidInputError
from osmosis_local_runner.run.execute.dataset import Dataset, count_selected, select_rows

ROWS = [
    {"user_prompt": "What is 1+1?", "ground_truth": "2", "topic": "add"},
    {"system_prompt": "Be brief.", "user_prompt": "What is 2*3?", "ground_truth": 6},
    {"user_prompt": "Say hi", "ground_truth": None},
]


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def jsonl(rows: list[object]) -> str:
    return "".join(json.dumps(r) + "\n" for r in rows)


@pytest.mark.parametrize("fmt", ["jsonl", "json", "csv"])
def test_formats_load_the_same_rows(tmp_path: Path, fmt: str) -> None:
    if fmt == "jsonl":
        path = write(tmp_path, "d.jsonl", jsonl(ROWS))
    elif fmt == "json":
        path = write(tmp_path, "d.json", json.dumps(ROWS, indent=2))
    else:
        path = write(
            tmp_path,
            "d.csv",
            "user_prompt,system_prompt,ground_truth,topic\n"
            '"What is 1+1?",,2,add\n"What is 2*3?",Be brief.,6,\nSay hi,,,\n',
        )
    info = Dataset(path).validate()
    assert info.total_rows == 3
    rows = list(Dataset(path).rows())
    assert [r.user_prompt for r in rows] == ["What is 1+1?", "What is 2*3?", "Say hi"]
    assert [r.ground_truth for r in rows] == ["2", "6", None]
    assert rows[1].prompt() == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "What is 2*3?"},
    ]
    assert rows[0].index == 0 and rows[2].index == 2
    assert len({r.digest for r in rows}) == 3


def test_parquet_when_pyarrow_present(tmp_path: Path) -> None:
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    path = tmp_path / "d.parquet"
    pq.write_table(pa.Table.from_pylist([ROWS[0], ROWS[2]]), path)
    assert [r.user_prompt for r in Dataset(path).rows()] == ["What is 1+1?", "Say hi"]


BAD = [
    ("d.jsonl", '{"user_prompt": "ok"}\n{"user_prompt": \n', "d.jsonl:2: invalid JSON"),
    (
        "d.jsonl",
        '{"user_prompt": "ok"}\n\n{"prompt": "x"}\n',
        "d.jsonl:3: missing required column user_prompt",
    ),
    ("d.jsonl", '{"user_prompt": ""}\n', "d.jsonl:1: user_prompt must be a non-empty string"),
    ("d.jsonl", "[1, 2]\n", "d.jsonl:1: a row must be an object"),
    (
        "d.jsonl",
        '{"user_prompt": "x", "ground_truth": {"a": 1}}\n',
        "ground_truth must be a string",
    ),
    ("d.jsonl", '{"user_prompt": "x", "system_prompt": [1]}\n', "system_prompt must be a string"),
    (
        "d.json",
        '[\n  {"user_prompt": "a"},\n  {"user_prompt": 3}\n]',
        "d.json:3: user_prompt must be",
    ),
    ("d.json", '{"user_prompt": "a"}', "d.json:1: a .json dataset must be an array"),
    ("d.csv", "question,answer\nx,1\n", "d.csv:2: missing required column user_prompt"),
]


@pytest.mark.parametrize(("name", "text", "expected"), BAD)
def test_bad_rows_are_located(tmp_path: Path, name: str, text: str, expected: str) -> None:
    path = write(tmp_path, name, text)
    with pytest.raises(ConfigError) as info:
        Dataset(path).validate()
    problems = [str(p) for p in info.value.problems]
    assert any(p.startswith(str(tmp_path / "")) and expected in p for p in problems), problems


def test_problems_are_capped(tmp_path: Path) -> None:
    path = write(tmp_path, "d.jsonl", '{"x": 1}\n' * 100)
    with pytest.raises(ConfigError) as info:
        Dataset(path).validate()
    assert len(info.value.problems) == 20
    assert "first 20" in info.value.message


def test_empty_missing_and_unsupported(tmp_path: Path) -> None:
    with pytest.raises(InvalidInputError, match="no rows"):
        Dataset(write(tmp_path, "e.jsonl", "\n")).validate()
    with pytest.raises(InvalidInputError, match="does not exist"):
        Dataset(tmp_path / "nope.jsonl")
    with pytest.raises(InvalidInputError, match="unsupported"):
        Dataset(write(tmp_path, "d.txt", "x"))


def test_limit_takes_first_rows() -> None:
    assert list(select_rows(100, 7, sample=True, seed=0)) == list(range(7))  # type: ignore[call-overload]
    assert count_selected(5, select_rows(5, 50, sample=True, seed=0)) == 5


def test_sample_is_seeded_ten_percent_at_least_one() -> None:
    a = select_rows(1000, None, sample=True, seed=3)
    b = select_rows(1000, None, sample=True, seed=3)
    c = select_rows(1000, None, sample=True, seed=4)
    assert a == b and a != c
    assert count_selected(1000, a) == 100
    assert count_selected(5, select_rows(5, None, sample=True, seed=0)) == 1
    assert count_selected(9, select_rows(9, None, sample=False, seed=0)) == 9


@pytest.mark.parametrize(
    ("value", "depth"),
    [
        ({}, 1),
        ({"user_prompt": "q", "n": 3, "ok": True, "x": None}, 1),
        ({"a": {"b": [1, {"c": 2}]}}, 4),
        ([[[]]], 3),
        ("text", 0),
    ],
)
def test_nesting_counts_lists_and_objects(value: object, depth: int) -> None:
    from osmosis_local_runner.run.execute.dataset import nesting

    assert nesting(value) == depth


def test_a_row_nested_too_deep_is_refused_and_a_flat_one_kept() -> None:
    from osmosis_local_runner.run.execute.dataset import MAX_NESTING, TOO_DEEP, check_row

    deep: dict[str, object] = {"user_prompt": "q"}
    inner: dict[str, object] = deep
    for _ in range(MAX_NESTING):
        inner["x"] = {}
        inner = inner["x"]  # type: ignore[assignment]
    with pytest.raises(ValueError, match=TOO_DEEP):
        check_row(deep)
    assert check_row({"user_prompt": "q", "ground_truth": 4})[2] == "4"


def _digest_as_written_before(data: dict[str, object]) -> str:
    """The digest as every earlier version computed it (a journal written by one resumes
    under another only if the digests of unchanged rows are the same)."""
    import hashlib

    raw = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.blake2b(raw.encode(), digest_size=10).hexdigest()


@pytest.mark.parametrize(
    "row",
    [
        ROWS[0],
        ROWS[1],
        {"user_prompt": 'é ü \u2028 \x1f "q" \\', "id": 2**63 - 1, "ok": True, "n": None},
        {"user_prompt": "big", "id": 123456789012345678901234567890},  # beyond 64 bits
        {"user_prompt": "floats", "score": 1e-05, "x": 1e16, "y": 0.1},  # float text differs
        {"user_prompt": "nested", "meta": {"b": [1, {"c": 2.5}], "a": None}},
        {"user_prompt": "keys", "b": 1, "a": 2, "é": 3, "A": 4},
    ],
)
def test_row_digests_are_what_earlier_versions_computed(row: dict[str, object]) -> None:
    from osmosis_local_runner.run.execute.dataset import row_digest

    assert row_digest(row) == _digest_as_written_before(row)
