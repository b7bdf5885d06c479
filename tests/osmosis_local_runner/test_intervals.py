"""An interval on every score (issue 53, first part): the mean's standard error and 95 %
interval with rows as clusters, pass@k's bootstrap interval over rows, and the variance
split between rows and attempts — in the results document and the terminal, checked
against scipy on the same numbers."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from scipy import stats as scipy_stats

from osmosis_local_runner import run_eval
from osmosis_local_runner.results.statistics.intervals import (
    mean_interval,
    pass_at_k_interval,
    variance_split,
)
from osmosis_local_runner.results.statistics.scoring import pass_at_k
from osmosis_local_runner.run.session.journal import journal_path

CONFIG = "configs/eval/quickstart.toml"


def test_the_mean_interval_treats_rows_as_clusters_as_scipy_does() -> None:
    rows = [
        [1.0, 1.0, 0.0, 1.0],
        [0.0, 0.0, 0.0, 1.0],
        [1.0, 1.0, 1.0, 1.0],
        [0.5, 0.0, 1.0, 0.5],
        [0.0, 0.0, 0.0, 0.0],
    ]
    means = [sum(r) / len(r) for r in rows]
    centre = sum(means) / len(means)
    found = mean_interval(rows, centre)
    low, high = scipy_stats.t.interval(
        0.95, len(means) - 1, loc=centre, scale=scipy_stats.sem(means)
    )
    assert found["stderr"] == pytest.approx(scipy_stats.sem(means), rel=1e-9)
    assert (found["ci_low"], found["ci_high"]) == pytest.approx((low, high), rel=1e-9)
    assert found["clusters"] == 5
    # one attempt a row: the usual t interval of the attempts
    flat = [[0.0], [1.0], [1.0], [0.0], [1.0], [1.0]]
    values = [r[0] for r in flat]
    plain = mean_interval(flat, sum(values) / 6)
    assert plain["stderr"] == pytest.approx(scipy_stats.sem(values), rel=1e-9)
    assert mean_interval([[1.0, 0.0]], 0.5)["stderr"] is None  # one row: no interval


def test_the_variance_split_and_what_more_rows_or_attempts_buy() -> None:
    import numpy as np

    rows = [[1.0, 1.0, 1.0, 0.0], [0.0, 0.0, 1.0, 0.0], [1.0, 1.0, 1.0, 1.0], [0.0, 0.0, 0.0, 0.0]]
    found = variance_split(rows)
    assert found is not None
    within = sum(float(np.var(r, ddof=1)) for r in rows) / 4
    between = float(np.var([sum(r) / 4 for r in rows], ddof=1)) - within / 4
    assert found["within"] == pytest.approx(within) and found["between"] == pytest.approx(between)
    assert found["se_twice_rows"] == pytest.approx(math.sqrt((between + within / 4) / 8))
    assert found["se_twice_attempts"] == pytest.approx(math.sqrt((between + within / 8) / 4))
    assert variance_split([[1.0], [0.0]]) is None  # no row of two attempts: nothing to split


def test_pass_at_k_has_a_bootstrap_interval_over_rows() -> None:
    import numpy as np

    counts = [(4, c) for c in (0, 1, 2, 4, 4, 3, 0, 1, 4, 2, 2, 3)]
    per_row = [pass_at_k(n, c, 2) for n, c in counts]
    found = pass_at_k_interval(per_row)
    assert found is not None and found[0] <= sum(per_row) / len(per_row) <= found[1]
    reference = scipy_stats.bootstrap(
        (np.array(per_row),),
        np.mean,
        confidence_level=0.95,
        method="percentile",
        n_resamples=20_000,
        random_state=np.random.default_rng(0),
    ).confidence_interval
    assert found == pytest.approx([reference.low, reference.high], abs=0.04)


def test_a_run_carries_its_intervals_equal_to_scipys(quickstart_project: Path) -> None:
    result = run_eval(
        CONFIG, model="mock/flaky-calculator", limit=20, n=4, output=quickstart_project / "r.json"
    )
    stats_ = json.loads(result.path.read_text())["summary"]["eval_fns"]["grader"]
    lines = journal_path(result.path).read_text().splitlines()[1:]
    by_row: dict[int, list[float]] = {}
    for line in lines:
        attempt = json.loads(line)
        by_row.setdefault(attempt["row_index"], []).append(attempt["scores"]["grader"])
    means = [sum(v) / len(v) for v in by_row.values()]
    low, high = scipy_stats.t.interval(
        0.95, len(means) - 1, loc=stats_["mean"], scale=scipy_stats.sem(means)
    )
    assert (round(stats_["ci_low"], 3), round(stats_["ci_high"], 3)) == (
        round(low, 3),
        round(high, 3),
    )
    assert stats_["clusters"] == 20 and set(stats_["ci_pass_at_k"]) == {"1", "3", "4"}
    assert stats_["variance"]["attempts_per_row"] == 4.0


def test_clustered_errors_equal_statsmodels_cluster_robust_ones() -> None:
    import numpy as np
    import statsmodels.api as sm

    from osmosis_local_runner.results.statistics.intervals import clustered_se

    rng = np.random.default_rng(7)
    groups = [f"passage-{i // 4}" for i in range(40)] + ["alone-1", "alone-2"]
    values = [float(v) for v in rng.integers(0, 2, len(groups))]
    fit = sm.OLS(np.array(values), np.ones(len(values))).fit(
        cov_type="cluster", cov_kwds={"groups": np.unique(groups, return_inverse=True)[1]}
    )
    assert clustered_se(values, groups) == pytest.approx(float(fit.bse[0]), rel=1e-9)
    # every row its own cluster: the usual standard error of the rows' means
    alone = [str(i) for i in range(len(values))]
    assert clustered_se(values, alone) == pytest.approx(scipy_stats.sem(values), rel=1e-12)
    found = mean_interval([[v] for v in values], sum(values) / len(values), groups)
    assert found["clusters"] == 12  # 10 passages and 2 rows of their own
    half = scipy_stats.t.ppf(0.975, 11) * float(fit.bse[0])
    assert found["ci_high"] - found["ci_low"] == pytest.approx(2 * half, rel=1e-6)


def test_a_run_clustered_by_a_column_counts_its_values(quickstart_project: Path) -> None:
    plain = run_eval(
        CONFIG, model="mock/flaky-calculator", limit=20, n=2, output=quickstart_project / "a.json"
    )
    clustered = run_eval(
        CONFIG,
        model="mock/flaky-calculator",
        limit=20,
        n=2,
        output=quickstart_project / "b.json",
        cluster_by="metadata.difficulty",
    )
    one = json.loads(plain.path.read_text())
    two = json.loads(clustered.path.read_text())
    assert two["config"]["cluster_by"] == "difficulty"
    difficulties = {row["metadata"]["difficulty"] for row in two["rows"]}
    assert one["summary"]["eval_fns"]["grader"]["clusters"] == 20
    assert two["summary"]["eval_fns"]["grader"]["clusters"] == len(difficulties)
    with pytest.raises(Exception, match="no row has a column 'nope'"):
        run_eval(
            CONFIG,
            model="mock/calculator",
            limit=2,
            cluster_by="nope",
            output=quickstart_project / "c.json",
        )


def test_the_step_summary_reads_the_mean_with_its_interval(quickstart_project: Path) -> None:
    from osmosis_local_runner.results.documents.documents import ResultsFile
    from osmosis_local_runner.results.documents.sources import Source
    from osmosis_local_runner.results.reports.markdown import run_markdown

    result = run_eval(
        CONFIG, model="mock/flaky-calculator", limit=10, n=2, output=quickstart_project / "m.json"
    )
    stats_ = json.loads(result.path.read_text())["summary"]["eval_fns"]["grader"]
    half = (stats_["ci_high"] - stats_["ci_low"]) / 2
    text = run_markdown(Source("m", ResultsFile(result.path)))
    assert f"| grader | {stats_['mean']:.3f} ± {half:.3f} |" in text
