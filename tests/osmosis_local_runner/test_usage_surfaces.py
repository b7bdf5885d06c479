"""Usage where people look (issue 44): JUnit properties, the step summary, a suite that
sweeps the reasoning effort, the platform's published prices, and documents whose usage
was written by someone else (never a traceback)."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import httpx
import pytest
import respx

from osmosis_client import Client
from osmosis_client.llm.prices import Price
from osmosis_client.llm.usage import Usage
from osmosis_local_runner import load_run, run_eval, run_suite
from osmosis_local_runner.api.results import UsageSummary
from osmosis_local_runner.results.documents.documents import ResultsFile
from osmosis_local_runner.results.documents.sources import Source
from osmosis_local_runner.results.reports.ci_reports import junit_xml
from osmosis_local_runner.results.reports.markdown import run_markdown
from osmosis_local_runner.results.statistics.usage import (
    usage_lines,
    usage_properties,
    usage_summary,
)
from tests.conftest import PLATFORM
from tests.osmosis_local_runner.test_reasoning_runs import MOCK, ROWS, Think, exact


@pytest.fixture
def thinking(tmp_path: Path) -> Path:
    prices = tmp_path / "prices.toml"
    prices.write_text(
        '[models."mock/thinking-calculator"]\ninput = 1\noutput = 4\ncache_read = 0.5\n'
    )
    return run_eval(
        workflow=Think,
        dataset=ROWS,
        eval_fns=[exact],
        model=MOCK,
        n=2,
        prices=prices,
        max_tokens=40,
        output=tmp_path / "t.json",
    ).path


def test_junit_and_the_step_summary_carry_the_runs_usage(thinking: Path) -> None:
    usage = json.loads(thinking.read_text())["summary"]["usage"]
    root = ET.fromstring(junit_xml([Source("think", ResultsFile(thinking))]))
    suite = root.find("testsuite")
    assert suite is not None
    found = {p.get("name"): p.get("value") for p in suite.iter("property")}
    assert found["usage.reasoning_tokens"] == str(usage["reasoning_tokens"])
    assert found["usage.truncated"] == str(usage["truncated"]) != "0"  # max_tokens cut some
    assert float(str(found["usage.cost_usd"])) == pytest.approx(usage["cost_usd"], rel=1e-5)
    assert "usage.output_tokens.p95" in found
    markdown = run_markdown(Source("think", ResultsFile(thinking)))
    assert f"{usage['reasoning_tokens']:,} reasoning" in markdown
    assert f"truncated: {usage['truncated']} of 16 attempts" in markdown


def test_effort_is_a_suite_axis(tmp_path: Path, quickstart_project: Path) -> None:
    suite = quickstart_project / "configs" / "eval" / "efforts.toml"
    suite.write_text(
        'suite = "efforts"\nrollout = "calculator"\nentrypoint = "main.py"\n'
        'dataset = "arithmetic"\nmodel_path = "mock/thinking-calculator"\nlimit = 4\n\n'
        '[[ablation]]\n[ablation.sweep]\nreasoning_effort = ["low", "high"]\n'
    )
    result = run_suite(suite, root=quickstart_project)
    entries = list(result.entries.values())
    assert len(entries) == 2
    efforts = {e.config["sampling"]["reasoning_effort"]: e.summary.usage for e in entries}
    low, high = efforts["low"], efforts["high"]
    assert low is not None and high is not None
    assert high.reasoning_tokens > low.reasoning_tokens


@respx.mock
def test_the_platforms_published_prices_price_a_run(tmp_path: Path) -> None:
    base = f"{PLATFORM}/api/cli/models/base"
    respx.get(f"{base}/mock%2Fthinking-calculator").mock(
        return_value=httpx.Response(
            200,
            json={
                "id": "m1",
                "model_name": "mock/thinking-calculator",
                "inference_input_usd_per_million_tokens": 0.2,
                "inference_cached_input_usd_per_million_tokens": 0.015,
                "inference_output_usd_per_million_tokens": 0.8,
            },
        )
    )
    respx.get(f"{base}/nowhere").mock(return_value=httpx.Response(404, json={"detail": "no"}))
    with Client(token="t", workspace="acme", base_url=PLATFORM) as client:
        table = client.models.prices([MOCK, "nowhere"])
        assert table.prices == {MOCK: Price(0.2, 0.8, cache_read=0.015)}
        result = run_eval(
            workflow=Think,
            dataset=ROWS[:2],
            eval_fns=[exact],
            model=MOCK,
            prices="platform",
            client=client,
            output=tmp_path / "p.json",
        )
    usage = result.summary.usage
    assert usage is not None and usage.cost_usd is not None and usage.cost_usd > 0
    with pytest.raises(Exception, match="logged-in client"):
        run_eval(
            workflow=Think,
            dataset=ROWS[:2],
            eval_fns=[exact],
            model=MOCK,
            prices="platform",
            output=tmp_path / "q.json",
        )


JUNK: list[Any] = [
    {
        "input_tokens": "many",
        "output_tokens": -3,
        "per_attempt": 5,
        "by_model": ["x"],
        "cost_usd": "free",
        "attempts": True,
        "truncated": 1e300,
    },
    {"per_attempt": {"output_tokens": {"mean": "a", "p50": None}}, "by_model": {"m": 7}},
    "not a mapping",
    [],
]


@pytest.mark.parametrize("junk", JUNK)
def test_usage_someone_else_wrote_is_shown_as_numbers_or_left_out(junk: Any) -> None:
    lines = usage_lines(junk)
    assert all(isinstance(line, str) for line in lines)
    assert all(isinstance(v, int | float) for v in usage_properties(junk).values())
    found = UsageSummary.of(junk)
    assert found is None or found.cost_usd is None
    if isinstance(junk, dict):  # an attempt's usage read back: counted as numbers or 0
        summary = usage_summary([junk])
        assert summary is not None and summary["input_tokens"] == 0


def test_a_document_with_junk_usage_still_reports_and_lists(tmp_path: Path, thinking: Path) -> None:
    document = json.loads(thinking.read_text())
    document["summary"]["usage"] = JUNK[0]
    for row in document["rows"]:
        for run in row["runs"]:
            run["usage"] = {"output_tokens": "x", "by_model": 3}
    hostile = tmp_path / "hostile.json"
    hostile.write_text(json.dumps(document))
    result = load_run(hostile)
    assert result.summary.usage is not None and result.summary.usage.input_tokens == 0
    from osmosis_local_runner.results.reports.report import render

    page, _ = render([Source("hostile", ResultsFile(hostile))])
    assert "unknown" in page  # the card's cost: no number to show


def test_usage_adds_up_calls_never_averages() -> None:
    one = Usage(input_tokens=10, output_tokens=5, reasoning_tokens=3, calls=1, reported_cost=0.1)
    two = Usage(input_tokens=30, output_tokens=1, calls=1)
    total = Usage()
    total.add(one)
    total.add(two)
    assert (total.input_tokens, total.output_tokens, total.calls) == (40, 6, 2)
    assert total.reported_cost is None  # one call did not report its cost: no sum
    runs = [
        {"input_tokens": 10, "output_tokens": 100, "calls": 1, "cost_usd": 0.5},
        {"input_tokens": 30, "output_tokens": 0, "calls": 3},
    ]
    summary = usage_summary(runs)
    assert summary is not None and summary["cost_usd"] is None  # a price was not known
    assert summary["calls"] == 4 and summary["total_tokens"] == 140
    assert summary["per_attempt"]["output_tokens"] == {"mean": 50.0, "p50": 50.0, "p95": 95.0}
