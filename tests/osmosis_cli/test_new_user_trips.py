"""What a new user tripped on (issue 51): a template's placeholder the run replaces is
no problem (``--dataset FILE`` over the published scaffold's ``<your-dataset-name>``),
through both doors; a price table keyed by the model called prices a registry row; the
unpriced model is named; a sparkline of any finite series is drawn."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from osmosis_cli.terminal.spark import BARS, sparkline
from osmosis_client.errors import ConfigError
from osmosis_local_runner import run_eval
from tests.osmosis_cli.conftest import Invoke
from tests.stub_openai import StubOpenAI

CONFIG = "configs/eval/quickstart.toml"


@pytest.fixture
def placeholder(quickstart_project: Path) -> Path:
    path = quickstart_project / CONFIG
    text = path.read_text()
    lines = [
        'dataset = "<your-dataset-name>"' if line.startswith("dataset =") else line
        for line in text.splitlines()
    ]
    path.write_text("\n".join(lines) + "\n")
    return quickstart_project


def test_a_placeholder_the_run_replaces_is_no_problem_through_both_doors(
    placeholder: Path, invoke: Invoke
) -> None:
    data = str(placeholder / "data" / "arithmetic.jsonl")
    ran = invoke(
        "eval", "run", CONFIG, "--dataset", data, "--model", "mock/calculator", "--limit", "2", "-q"
    )
    assert ran.exit_code == 0, ran.stderr
    result = run_eval(CONFIG, dataset=data, model="mock/calculator", limit=2, name="lib")
    assert result.status == "finished"
    refused = invoke("eval", "run", CONFIG, "--model", "mock/calculator", "-q")
    assert refused.exit_code == 2 and "template placeholder" in refused.stderr
    with pytest.raises(ConfigError) as same:
        run_eval(CONFIG, model="mock/calculator", limit=2, name="lib2")
    assert [p.key for p in same.value.problems] == ["experiment.dataset"]


def test_a_price_keyed_by_the_model_called_prices_a_registry_row(
    quickstart_project: Path, invoke: Invoke
) -> None:
    with StubOpenAI() as stub:
        (quickstart_project / "configs" / "endpoints.toml").write_text(
            f'[[endpoint]]\nendpoint_id = "local-qwen"\nmodel = "Qwen/Qwen3-8B"\n'
            f'url = "{stub.url}"\n'
        )
        (quickstart_project / "prices.toml").write_text(
            '[models."Qwen/Qwen3-8B"]\ninput = 1.0\noutput = 2.0\n'
        )
        ran = invoke(
            "--json",
            "eval",
            "run",
            CONFIG,
            "--model",
            "local-qwen",
            "--prices",
            "prices.toml",
            "--limit",
            "2",
            "--max-cost",
            "1",
        )
        assert ran.exit_code == 0, ran.stderr
        assert {r["model"] for r in stub.state.requests} == {"Qwen/Qwen3-8B"}
    path = quickstart_project / ran.resource()["results_path"]
    usage = json.loads(path.read_text())["summary"]["usage"]
    assert usage["cost_usd"] == pytest.approx(
        usage["input_tokens"] / 1e6 + usage["output_tokens"] * 2 / 1e6
    )


def test_an_unknown_cost_names_the_model_without_a_price(
    quickstart_project: Path, invoke: Invoke
) -> None:
    (quickstart_project / "prices.toml").write_text(
        '[models."someone-else"]\ninput = 1\noutput = 1\n'
    )
    ran = invoke(
        "eval",
        "run",
        CONFIG,
        "--model",
        "mock/calculator",
        "--prices",
        "prices.toml",
        "--limit",
        "2",
    )
    assert ran.exit_code == 0, ran.stderr
    assert "cost: unknown (no price for mock/calculator)" in ran.stdout + ran.stderr


@pytest.mark.parametrize(
    "series",
    [[-1e308, 0.0, 1e308], [1e308, 1e308], [5e-324, 1.0], [float("nan"), 1.0, float("inf")]],
)
def test_a_sparkline_of_any_series_is_drawn(series: list[float]) -> None:
    drawn = sparkline(series)
    assert len(drawn) == len(series) and set(drawn) <= set(BARS) | {" "}
    if all(abs(v) < float("inf") for v in series) and max(series) > min(series):
        assert drawn[series.index(min(series))] == BARS[0]
        assert drawn[series.index(max(series))] == BARS[-1]
