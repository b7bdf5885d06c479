"""A grader checked against people (issue 53, part 5): ``osmosis eval agreement`` and
``EvalResult.agreement`` — reviewed count, pass rates, raw agreement, Cohen's κ with a
bootstrap interval, the confusion matrix, per reviewer — equal to scikit-learn's κ on the
same verdicts; shown on the run's page."""

from __future__ import annotations

from pathlib import Path

import pytest
from sklearn.metrics import cohen_kappa_score

from osmosis_local_runner import load_run, run_eval
from osmosis_local_runner.results.report import render
from osmosis_local_runner.results.sources import Source
from tests.osmosis_cli.conftest import Invoke

CONFIG = "configs/eval/quickstart.toml"


def test_agreement_equals_scikit_learns_kappa_overall_and_per_reviewer(
    quickstart_project: Path, invoke: Invoke
) -> None:
    result = run_eval(CONFIG, model="mock/flaky-calculator", limit=12, n=2, name="judged")
    attempts = [(row.index, a.run_index, a) for row in result.rows() for a in row.attempts]
    grader = {(r, i): a.scores["grader"] >= 1.0 for r, i, a in attempts}
    said: dict[str, dict[tuple[int, int], bool]] = {"ada": {}, "bo": {}}
    for n, (row, index, _) in enumerate(attempts[:20]):  # ada reviews 20; bo every third
        verdict = grader[(row, index)] if n % 4 else not grader[(row, index)]
        result.review(row, index, verdict="pass" if verdict else "fail", author="ada")
        said["ada"][(row, index)] = verdict
        if n % 3 == 0:
            result.review(row, index, verdict="fail", author="bo")
            said["bo"][(row, index)] = False
    result.review(attempts[0][0], attempts[0][1], verdict="pass", author="ada")  # changed mind
    said["ada"][attempts[0][:2]] = True
    found = load_run("judged").agreement()
    for who, verdicts in said.items():
        keys = sorted(verdicts)
        expected = cohen_kappa_score([grader[k] for k in keys], [verdicts[k] for k in keys])
        one = found["reviewers"][who]
        assert one["reviewed"] == len(keys)
        if one["kappa"] is None:  # one class on a side: κ is undefined (sklearn says nan)
            assert expected != expected
        else:
            assert one["kappa"] == pytest.approx(expected, abs=1e-12)
    pairs = [(grader[k], v) for who in said for k, v in said[who].items()]
    overall = cohen_kappa_score([g for g, _ in pairs], [p for _, p in pairs])
    assert found["kappa"] == pytest.approx(overall, abs=1e-12)
    assert found["reviewed"] == len(pairs)
    assert found["kappa_ci"][0] <= found["kappa"] <= found["kappa_ci"][1]
    matrix = found["confusion"]
    assert sum(matrix.values()) == len(pairs)
    assert matrix["grader_pass_reviewer_pass"] == sum(g and p for g, p in pairs)

    shown = invoke("eval", "agreement", "judged")
    assert shown.exit_code == 0, shown.stderr
    assert f"Cohen's κ {found['kappa']:.2f}" in shown.stdout and "ada:" in shown.stdout
    assert invoke("--json", "eval", "agreement", "judged").data()["kappa"] == found["kappa"]
    bad = invoke("eval", "agreement", "judged", "--fn", "nope")
    assert bad.exit_code == 2 and "no eval fn 'nope'" in bad.stderr
    page, _ = render([Source("judged", load_run("judged")._file)])
    assert f"Cohen's κ {found['kappa']:.2f}" in page
