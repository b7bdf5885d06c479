"""eval rubric, eval-rubric and preview, offline against the mock judge."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.osmosis_cli.conftest import Invoke
from tests.stub_openai import StubOpenAI

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "rubrics"


@pytest.fixture
def rubrics(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "rubrics"
    shutil.copytree(EXAMPLE, folder)
    monkeypatch.chdir(folder)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return folder


def test_eval_rubric_json_and_result_file(invoke: Invoke, rubrics: Path) -> None:
    result = invoke(
        "eval",
        "rubric",
        "-d",
        "sample_data.jsonl",
        "-r",
        "Be helpful",
        "--model",
        "mock/judge",
        "-n",
        "2",
        "-o",
        "out.json",
        "--json",
    )
    assert result.exit_code == 0, result.stderr
    doc = result.resource()
    written = json.loads((rubrics / "out.json").read_text())
    assert {key: doc[key] for key in written} == written
    assert doc["output_path"] == "out.json"
    assert doc["model"] == "mock/judge" and doc["rubric"] == "Be helpful"
    assert [r["line"] for r in doc["records"]] == [1, 2, 3]
    assert all(len(r["runs"]) == 2 for r in doc["records"])
    assert set(doc["stats"]) == {"count", "average", "variance", "std", "min", "max"}
    assert doc["stats"]["count"] == 6


def test_rubric_from_file_and_default_output(invoke: Invoke, rubrics: Path, tmp_path: Path) -> None:
    (rubrics / "rubric.txt").write_text("Mention the policy.")
    result = invoke(
        "eval", "rubric", "-d", "sample_data.jsonl", "-r", "@rubric.txt", "--model", "mock/judge"
    )
    assert result.exit_code == 0, result.stderr
    written = list((rubrics / ".osmosis" / "rubrics").glob("rubric-*.json"))
    assert len(written) == 1  # beside eval results (./.osmosis/), never in a cache dir
    assert not (tmp_path / "cache").exists()
    assert json.loads(written[0].read_text())["rubric"] == "Mention the policy."
    assert "average" in result.stdout


def test_eval_rubric_config_skips_other_rubrics(invoke: Invoke, rubrics: Path) -> None:
    (rubrics / "res").mkdir()
    result = invoke(
        "eval-rubric",
        "--rubric",
        "support_followup",
        "--data",
        "sample_data.jsonl",
        "--output",
        "res",
    )
    assert result.exit_code == 0, result.stderr
    assert "1 for other rubrics skipped" in result.stderr
    (written,) = list((rubrics / "res").glob("rubric_eval_result_*.json"))
    doc = json.loads(written.read_text())
    assert [r["conversation_id"] for r in doc["records"]] == ["ticket-001", "ticket-002"]
    unknown = invoke("eval-rubric", "--rubric", "nope", "--data", "sample_data.jsonl")
    assert unknown.exit_code == 2 and "support_followup" in unknown.stderr


def test_both_rubric_commands_share_json_and_concurrency(invoke: Invoke, rubrics: Path) -> None:
    result = invoke(
        "eval-rubric",
        "--rubric",
        "support_followup",
        "--data",
        "sample_data.jsonl",
        "--concurrency",
        "1",
        "--json",
    )
    assert result.exit_code == 0, result.stderr
    doc = result.resource()  # stdout holds exactly the document
    assert [r["conversation_id"] for r in doc["records"]] == ["ticket-001", "ticket-002"]
    (written,) = list((rubrics / ".osmosis" / "rubrics").glob("support_followup-*.json"))
    assert json.loads(written.read_text()) == {k: v for k, v in doc.items() if k != "output_path"}


def test_missing_rubric_config_hint_names_the_commands_own_flag(
    invoke: Invoke, rubrics: Path
) -> None:
    preview = invoke("preview", "--path", "nowhere.yaml")
    assert preview.exit_code == 2 and "check --path" in preview.stderr
    config = invoke(
        "eval-rubric", "--rubric", "x", "--data", "sample_data.jsonl", "--config", "no.yaml"
    )
    assert config.exit_code == 2 and "pass --config PATH" in config.stderr


def test_provider_failure_part_way_still_writes_results(
    invoke: Invoke, rubrics: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("JUDGE_KEY", "judge-secret-key")
    with StubOpenAI() as stub:
        stub.state.replies.append('{"score": 0.9, "explanation": "good"}')
        stub.state.fail_after = (1, 401)  # the first answer, then the key is revoked
        result = invoke(
            "eval",
            "rubric",
            "-d",
            "sample_data.jsonl",
            "-r",
            "x",
            "--model",
            "judge-model",
            "--base-url",
            stub.url,
            "--api-key-env",
            "JUDGE_KEY",
            "--concurrency",
            "1",
            "-o",
            "partial.json",
        )
    assert result.exit_code == 1
    assert "rejected the request (401" in result.stderr
    assert "JUDGE_KEY" in result.stderr and "judge-secret-key" not in result.stderr + result.stdout
    doc = json.loads((rubrics / "partial.json").read_text())
    assert doc["status"] == "failed"
    assert doc["records"][0]["runs"] == [{"score": 0.9, "explanation": "good", "error": None}]
    assert doc["records"][1]["runs"][0]["error"]
    assert doc["records"][2]["runs"] == []
    assert doc["stats"]["count"] == 1


def test_missing_key_variable_is_exit_2(invoke: Invoke, rubrics: Path) -> None:
    result = invoke(
        "eval",
        "rubric",
        "-d",
        "sample_data.jsonl",
        "-r",
        "x",
        "--model",
        "m",
        "--base-url",
        "http://127.0.0.1:9/v1",
        "--api-key-env",
        "NOT_SET_ANYWHERE",
    )
    assert result.exit_code == 2
    assert "NOT_SET_ANYWHERE" in result.stderr


def test_bad_dataset_records_are_located(invoke: Invoke, rubrics: Path) -> None:
    (rubrics / "bad.jsonl").write_text('{"solution_str": "ok"}\n{"solution_str": ""}\nnot json\n')
    result = invoke("eval", "rubric", "-d", "bad.jsonl", "-r", "x", "--model", "mock/judge")
    assert result.exit_code == 2
    assert "bad.jsonl:2: solution_str must be a non-empty string" in result.stderr
    assert "bad.jsonl:3:" in result.stderr


def test_preview_config_and_dataset(invoke: Invoke, rubrics: Path) -> None:
    config = invoke("preview", "--path", "rubric_configs.yaml")
    assert config.exit_code == 0
    assert "Loaded 2 rubric(s)" in config.stderr
    assert json.loads(config.stdout)["rubrics"][0]["id"] == "support_followup"
    data = invoke("preview", "--path", "sample_data.jsonl")
    assert "Loaded 3 record(s)" in data.stderr
    assert len(data.stdout.splitlines()) == 3


def test_preview_shows_rows_without_a_solution_and_warns(invoke: Invoke, rubrics: Path) -> None:
    """Issue 34: the git-sync example's dataset has no solution_str; 0.2 previews it."""
    fixture = Path(__file__).resolve().parents[1] / "fixtures" / "git_sync_example"
    (rubrics / "test_data.jsonl").write_bytes((fixture / "test_data.jsonl").read_bytes())
    shown = invoke("preview", "--path", "test_data.jsonl")
    assert shown.exit_code == 0, shown.stderr
    assert len(shown.stdout.splitlines()) == 5
    assert "warning: 5 record(s) have an empty solution_str (line 1, 2, 3, 4, 5)" in shown.stderr
    scored = invoke("eval-rubric", "--rubric", "support_followup", "--data", "test_data.jsonl")
    assert scored.exit_code == 2 and "solution_str must be a non-empty string" in scored.stderr


def test_preview_rejects_bad_files(invoke: Invoke, rubrics: Path) -> None:
    (rubrics / "extra.yaml").write_text(
        "rubrics:\n  - id: a\n    rubric: r\n    model_info: {provider: p, model: m}\n    extra_info: {x: 1}\n"
    )
    result = invoke("preview", "--path", "extra.yaml")
    assert result.exit_code == 2
    assert "rubrics.0.extra_info: unknown key" in result.stderr
    (rubrics / "broken.yaml").write_text("rubrics: [\n")
    assert invoke("preview", "--path", "broken.yaml").exit_code == 2
    assert invoke("preview", "--path", "notes.txt").exit_code == 2


def test_the_0_2_short_flags_work(invoke: Invoke, rubrics: Path) -> None:
    (rubrics / "res").mkdir()
    short = invoke(
        "eval-rubric",
        "-r",
        "support_followup",
        "-d",
        "sample_data.jsonl",
        "-n",
        "1",
        "-c",
        "rubric_configs.yaml",
        "-o",
        "res",
    )
    assert short.exit_code == 0, short.stderr
    assert len(list((rubrics / "res").glob("rubric_eval_result_*.json"))) == 1
    preview = invoke("preview", "-p", "sample_data.jsonl")
    assert preview.exit_code == 0, preview.stderr


def test_baseline_reports_differences_from_any_prior_result(invoke: Invoke, rubrics: Path) -> None:
    args = ("eval-rubric", "-r", "support_followup", "-d", "sample_data.jsonl")
    first = invoke(*args, "-o", "first.json")
    assert first.exit_code == 0, first.stderr
    stats = json.loads((rubrics / "first.json").read_text())["stats"]
    (rubrics / "old.json").write_text(  # as 0.2 wrote it: overall_statistics, stdev
        json.dumps({"overall_statistics": {"average": 0.25, "stdev": 0.5, "min": 0, "max": 1}})
    )
    (rubrics / "flat.json").write_text(json.dumps({"average": 1.0, "variance": 0.0}))
    for baseline, expected in (
        ("first.json", {key: 0.0 for key in ("average", "variance", "std", "min", "max")}),
        (
            "old.json",
            {
                "average": stats["average"] - 0.25,
                "std": stats["std"] - 0.5,
                "min": stats["min"],
                "max": stats["max"] - 1,
            },
        ),
        ("flat.json", {"average": stats["average"] - 1.0, "variance": stats["variance"]}),
    ):
        result = invoke(*args, "-b", baseline, "-o", "again.json", "--json")
        assert result.exit_code == 0, result.stderr
        compared = result.resource()["baseline"]
        assert compared["path"] == baseline
        assert compared["delta"] == pytest.approx(expected)
        assert json.loads((rubrics / "again.json").read_text())["baseline"] == compared
    shown = invoke(*args, "--baseline", "old.json", "-o", "shown.json")
    assert "vs baseline old.json:" in shown.stdout
    assert f"  average  0.250 -> {stats['average']:.3f}  ({stats['average'] - 0.25:+.3f})" in (
        shown.stdout
    )


def test_a_bad_baseline_stops_before_any_judge_call(invoke: Invoke, rubrics: Path) -> None:
    (rubrics / "notjson.json").write_text("{")
    (rubrics / "empty.json").write_text(json.dumps({"records": []}))
    for baseline, says in (
        ("missing.json", "cannot read the baseline missing.json"),
        ("notjson.json", "the baseline notjson.json is not JSON"),
        ("empty.json", "the baseline empty.json has no rubric statistics"),
    ):
        result = invoke(
            "eval-rubric",
            "-r",
            "support_followup",
            "-d",
            "sample_data.jsonl",
            "-b",
            baseline,
            "-o",
            "out.json",
        )
        assert result.exit_code == 2 and says in result.stderr
        assert "Traceback" not in result.stderr
        assert not (rubrics / "out.json").exists()
