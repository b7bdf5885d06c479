"""`osmosis dataset …`: validate offline, with the published envelopes."""

from __future__ import annotations

import json
from pathlib import Path

from tests.osmosis_cli.conftest import Invoke


def rows(path: Path, count: int, **extra: object) -> Path:
    path.write_text(
        "".join(
            json.dumps({"user_prompt": f"q{i}", "ground_truth": str(i), **extra}) + "\n"
            for i in range(count)
        )
    )
    return path


def test_validate_a_good_file_in_every_mode(invoke: Invoke, tmp_path: Path) -> None:
    path = rows(tmp_path / "good.jsonl", 5)
    human = invoke("dataset", "validate", str(path))
    assert human.exit_code == 0, human.stderr
    assert "Status: Valid jsonl file" in human.stdout and "Rows: 5" in human.stdout
    data = invoke("--json", "dataset", "validate", str(path)).data()
    assert data["valid"] is True and data["errors"] == [] and data["file_name"] == "good.jsonl"
    assert {"file", "extension", "file_size", "warnings"} <= set(data)
    plain = invoke("dataset", "validate", str(path), "--plain").stdout.splitlines()
    assert plain[0] == f"File: {path}" and plain[-1] == "Status: Valid jsonl file"


def test_validate_names_every_problem_by_line_and_exits_2(invoke: Invoke, tmp_path: Path) -> None:
    path = rows(tmp_path / "bad.jsonl", 4)
    with path.open("a") as handle:
        handle.write('{"user_prompt": "x"}\nnot json\n')
    result = invoke("dataset", "validate", str(path))
    assert result.exit_code == 2
    lines = result.stderr.splitlines()
    assert lines[0].startswith("error: validation failed: bad.jsonl has 2 problems")
    assert f"{path}:5: missing ground_truth" in lines[1]
    assert f"{path}:6: not JSON" in lines[2]
    error = invoke("--json", "dataset", "validate", str(path)).error()
    assert error["code"] == "VALIDATION" and error["details"]["valid"] is False
    assert error["details"]["errors"][0].startswith("line 5: missing ground_truth")


def test_validate_needs_no_login_and_refuses_odd_files(invoke: Invoke, tmp_path: Path) -> None:
    missing = invoke("dataset", "validate", str(tmp_path / "nope.jsonl"))
    assert missing.exit_code == 2 and "file not found" in missing.stderr
    (tmp_path / "notes.txt").write_text("hi")
    odd = invoke("dataset", "validate", str(tmp_path / "notes.txt"))
    assert odd.exit_code == 2 and "unsupported file type '.txt'" in odd.stderr
