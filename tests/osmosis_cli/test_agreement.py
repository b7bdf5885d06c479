"""A grader checked against people (issue 53, part 5): ``osmosis eval agreement`` and
``EvalResult.agreement`` — reviewed count, pass rates, raw agreement, Cohen's κ with a
bootstrap interval, the confusion matrix, per reviewer — equal to scikit-learn's κ on the
same verdicts; shown on the run's page."""

from __future__ import annotations

from pathlib import Path

import pytest
from sklearn.metrics import cohen_kappa_score

from osmosis_local_runner import load_run, run_eval
from osmosis_local_runner.results.documents.sources import Source
from osmosis_local_runner.results.reports.report import render
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


def test_scores_alpha_equals_the_krippendorff_package() -> None:
    import krippendorff
    import numpy as np

    from osmosis_local_runner.results.reviews.agreement_stats import interval_alpha

    rng = np.random.default_rng(3)
    grader = rng.uniform(0, 1, 40)
    person = np.clip(grader + rng.normal(0, 0.2, 40), 0, 1)
    units = list(zip(grader.tolist(), person.tolist(), strict=True))
    expected = krippendorff.alpha(
        reliability_data=np.array([grader, person]), level_of_measurement="interval"
    )
    assert interval_alpha(units) == pytest.approx(expected, abs=1e-12)
    assert interval_alpha([(1.0, 1.0), (1.0, 1.0)]) is None  # no variation: nothing to say


#: a candidate grader for the reviewed attempts: every answer passes (a lax judge)
LAX = "def lax(messages, ground_truth, metadata, **kw):\n    return 1.0\n"
#: a judge that answers differently when asked again (it counts its calls)
FICKLE = (
    "CALLS = []\n\n"
    "def fickle(messages, ground_truth, metadata, **kw):\n"
    "    CALLS.append(1)\n"
    "    return float(len(CALLS) % 5 != 0)\n"
)


def test_a_candidate_grader_and_a_judge_against_itself(
    quickstart_project: Path, invoke: Invoke
) -> None:
    (quickstart_project / "judges.py").write_text(LAX + "\n\n" + FICKLE)
    result = run_eval(CONFIG, model="mock/flaky-calculator", limit=10, n=2, name="judged")
    attempts = [(row.index, a.run_index, a) for row in result.rows() for a in row.attempts]
    for row, index, attempt in attempts[:12]:  # the person agrees with the grader, mostly
        verdict = attempt.scores["grader"] >= 1.0 if row % 5 else True
        result.review(row, index, verdict="pass" if verdict else "fail", author="ada")
    mine = result.agreement()
    found = load_run("judged").agreement(against="judges.py:lax")
    candidate = found["against"]
    assert candidate["grader"] == "judges.py:lax" and candidate["reviewed"] == 12
    assert candidate["grader_pass_rate"] == 1.0  # it graded only the 12 reviewed attempts
    lax_agree = candidate["agreement"] * 12
    difference = (lax_agree - mine["agreement"] * 12) / 12
    assert candidate["agreement_difference"] == pytest.approx(difference)
    assert candidate["only_candidate_agrees"] + 12 * mine["agreement"] == pytest.approx(
        lax_agree + candidate["only_grader_agrees"]
    )
    repeated = load_run("judged").agreement(against="judges.py:fickle", repeat=3)
    consistency = repeated["self_consistency"]
    assert consistency["repeats"] == 3 and consistency["attempts"] == 12
    assert consistency["all_agree"] < 1.0  # a fickle judge is seen to be one
    shown = invoke("eval", "agreement", "judged", "--against", "judges.py:lax")
    assert shown.exit_code == 0, shown.stderr
    assert "judges.py:lax: 12 reviewed" in shown.stdout
    assert "judges.py:lax − grader: κ" in shown.stdout
    again = invoke("eval", "agreement", "judged", "--against", "judges.py:fickle", "--repeat", "2")
    assert again.exit_code == 0 and "self-consistency over 2 gradings of 12" in again.stdout
    lone = invoke("eval", "agreement", "judged", "--repeat", "2")
    assert lone.exit_code == 2 and "--against MODULE:FN --repeat 2" in lone.stderr
