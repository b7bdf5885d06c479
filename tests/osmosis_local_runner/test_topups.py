"""Top-ups (issue 53): a finished run grows — more attempts per row, more rows — making
exactly the missing model calls, keeping every recorded attempt byte-identical; a
change that would alter finished attempts is refused by both doors alike."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from osmosis_client.errors import InvalidInputError
from osmosis_local_runner import run_eval
from osmosis_local_runner.run.session.journal import journal_path, read_journal, saved_settings
from tests.helpers import run_cli
from tests.stub_openai import StubOpenAI

CONFIG = "configs/eval/quickstart.toml"
RESULTS = Path(".osmosis/evals/grow/results.json")


@pytest.fixture
def project(quickstart_project: Path) -> Path:
    return quickstart_project


def cli(*args: str) -> tuple[int, str]:
    """(exit code, stderr) of the CLI."""
    code, _, err = run_cli(*args)
    return code, err


def attempts(results: Path) -> dict[tuple[int, int], str]:
    """Each attempt of a results document, as the bytes of its JSON."""
    document = json.loads(results.read_text())
    return {
        (row["row_index"], run["run_index"]): json.dumps(run, sort_keys=True)
        for row in document["rows"]
        for run in row["runs"]
    }


def asked(stub: StubOpenAI) -> list[str]:
    """The last user message of each request the peer received."""
    return [body["messages"][-1]["content"] for body in stub.state.requests]


def test_n_2_to_4_makes_exactly_the_missing_calls_and_keeps_the_first(project: Path) -> None:
    with StubOpenAI() as stub:
        run_eval(CONFIG, name="grow", model="stub", base_url=stub.url, limit=3, n=2)
        before = attempts(RESULTS)
        first_calls = len(stub.state.requests)
        assert len(before) == 6 and first_calls > 0
        grown = run_eval(CONFIG, name="grow", n=4, resume=True)
        made = len(stub.state.requests) - first_calls
    assert made == first_calls  # 3 rows × 2 more attempts: as many calls as 3 × 2 took
    after = attempts(RESULTS)
    assert sorted(after) == [(r, k) for r in range(3) for k in range(4)]
    assert {key: after[key] for key in before} == before  # byte-identical
    assert grown.status == "finished" and grown.config["n_runs"] == 4
    assert grown.config["top_ups"][0]["changed"] == {"n": [2, 4]}
    # the journal says what changed, and a later resume adopts it
    assert saved_settings(RESULTS)["n"] == 4
    contents = read_journal(journal_path(RESULTS))
    assert contents.fingerprint["n"] == 4 and len(contents.top_ups) == 1
    assert journal_path(RESULTS).read_bytes().startswith(b'{"journal": 3,')


def test_more_rows_run_only_the_new_rows(project: Path) -> None:
    with StubOpenAI() as stub:
        run_eval(CONFIG, name="grow", model="stub", base_url=stub.url, limit=2)
        seen = set(asked(stub))
        stub.state.requests.clear()
        grown = run_eval(CONFIG, name="grow", limit=4, resume=True)
        assert stub.state.requests and not seen & set(asked(stub))  # no row asked again
        assert grown.summary.total_rows == 4
        rows = run_eval(CONFIG, name="grow", rows="0-4,7", resume=True)
    assert sorted({k[0] for k in attempts(RESULTS)}) == [0, 1, 2, 3, 4, 7]
    assert [t["changed"] for t in rows.config["top_ups"]] == [
        {"limit": [2, 4]},
        {"rows": [None, "0-4,7"]},  # the rows win over the limit, which stays
    ]


def test_a_top_up_never_shrinks_or_changes_what_ran(project: Path) -> None:
    run_eval(CONFIG, name="grow", model="mock/calculator", limit=3, n=2)
    refusals: list[tuple[dict[str, Any], str]] = [
        ({"n": 1}, "n 2 → 1 would drop finished attempts"),
        ({"rows": "1-5"}, "rows 0 were chosen before"),
        ({"n": 4, "temperature": 0.7}, "sampling temperature"),
        ({"n": 4, "model": "mock/flaky-calculator"}, "model: 'mock/calculator'"),
    ]
    for change, said in refusals:
        with pytest.raises(InvalidInputError) as refused:
            run_eval(CONFIG, name="grow", resume=True, **change)
        assert refused.value.code == "RESUME_MISMATCH" and said in refused.value.message
    with pytest.raises(InvalidInputError) as unasked:  # a top-up is asked for, never implied
        run_eval(CONFIG, name="grow", n=4)
    assert "resume it to top it up" in (unasked.value.hint or "")
    assert len(attempts(RESULTS)) == 6  # nothing ran, nothing lost


def test_the_cli_tops_up_as_run_eval_does(project: Path, tmp_path: Path) -> None:
    code, err = cli(
        "eval", "run", CONFIG, "--name", "grow", "--model", "mock/calculator", "--limit", "2", "-q"
    )
    assert code == 0, err
    assert len(attempts(RESULTS)) == 6  # the config's n = 3
    code, err = cli("eval", "run", CONFIG, "--name", "grow", "--n", "5", "-q")
    assert code == 2 and "add --resume to top it up" in err
    code, err = cli("eval", "run", CONFIG, "--name", "grow", "--n", "5", "--resume")
    assert code == 0, err
    assert "topping up the run (n 3 → 5)" in err
    assert len(attempts(RESULTS)) == 10
    _, out, _ = run_cli("eval", "info", "grow", "--local")
    assert "grown:     n 3 → 5 (" in out  # what changed, and when
    code, err = cli("eval", "run", CONFIG, "--name", "grow", "--n", "4", "--resume")
    assert code == 2 and "would drop finished attempts" in err


def test_a_results_file_grows_too(project: Path, tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    run_eval(CONFIG, output=out, model="mock/calculator", limit=2, n=1)
    before = attempts(out)
    grown = run_eval(CONFIG, output=out, model="mock/calculator", limit=2, n=2, resume=True)
    assert grown.summary.total_runs > 0 and len(attempts(out)) == 4
    assert {k: attempts(out)[k] for k in before} == before
