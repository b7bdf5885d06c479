"""Row lines decoded by orjson with the strictness of the standard library's strict
loader (``load_json``) and the same answers; and the rows a comparison shows read back
from where their lines start (no second scan of a large document)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from osmosis_client.errors import InvalidInputError
from osmosis_local_runner.results.compare.pairing import Side, with_text
from osmosis_local_runner.results.documents import rowlines
from osmosis_local_runner.results.documents.documents import ResultsFile
from tests.results_docs import write

HOSTILE_LINES = {
    "NaN": b'{"row_index": 1, "runs": [{"scores": {"g": NaN}}]}',
    "Infinity": b'{"row_index": 1, "runs": [{"duration_ms": Infinity}]}',
    "1e400": b'{"row_index": 1, "runs": [{"tokens": 1e400}]}',
    "-1E+309": b'{"row_index": 1, "runs": [{"tokens": -1E+309}]}',
    "nested": b'{"row_index": 1, "x": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
    "not UTF-8": b'{"row_index": 1, "prompt": "\xff"}',
    "trailing text": b'{"row_index": 1} {"row_index": 2}',
}


@pytest.mark.parametrize("case", sorted(HOSTILE_LINES))
def test_a_line_is_refused_where_json_proper_refuses_it(case: str) -> None:
    with pytest.raises(ValueError):
        rowlines.decode_line(HOSTILE_LINES[case])
    with pytest.raises(ValueError):  # the strict loader whole documents are read with
        rowlines.load_json(HOSTILE_LINES[case])


def test_a_line_reads_as_the_standard_library_reads_it() -> None:
    line = b'{"row_index": 7, "runs": [{"scores": {"g": 0.5, "h": 1}, "answer": "\\u00e9"}]}'
    assert rowlines.decode_line(line) == json.loads(line) == rowlines.load_json(line)


def _per_line(path: Path, rows: int, bad_row: int | None = None) -> Path:
    """A document of ours (a row per line) with ``bad_row``'s score out of range."""
    write(path, {i: [float(i % 2)] for i in range(rows)})
    lines = path.read_bytes().split(b"\n")
    if bad_row is not None:
        at = next(
            i
            for i, line in enumerate(lines)
            if line.strip().startswith(b'{"row_index": %d,' % bad_row)
        )
        lines[at] = (
            lines[at]
            .replace(b'"grader":1.0', b'"grader":1e400')
            .replace(b'"grader": 1.0', b'"grader": 1e400')
        )
        assert b"1e400" in lines[at]
    path.write_bytes(b"\n".join(lines))
    return path


def test_a_bad_row_deep_in_a_document_is_one_clear_error(tmp_path: Path) -> None:
    path = _per_line(tmp_path / "a.json", 20, bad_row=11)
    with pytest.raises(InvalidInputError) as caught:
        list(ResultsFile(path).checked_rows(transcripts=False))
    assert str(path) in str(caught.value) and "row" in str(caught.value)


def test_shown_rows_are_read_back_from_their_offsets(tmp_path: Path) -> None:
    doc = ResultsFile(write(tmp_path / "a.json", {i: [1.0] for i in range(50)}))
    side = Side(doc, ["grader"])
    assert side.offsets is not None and len(side.offsets) == 50
    picked = [side.view(p) for p in (3, 41, 17)]
    assert all(v.offset is not None for v in picked)
    back = {row.index: row for row in doc.rows_from(v.offset for v in picked if v.offset)}
    by_index = {row.index: row for row in doc.rows_at({3, 41, 17})}
    assert sorted(back) == [3, 17, 41]
    for index, row in back.items():
        assert row.prompt() == by_index[index].prompt()
        assert [r.answer for r in row.runs] == [r.answer for r in by_index[index].runs]
    with_text(doc, picked)
    assert picked[0].prompt == "question 3"


def test_a_reformatted_document_has_no_offsets_and_still_shows_text(tmp_path: Path) -> None:
    path = write(tmp_path / "a.json", {i: [1.0] for i in range(5)})
    path.write_text(json.dumps(json.loads(path.read_text()), indent=4))  # not a row per line
    doc = ResultsFile(path)
    side = Side(doc, ["grader"])
    assert side.offsets is None
    view = side.view(2)
    with_text(doc, [view])
    assert view.offset is None and view.prompt == "question 2"
