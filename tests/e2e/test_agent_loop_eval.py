"""`osmosis eval -m server:agent_loop …` on agent-loop code written for the published
0.2 SDK (examples/agent-loop imports `osmosis_ai…`; no osmosis_ai is installed), as
the Osmosis docs run it — against a loopback OpenAI-compatible calculator model.

Subprocesses: user modules named `server` and `rewards`, and the compatibility
layer, stay out of the test process.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests import envelopes
from tests.e2e.conftest import osmosis_command
from tests.stub_openai import StubOpenAI

pytestmark = pytest.mark.slow

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "agent-loop"
ROWS = [json.loads(line) for line in (EXAMPLE / "test_data.jsonl").read_text().splitlines()]


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    folder = tmp_path / "agent"
    shutil.copytree(EXAMPLE, folder, ignore=shutil.ignore_patterns("__pycache__"))
    return folder


@pytest.fixture
def model() -> Iterator[StubOpenAI]:
    with StubOpenAI() as stub:
        yield stub


def osmosis(
    workdir: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("OSMOSIS_")} | {
        "OSMOSIS_WARM": "0"
    }
    base["OSMOSIS_CONFIG_DIR"] = str(workdir / "cfg")
    return subprocess.run(
        [*osmosis_command(), *args],
        cwd=workdir,
        env={**base, **(env or {})},
        capture_output=True,
        text=True,
        timeout=120,
    )


def calls(stub: StubOpenAI) -> list[dict]:  # type: ignore[type-arg]
    """The model calls of the rollouts (the endpoint probe left out)."""
    probe = [{"role": "user", "content": "ping"}]
    return [r for r in stub.state.requests if r["messages"] != probe]


def eval_args(stub: StubOpenAI, *extra: str) -> list[str]:
    return [
        "eval",
        "-m",
        "server:agent_loop",
        "-d",
        "test_data.jsonl",
        "--eval-fn",
        "rewards:compute_reward",
        "--model",
        "calc-model",
        "--base-url",
        stub.url,
        *extra,
    ]


def test_documented_command_scores_every_row_with_two_fns_and_n3(
    workdir: Path, model: StubOpenAI
) -> None:
    result = osmosis(
        workdir,
        *eval_args(
            model,
            "--eval-fn",
            "rewards:used_a_tool",
            "--n",
            "3",
            "--batch-size",
            "4",
            "--json",
            "-o",
            "out.json",
        ),
    )
    assert result.returncode == 0, result.stderr
    doc = envelopes.resource(result.stdout)
    summary = doc["summary"]
    assert (summary["total_rows"], summary["total_runs"], summary["errored_runs"]) == (12, 36, 0)
    for fn in ("rewards:compute_reward", "rewards:used_a_tool"):
        stats = summary["eval_fns"][fn]
        assert stats["mean"] == 1.0 and stats["pass_at_1"] == 1.0 and stats["pass_at_3"] == 1.0
    run = doc["rows"][0]["runs"][0]
    assert [m["role"] for m in run["messages"]] == [
        "system",
        "user",
        "assistant",
        "tool",
        "assistant",
    ]
    assert run["answer"] == ROWS[0]["ground_truth"]
    # every model call carries the loop's tools, without null fields
    assert len(calls(model)) == 72
    tools = calls(model)[0]["tools"]
    assert [t["function"]["name"] for t in tools] == ["add", "subtract", "multiply", "divide"]
    assert "null" not in json.dumps(tools)
    assert doc["config"]["rollout_mode"] == "agent-loop"
    assert "compatibility layer" in result.stderr


def test_request_mapping_flags_and_completion_params(workdir: Path, model: StubOpenAI) -> None:
    (workdir / "probe.py").write_text(
        "import json\n"
        "from osmosis_ai.rollout import RolloutAgentLoop\n"
        "class Probe(RolloutAgentLoop):\n"
        "    name = 'probe'\n"
        "    def get_tools(self, request):\n"
        "        return []\n"
        "    async def run(self, ctx):\n"
        "        r = ctx.request\n"
        "        reply = await ctx.chat(r.messages, seed=7)\n"
        "        seen = dict(id=r.rollout_id, turns=r.max_turns, total=r.max_tokens_total,\n"
        "                    params=r.completion_params, meta=r.metadata)\n"
        "        return ctx.complete([*r.messages, reply.message, {'role': 'assistant',\n"
        "                             'content': json.dumps(seen)}])\n"
        "agent_loop = Probe\n"  # a class: it is instantiated
    )
    (workdir / "fns.py").write_text(
        "def seen(solution_str, ground_truth, **kwargs):\n    return 1.0\n"
    )
    result = osmosis(
        workdir,
        "eval",
        "-m",
        "probe:agent_loop",
        "-d",
        "test_data.jsonl",
        "--eval-fn",
        "fns:seen",
        "--model",
        "calc-model",
        "--base-url",
        model.url,
        "--offset",
        "5",
        "--limit",
        "2",
        "--max-turns",
        "4",
        "--temperature",
        "0.3",
        "--max-tokens",
        "50",
        "--n",
        "2",
        "--json",
        "-o",
        "o.json",
    )
    assert result.returncode == 0, result.stderr
    doc = envelopes.resource(result.stdout)
    assert [row["row_index"] for row in doc["rows"]] == [5, 6]  # indices stay absolute
    seen = json.loads(doc["rows"][0]["runs"][1]["answer"])
    assert seen["id"] == "eval-5-run-1" and seen["turns"] == 4 and seen["total"] == 4096
    assert seen["params"] == {"temperature": 0.3, "max_tokens": 50}
    meta = seen["meta"]
    assert meta["ground_truth"] == ROWS[5]["ground_truth"] and meta["difficulty"] == "easy"
    assert (meta["row_index"], meta["run_index"], meta["execution_mode"]) == (5, 1, "eval")
    for request in calls(model):
        assert (request["temperature"], request["max_tokens"], request["seed"]) == (0.3, 50, 7)
        assert "tools" not in request  # the loop offered none


def test_baseline_model_adds_model_summaries(workdir: Path, model: StubOpenAI) -> None:
    result = osmosis(
        workdir,
        *eval_args(
            model,
            "--baseline-model",
            "mock/tool-calculator",
            "--limit",
            "3",
            "--json",
            "-o",
            "b.json",
        ),
    )
    assert result.returncode == 0, result.stderr
    doc = envelopes.resource(result.stdout)
    summaries = {s["model_tag"]: s for s in doc["model_summaries"]}
    assert summaries["primary"]["model"] == "calc-model"
    assert summaries["baseline"]["model"] == "mock/tool-calculator"
    for s in summaries.values():
        assert s["total_runs"] == 3 and s["eval_fns"]["rewards:compute_reward"]["mean"] == 1.0
        assert s["total_tokens"] > 0 and s["total_duration_ms"] >= 0
    # as 0.2: counts over both models, statistics the run's own, runs tagged "primary"
    assert doc["summary"]["total_runs"] == 6 and doc["summary"]["stopped_early"] is False
    assert doc["summary"]["total_tokens"] == sum(s["total_tokens"] for s in summaries.values())
    tags = [run.get("model_tag") for row in doc["rows"] for run in row["runs"]]
    assert tags.count("baseline") == 3 and tags.count("primary") == 3
    assert len(calls(model)) == 6  # the baseline ran offline


def test_debug_traces_and_api_key_flag(workdir: Path, model: StubOpenAI) -> None:
    model.state.required_key = "sk-visible-in-argv"
    result = osmosis(
        workdir,
        *eval_args(
            model, "--limit", "2", "--debug", "--api-key", "sk-visible-in-argv", "-o", "d.json"
        ),
    )
    assert result.returncode == 0, result.stderr
    assert "prefer --api-key-env" in result.stderr
    assert "sk-visible-in-argv" not in result.stderr + result.stdout
    events = [
        json.loads(line)
        for line in (workdir / "local_debug" / "eval-0-run-0.jsonl").read_text().splitlines()
    ]
    assert events[0] == {
        "event": "model_turn",
        "rollout_id": "eval-0-run-0",
        "turn": 0,
        "tool_calls": 1,
    }
    assert (workdir / "local_debug" / "eval-1-run-0.jsonl").exists()


def test_loop_errors_fail_only_their_attempts(workdir: Path, model: StubOpenAI) -> None:
    (workdir / "flaky.py").write_text(
        "from osmosis_ai.rollout import RolloutAgentLoop\n"
        "class Flaky(RolloutAgentLoop):\n"
        "    name = 'flaky'\n"
        "    def get_tools(self, request):\n"
        "        return []\n"
        "    async def run(self, ctx):\n"
        "        row = ctx.request.metadata['row_index']\n"
        "        if row == 1:\n"
        "            raise ValueError('row one is cursed')\n"
        "        if row == 2:\n"
        "            return ctx.error('gave up', [*ctx.request.messages])\n"
        "        reply = await ctx.chat(ctx.request.messages)\n"
        "        return ctx.complete([*ctx.request.messages, reply.message])\n"
        "agent_loop = Flaky()\n"
    )
    result = osmosis(
        workdir,
        "eval",
        "-m",
        "flaky:agent_loop",
        "-d",
        "test_data.jsonl",
        "--eval-fn",
        "rewards:compute_reward",
        "--model",
        "mock/calculator",
        "--limit",
        "4",
        "--json",
        "-o",
        "f.json",
    )
    assert result.returncode == 0, result.stderr
    runs = {row["row_index"]: row["runs"][0] for row in envelopes.resource(result.stdout)["rows"]}
    assert (
        runs[1]["success"] is False
        and runs[1]["error"] == "agent loop: ValueError: row one is cursed"
    )
    assert runs[2]["success"] is False and runs[2]["error"] == "agent loop: gave up"
    assert runs[0]["success"] and runs[3]["success"]


def test_without_the_layer_the_import_fails_clearly(workdir: Path, model: StubOpenAI) -> None:
    result = osmosis(workdir, *eval_args(model, "--no-compat", "--limit", "1"))
    assert result.returncode == 2
    assert "No module named 'osmosis_ai'" in result.stderr
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr


def test_validate_reports_and_exits(workdir: Path) -> None:
    ok = osmosis(workdir, "validate", "-m", "server:agent_loop")
    assert ok.returncode == 0, ok.stderr
    assert "Agent loop 'calculator' (CalculatorAgentLoop): valid" in ok.stdout
    assert "tools (4): add, subtract, multiply, divide" in ok.stdout
    (workdir / "bad.py").write_text(
        "from osmosis_ai.rollout import RolloutAgentLoop\n"
        "class Bad(RolloutAgentLoop):\n"
        "    name = 'bad'\n"
        "    def get_tools(self, request):\n"
        "        return [{'type': 'function', 'function': {'name': 'x'}}, {'type': 'nope'}]\n"
        "    def run(self, ctx):  # not async\n"
        "        return None\n"
        "agent_loop = Bad()\n"
    )
    bad = osmosis(workdir, "validate", "-m", "bad:agent_loop")
    assert bad.returncode == 1
    assert "INVALID" in bad.stdout and "run() must be `async def run(self, ctx)`" in bad.stdout
    assert "tool x: no description" in bad.stdout and "tool 1:" in bad.stdout
    missing = osmosis(workdir, "validate", "-m", "server:nothing")
    assert missing.returncode == 2 and "has no attribute 'nothing'" in missing.stderr
