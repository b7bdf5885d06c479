"""``--resume`` takes the run's settings from its journal: only a flag that really
changes the run is refused (issue 24)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from osmosis_local_runner.run.session.journal import journal_path
from tests.osmosis_cli.conftest import Invoke
from tests.osmosis_cli.test_eval_local import SEED  # the quickstart's seed form, mock/calculator

RUN = ["eval", "run", "configs/eval/quickstart.toml"]


@pytest.fixture
def project(quickstart_project: Path) -> Path:
    return quickstart_project


def interrupted(results: Path, keep: int) -> None:
    """The run as a kill leaves it: no document, the journal's first ``keep`` attempts."""
    lines = journal_path(results).read_text().splitlines(keepends=True)
    journal_path(results).write_text("".join(lines[: 1 + keep]))
    results.unlink()


def test_resume_with_only_the_path_runs_with_the_original_flags(
    invoke: Invoke, project: Path
) -> None:
    started = [*RUN, "--model", "mock/calculator", "--limit", "6", "--n", "2", "-o", "int.json"]
    assert invoke(*started).exit_code == 0
    interrupted(project / "int.json", keep=5)
    result = invoke(*RUN, "--resume", "-o", "int.json")
    assert result.exit_code == 0, result.stderr
    assert "Resuming with the run's own settings: --model mock/calculator, --limit 6, --n 2" in (
        result.stderr
    )
    doc = json.loads((project / "int.json").read_text())
    assert doc["config"]["model"] == "mock/calculator" and doc["config"]["n_runs"] == 2
    assert doc["summary"]["total_rows"] == 6 and doc["summary"]["total_runs"] == 12


def test_a_flag_that_changes_the_run_is_refused_one_that_does_not_is_taken(
    invoke: Invoke, project: Path
) -> None:
    assert invoke(*RUN, "--limit", "4", "-o", "r.json").exit_code == 0
    interrupted(project / "r.json", keep=1)
    changed = invoke(*RUN, "--resume", "-o", "r.json", "--n", "2")
    assert changed.exit_code == 2 and "n 3 → 2 would drop finished attempts" in changed.stderr
    assert "give n of at least 3" in changed.stderr
    other = invoke(*RUN, "--resume", "-o", "r.json", "--temperature", "0.3")
    assert other.exit_code == 2 and "cannot resume: the run changed (sampling" in other.stderr
    taken = invoke(*RUN, "--resume", "-o", "r.json", "--batch-size", "7")
    assert taken.exit_code == 0, taken.stderr
    said = next(x for x in taken.stderr.splitlines() if x.startswith("Resuming with"))
    assert "--limit 4" in said and "--batch-size" not in said


def test_the_seed_form_resumes_from_the_path_alone(invoke: Invoke, project: Path) -> None:
    assert invoke(*SEED, "--limit", "3", "-o", "s.json").exit_code == 0
    interrupted(project / "s.json", keep=1)
    result = invoke("eval", "--resume", "-o", "s.json")
    assert result.exit_code == 0, result.stderr
    assert json.loads((project / "s.json").read_text())["summary"]["total_runs"] == 3


def test_header_values_are_never_kept_and_must_be_given_again(
    invoke: Invoke, project: Path
) -> None:
    secret = "sk-test-never-written-0123456789"
    flags = ["--limit", "2", "-o", "h.json", "--header", f"X-Gateway-Key: {secret}"]
    assert invoke(*RUN, *flags).exit_code == 0
    interrupted(project / "h.json", keep=1)
    header = json.loads(journal_path(project / "h.json").read_text().splitlines()[0])
    assert header["settings"]["withheld"] == ["headers:X-Gateway-Key"]
    assert secret not in journal_path(project / "h.json").read_text()
    refused = invoke(*RUN, "--resume", "-o", "h.json")
    assert refused.exit_code == 2 and "the header X-Gateway-Key" in refused.stderr
    again = invoke(*RUN, "--resume", "-o", "h.json", "--header", f"X-Gateway-Key: {secret}")
    assert again.exit_code == 0, again.stderr


@pytest.mark.parametrize(
    ("setting", "damaged"),
    [("batch_size", "abc"), ("batch_size", [3]), ("sampling_args", 5), ("limit", 2.5)],
)
def test_a_damaged_journal_setting_is_exit_2_naming_it(
    invoke: Invoke, project: Path, setting: str, damaged: object
) -> None:
    """Issue 33: a journal edited by hand or damaged, resumed (was an internal error)."""
    assert invoke(*RUN, "--limit", "4", "--batch-size", "2", "-o", "d.json").exit_code == 0
    interrupted(project / "d.json", keep=1)
    path = journal_path(project / "d.json")
    head, *rest = path.read_text().splitlines(keepends=True)
    header = json.loads(head)
    header["settings"][setting] = damaged
    path.write_text(json.dumps(header) + "\n" + "".join(rest))
    result = invoke(*RUN, "--resume", "-o", "d.json")
    assert result.exit_code == 2, result.stderr
    assert f"damaged setting {setting}" in result.stderr
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr


def test_a_journal_kept_by_the_previous_version_resumes_with_its_settings(
    invoke: Invoke, project: Path
) -> None:
    """Journals written before the settings had one object kept the CLI's option names
    (``sampling_args_json``, ``no_transcripts``, ``rows_spec``, ``--header NAME``)."""
    assert invoke(*RUN, "--limit", "6", "-o", "old.json").exit_code == 0
    interrupted(project / "old.json", keep=1)
    path = journal_path(project / "old.json")
    head, *rest = path.read_text().splitlines(keepends=True)
    header = json.loads(head)
    header["settings"] = {
        "limit": 6,
        "sampling_args_json": '{"top_p": 0.5}',
        "no_transcripts": True,
        "rows_spec": "0-5",
        "max_in_flight": 3,
        "withheld": ["--header X-Key"],
    }
    path.write_text(json.dumps(header) + "\n" + "".join(rest))
    refused = invoke(*RUN, "--resume", "-o", "old.json")
    assert refused.exit_code == 2 and "the header X-Key" in refused.stderr
    result = invoke(*RUN, "--resume", "-o", "old.json", "--header", "X-Key: v")
    said = next(x for x in result.stderr.splitlines() if x.startswith("Resuming with"))
    for shown in (
        "--sampling-args {'top_p': 0.5}",
        "--no-transcripts",
        "--rows 0-5",
        "--max-in-flight 3",
    ):
        assert shown in said, said
