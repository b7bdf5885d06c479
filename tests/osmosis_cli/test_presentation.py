"""Every table and detail of the platform's commands reads the same way (issue 45): one
timestamp style, thousands separators, money as $76.54, nothing shown as `{}`, `[]` or
`None`, no raw ISO time, base models named as configs name them — read off what each
command prints, on a loopback (respx) platform."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import respx

from tests.osmosis_cli import (
    test_benchmark_commands as bench,
    test_model_commands as models,
    test_train_commands as train,
)
from tests.osmosis_cli.conftest import Invoke

WHEN = re.compile(r"\b\d{4}-\d{2}-\d{2} \d{1,2}:\d{2} [AP]M UTC\b")
ISO = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}")
BARE_NUMBER = re.compile(r"(?<![\w.,/$-])\d{5,}(?![\w.,])")  # 31000000 without separators
TOTALS = {
    "total_input_tokens": 31_000_000,
    "total_output_tokens": 1_250_000,
    "total_cost_usd": 76.5432,
    "passed": 110,
    "tasks": {},
    "notes": None,
}


@pytest.fixture
def everything(
    router: respx.MockRouter, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> respx.MockRouter:
    monkeypatch.setenv("OSMOSIS_TOKEN", "t")
    monkeypatch.setenv("OSMOSIS_WORKSPACE", "acme")
    monkeypatch.chdir(tmp_path)
    router.get("/api/cli/training-runs").respond(200, json=train.page([train.RUN]))
    router.get("/api/cli/training-runs/qwen-multiply-002").respond(
        200,
        json={
            **train.DETAIL,
            "training_run": {**train.DETAIL["training_run"], "started_at": "2026-11-27T04:06:00Z"},
        },
    )
    router.get("/api/cli/training-runs/qwen-multiply-002/checkpoints").respond(
        200, json={"checkpoints": []}
    )
    router.get("/api/cli/training-runs/tr_a4d2c/metrics").respond(200, json=train.METRICS)
    router.get("/api/cli/models/base").respond(200, json=models.page("models", [models.BASE]))
    router.get("/api/cli/models/lora").respond(
        200,
        json=models.page("models", [models.LORA], active_deployments=1, max_active_deployments=2),
    )
    router.get("/api/cli/models/qwen-multiply-step-40").respond(200, json=models.LORA)
    router.get("/api/cli/benchmarks").respond(200, json=bench.page("benchmarks", [bench.BENCH]))
    router.get("/api/cli/benchmark-runs").respond(
        200, json=bench.page("benchmark_runs", [bench.RUN])
    )
    detail = {
        **bench.RUN_DETAIL,
        "totals": TOTALS,
        "configuration": {**bench.RUN_DETAIL["configuration"], "task_filters": {}},
    }
    router.get("/api/cli/benchmark-runs/tb21-run-001").respond(200, json=detail)
    return router


COMMANDS = [
    ["train", "list"],
    ["train", "info", "qwen-multiply-002"],
    ["model", "list"],
    ["model", "info", "qwen-multiply-step-40"],
    ["benchmark", "list"],
    ["benchmark", "runs", "list"],
    ["benchmark", "runs", "info", "tb21-run-001"],
]


@pytest.mark.parametrize("mode", [[], ["--plain"]], ids=["table", "plain"])
def test_every_table_reads_the_same_way(
    invoke: Invoke, everything: respx.MockRouter, mode: list[str]
) -> None:
    printed = []
    for argv in COMMANDS:
        result = invoke(*mode, *argv)
        assert result.exit_code == 0, (argv, result.stderr)
        printed.append((argv, result.stdout + result.stderr))
    for argv, text in printed:
        assert not ISO.search(text), (argv, ISO.search(text))
        for bad in ("{}", "[]", "None", "Usd", "Total Cost Usd"):
            assert bad not in text, (argv, bad, text)
        assert not BARE_NUMBER.search(text), (argv, BARE_NUMBER.search(text), text)
    shown = dict(printed_by(printed))
    assert WHEN.search(shown["train list"]) and WHEN.search(shown["benchmark runs list"])
    assert "Submitted: 2026-11-27 4:05 AM UTC" in shown["train info"]
    assert "Total Input Tokens: 31,000,000" in shown["benchmark runs info"]
    assert "Total Cost: $76.54" in shown["benchmark runs info"]
    assert (
        "Tasks:" not in shown["benchmark runs info"] and "Notes" not in shown["benchmark runs info"]
    )
    assert "Qwen/Qwen3.6-35B-A3B" in shown["model list"]  # as configs name base models


def printed_by(printed: list[tuple[list[str], str]]) -> list[tuple[str, str]]:
    return [
        (" ".join(a for a in argv if not a.startswith(("qwen", "tb21"))), t) for argv, t in printed
    ]


def test_money_and_counts() -> None:
    from osmosis_cli.terminal.numbers import count, labelled, money

    assert [money(v) for v in (76.5432, 0.5, 0.0042, 0.0, 1234567.891, 0.00001)] == [
        "$76.54",
        "$0.50",
        "$0.0042",
        "$0.00",
        "$1,234,567.89",
        "<$0.0001",
    ]
    assert count(31_000_000) == "31,000,000"
    assert list(labelled({"total_cost_usd": 3.2, "model_id": "m", "empty": {}, "n": 12345})) == [
        ("Total Cost", "$3.20"),
        ("Model ID", "m"),
        ("N", "12,345"),
    ]
