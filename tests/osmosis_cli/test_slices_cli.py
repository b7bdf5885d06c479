"""``--by COLUMN`` / ``[local] slice_by`` at the terminal and in the documents: eval run
and eval compare, on offline runs of the quickstart (its rows have a difficulty)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.osmosis_cli.conftest import Invoke

RUN = ["eval", "run", "configs/eval/quickstart.toml"]


@pytest.fixture
def project(quickstart_project: Path) -> Path:
    return quickstart_project


def table(stdout: str, heading: str) -> list[list[str]]:
    lines = stdout.split(heading + "\n", 1)[1].splitlines()
    rows = []
    for line in lines[1:]:
        if "\t" not in line:
            break
        rows.append(line.split("\t"))
    return rows


def test_a_run_by_a_column_shows_and_keeps_every_statistic_per_value(
    invoke: Invoke, project: Path
) -> None:
    result = invoke(*RUN, "-o", "r.json", "--by", "difficulty")
    assert result.exit_code == 0, result.stderr
    doc = json.loads((project / "r.json").read_text())
    sliced = doc["summary"]["slices"]
    assert doc["config"]["slice_by"] == "difficulty" and sliced["by"] == "difficulty"
    assert [v["value"] for v in sliced["values"]] == ["easy", "medium"]
    assert sum(v["rows"] for v in sliced["values"]) == doc["summary"]["total_rows"]
    rows = table(result.stdout, "By difficulty:")
    assert [r[0] for r in rows] == ["easy", "medium"]
    easy = sliced["values"][0]["eval_fns"]["grader"]
    assert rows[0][1:] == [
        "14",
        "42",
        f"{easy['mean']:.3f}",
        f"{easy['pass_at_1']:.3f}",
        f"{easy['pass_at_3']:.3f}",
    ]


def test_the_configs_slice_by_is_the_default_and_a_wrong_column_is_refused_first(
    invoke: Invoke, project: Path
) -> None:
    toml = project / "configs" / "eval" / "quickstart.toml"
    toml.write_text(toml.read_text().replace("[local]\n", '[local]\nslice_by = "difficulty"\n'))
    result = invoke(*RUN, "-o", "r.json", "--limit", "4")
    assert result.exit_code == 0, result.stderr
    assert "By difficulty:" in result.stdout
    wrong = invoke(*RUN, "-o", "w.json", "--by", "level")
    assert wrong.exit_code == 2
    assert wrong.stderr == (
        "error: no row has a column 'level' to slice by — slice by one of its columns: difficulty\n"
    )
    assert not (project / "w.json").exists()  # refused before anything ran


def test_compare_by_a_column_gives_each_values_paired_difference(
    invoke: Invoke, project: Path
) -> None:
    assert invoke(*RUN, "-o", "a.json", "--model", "mock/calculator").exit_code == 0
    assert invoke(*RUN, "-o", "b.json").exit_code == 0  # mock/flaky-calculator
    human = invoke("eval", "compare", "a.json", "b.json", "--by", "difficulty")
    assert human.exit_code == 0, human.stderr
    rows = table(human.stdout, "By difficulty (B − A per value, paired):")
    assert [(r[0], r[1]) for r in rows] == [("easy", "14"), ("medium", "6")]
    assert all(r[4].startswith("-") and r[5].startswith("[") for r in rows)
    machine = invoke("eval", "compare", "a.json", "b.json", "--by", "difficulty", "--json")
    data = json.loads(machine.stdout)["data"]
    values = data["slices"]["values"]
    assert data["slices"]["by"] == "difficulty" and len(values) == 2
    grader = values[0]["eval_fns"]["grader"]
    assert {"diff", "ci_low", "ci_high", "ci_method", "flipped_to_fail"} <= set(grader)
    assert f"{grader['diff']:+.3f}" == rows[0][4]
    # expected beside got in the largest drops
    assert data["worst_rows"][0]["expected"] is not None
    wrong = invoke("eval", "compare", "a.json", "b.json", "--by", "level")
    assert wrong.exit_code == 2 and "no row has a column 'level'" in wrong.stderr
