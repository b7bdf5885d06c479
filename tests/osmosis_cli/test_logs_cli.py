"""osmosis eval logs through the CLI (respx platform)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest
import respx

from tests.osmosis_cli.conftest import Invoke
from tests.osmosis_client.platform.test_eval_runs import detail
from tests.osmosis_client.platform.test_logs import LOGS, LogServer, entry


@pytest.fixture
def api(
    router: respx.MockRouter, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> respx.MockRouter:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OSMOSIS_TOKEN", "ci-token-secret")
    monkeypatch.setenv("OSMOSIS_WORKSPACE", "acme")
    return router


def test_logs_prints_the_newest_entries_oldest_first(invoke: Invoke, api: respx.MockRouter) -> None:
    server = LogServer([entry(i) for i in range(8)])
    server.entries[-1] = server.entries[-1] | {"level": "error", "details": {"row": 7}}
    api.get(LOGS).mock(side_effect=server)
    result = invoke("eval", "logs", "demo-abc", "--limit", "3")
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert len(lines) == 3
    assert lines[0].startswith("2026-11-23T10:00:05.000Z  INFO    rollout    event 5")
    assert lines[2].endswith('event 7  {"row":7}') and "ERROR" in lines[2]
    assert "ci-token-secret" not in result.stdout + result.stderr


def test_logs_json_is_one_record_per_line(invoke: Invoke, api: respx.MockRouter) -> None:
    api.get(LOGS).mock(side_effect=LogServer([entry(i) for i in range(4)]))
    result = invoke("eval", "logs", "demo-abc", "--json")
    assert result.exit_code == 0, result.stderr
    document = result.json()  # the list envelope, as the published CLI prints it
    records = document["items"]
    assert [r["message"] for r in records] == [f"event {i}" for i in range(4)]
    assert set(records[0]) == {"timestamp", "level", "step", "message"}
    assert document["next_cursor"] is None and document["has_more"] is False


def test_logs_follow_tails_until_the_run_ends(invoke: Invoke, api: respx.MockRouter) -> None:
    server = LogServer([entry(0)])
    states = iter(["running", "running", "finished"])

    def run_state(request: httpx.Request) -> httpx.Response:
        server.entries.append(entry(len(server.entries)))
        return httpx.Response(200, json=detail(next(states), None))

    api.get("/api/cli/eval-runs/demo-abc").mock(side_effect=run_state)
    api.get(LOGS).mock(side_effect=server)
    result = invoke("eval", "logs", "demo-abc", "--follow", "--json")
    assert result.exit_code == 0, result.stderr
    messages = [json.loads(line)["message"] for line in result.stdout.splitlines()]
    assert messages == [f"event {i}" for i in range(4)]


def test_logs_of_a_missing_run_exit_1(invoke: Invoke, api: respx.MockRouter) -> None:
    api.get("/api/cli/eval-runs/nope/logs").respond(
        404, json={"code": "NOT_FOUND", "message": "eval run not found"}
    )
    result = invoke("eval", "logs", "nope")
    assert result.exit_code == 1
    assert result.stderr.startswith("error: ") and len(result.stderr.strip().splitlines()) == 1


def test_logs_limit_is_bounded(invoke: Invoke, api: respx.MockRouter) -> None:
    result = invoke("eval", "logs", "demo-abc", "--limit", "0")
    assert result.exit_code == 2


def test_logs_json_escapes_c1_controls(invoke: Invoke, api: respx.MockRouter) -> None:
    """U+009B is an 8-bit CSI to a terminal: --json writes it as an escape (same JSON)."""
    hostile = "red \u009b31m text \u009d]0;title\u0007 \u2028 done \x7f"
    api.get(LOGS).mock(side_effect=LogServer([entry(0) | {"message": hostile}]))
    result = invoke("eval", "logs", "demo-abc", "--json")
    assert result.exit_code == 0, result.stderr
    for raw in ("\u009b", "\u009d", "\u2028", "\x7f", "\x07"):
        assert raw not in result.stdout
    assert "\\u009b31m" in result.stdout
    assert result.items()[0]["message"] == hostile  # the text itself is kept


@pytest.mark.parametrize(
    ("argv", "route", "detail_of", "said"),
    [
        (
            ["train", "logs", "qwen-002"],
            "/api/cli/training-runs/qwen-002",
            lambda status: {"training_run": {"id": "tr_1", "name": "qwen-002", "status": status}},
            "Training run qwen-002 ended: finished.",
        ),
        (
            ["benchmark", "runs", "logs", "tb-001"],
            "/api/cli/benchmark-runs/tb-001",
            lambda status: {"benchmark_run": {"id": "br_1", "name": "tb-001", "status": status}},
            "Benchmark run tb-001 ended: finished.",
        ),
    ],
)
def test_training_and_benchmark_logs_follow_as_eval_logs_does(
    invoke: Invoke, api: respx.MockRouter, argv: list[str], route: str, detail_of: Any, said: str
) -> None:
    """New entries as they come, each once and in order, through a 503 mid-way, until
    the run ends; the last line says how it ended."""
    server = LogServer([entry(0)])
    states = iter(["running", "error", "running", "finished"])

    def run_state(request: httpx.Request) -> httpx.Response:
        state = next(states)
        if state == "error":
            return httpx.Response(503, json={"error": "busy"})
        server.entries.append(entry(len(server.entries)))
        return httpx.Response(200, json=detail_of(state))

    api.get(route).mock(side_effect=run_state)
    api.get(f"{route}/logs").mock(side_effect=server)
    result = invoke(*argv, "--follow")
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert [line.split("  ")[-1].split()[-2:] for line in lines] == [
        ["event", str(i)] for i in range(4)
    ]
    assert said in result.stderr
    both = invoke(*argv, "--follow", "--cursor", "c1")
    assert both.exit_code == 2 and "exclude each other" in both.stderr
