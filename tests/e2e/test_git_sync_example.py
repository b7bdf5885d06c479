"""Everything in a repository shaped like osmosis-git-sync-example runs unchanged with
osmosis-client installed and no osmosis-ai: `osmosis eval --mcp`, `osmosis test --mcp`
(and `-i`), the rubric script and its shell script — against loopback model and judge
stubs (`OPENAI_BASE_URL`, as the OpenAI SDK reads it).

The expected wire shapes (tool schemas, tool messages) are rollout-protocol.md C's
observations of 0.2.17; the published 0.2.17 itself is not on this package index (only
0.2.25+ and 0.3.x are), so it cannot be run beside us here.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import osmosis_command
from tests.stub_openai import StubOpenAI

pytestmark = pytest.mark.slow
with warnings.catch_warnings(record=True):  # authlib's notice at fastmcp's import
    pytest.importorskip("fastmcp", reason="the [mcp] extra (fastmcp) is not installed")

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "git_sync_example"
KEY = "sk-fixture-0123456789"
EVAL = [
    "eval",
    "--mcp",
    "./mcp",
    "-d",
    "test_data.jsonl",
    "--eval-fn",
    "reward_fn.compute_reward:numbers_match_reward",
    "--model",
    "gpt-5-mini",
]


def multiply_model(body: dict[str, Any]) -> dict[str, Any]:
    """Calls `multiply` for "What is A times B?", then answers `#### <tool result>`;
    a judge request (no tools) gets a score."""
    messages = body["messages"]
    if not body.get("tools"):
        return {"role": "assistant", "content": json.dumps({"score": 1, "explanation": "ok"})}
    if messages[-1].get("role") == "tool":
        return {"role": "assistant", "content": f"#### {messages[-1]['content']}"}
    user = next(m for m in reversed(messages) if m["role"] == "user")
    numbers = re.findall(r"-?\d+(?:\.\d+)?", str(user["content"]))
    args = {"first_val": float(numbers[0]), "second_val": float(numbers[1])}
    call = {"id": "call_1", "type": "function"}
    call["function"] = {"name": "multiply", "arguments": json.dumps(args)}
    return {"role": "assistant", "content": None, "tool_calls": [call]}


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    folder = tmp_path / "osmosis-git-sync-example"
    shutil.copytree(FIXTURE, folder, ignore=shutil.ignore_patterns("__pycache__"))
    return folder


@pytest.fixture
def stub() -> Iterator[StubOpenAI]:
    with StubOpenAI() as model:
        model.state.responder = multiply_model
        yield model


def run(
    repo: Path, stub: StubOpenAI, *args: str, input: str | None = None
) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OSMOSIS_", "OPENAI_"))} | {
        "OSMOSIS_WARM": "0"
    }
    env.update(
        OSMOSIS_CONFIG_DIR=str(repo.parent / "cfg"),
        OPENAI_BASE_URL=stub.url,
        OPENAI_API_KEY=KEY,
        # an activated environment: the scripts' `python3` is the one osmosis-client is in
        PATH=f"{Path(osmosis_command()[0]).parent}{os.pathsep}{os.environ.get('PATH', '')}",
    )
    command = list(args) if args[0] in ("python", "bash") else [*osmosis_command(), *args]
    if command[0] == "python":
        command[0] = str(Path(osmosis_command()[0]).parent / "python")
    return subprocess.run(
        command, cwd=repo, env=env, input=input, capture_output=True, text=True, timeout=120
    )


def rollout_calls(stub: StubOpenAI) -> list[dict[str, Any]]:
    return [r for r in stub.state.requests if r.get("tools")]


def test_eval_mcp_scores_every_row_with_0_2s_tools_and_messages(
    repo: Path, stub: StubOpenAI
) -> None:
    result = run(repo, stub, *EVAL, "--json", "-o", "out.json")
    assert result.returncode == 0, result.stderr
    assert "Warning" not in result.stderr  # fastmcp's dependencies' notices stay hidden
    doc = json.loads((repo / "out.json").read_text())
    stats = doc["summary"]["eval_fns"]["reward_fn.compute_reward:numbers_match_reward"]
    assert stats["mean"] == 1.0 and doc["summary"]["total_runs"] == 5
    first = rollout_calls(stub)[0]
    tools = {t["function"]["name"]: t for t in first["tools"]}
    assert sorted(tools) == ["cluster_analysis", "multiply", "return_true"]
    assert tools["multiply"] == {
        "type": "function",
        "function": {
            "name": "multiply",
            "description": "Multiply two numbers.\n\nArgs:\n    first_val: the first number\n"
            "    second_val: the second number",
            "parameters": {
                "type": "object",
                "properties": {"first_val": {"type": "number"}, "second_val": {"type": "number"}},
                "required": ["first_val", "second_val"],
            },
            "strict": False,
        },
    }
    cluster = tools["cluster_analysis"]["function"]["parameters"]["properties"]
    assert cluster == {
        "data": {"type": "array"},
        "clusters": {"type": "number", "description": "how many clusters"},
        "method": {"type": "string", "enum": ["kmeans", "median"]},
    }
    second = rollout_calls(stub)[1]["messages"]
    assert second[:2] == [
        {
            "role": "system",
            "content": json.loads((repo / "test_data.jsonl").read_text().splitlines()[0])[
                "system_prompt"
            ],
        },
        {"role": "user", "content": "What is 12 times 8?"},
    ]
    assert second[-1] == {"role": "tool", "content": "96.0", "tool_call_id": "call_1"}
    runs = doc["rows"][0]["runs"][0]
    assert runs["answer"] == "#### 96.0" and runs["finish_reason"] == "stop"


def test_osmosis_test_mcp_writes_0_2s_document(repo: Path, stub: StubOpenAI) -> None:
    result = run(
        repo,
        stub,
        "test",
        "--mcp",
        "./mcp",
        "-d",
        "test_data.jsonl",
        "--limit",
        "2",
        "-o",
        "results/t.json",
    )
    assert result.returncode == 0, result.stderr
    assert "Discovered 3 tool(s): multiply, return_true, cluster_analysis" in result.stderr
    assert "Total rows: 5 (testing 2)" in result.stderr
    assert "[2/2] Row 1: OK" in result.stdout and "Passed: 2" in result.stdout
    doc = json.loads((repo / "results" / "t.json").read_text())
    assert doc["summary"]["total"] == 2 and doc["summary"]["failed"] == 0
    row = doc["results"][0]
    assert set(row) == {
        "row_index",
        "success",
        "error",
        "duration_ms",
        "token_usage",
        "reward",
        "finish_reason",
    }
    assert row["token_usage"]["num_llm_calls"] == 2 and row["reward"] is None
    assert row["finish_reason"] == "stop"


def test_osmosis_test_stops_on_a_systemic_error(repo: Path, stub: StubOpenAI) -> None:
    stub.state.fail_after = (3, 401)  # the preflight and the first row's two calls
    result = run(repo, stub, "test", "--mcp", "./mcp", "-d", "test_data.jsonl", "-o", "t.json")
    assert result.returncode == 1
    assert "Stopped early due to systemic provider error" in result.stdout
    doc = json.loads((repo / "t.json").read_text())
    assert [r["success"] for r in doc["results"]] == [True, False]  # the rest never ran
    assert doc["results"][1]["token_usage"] == {"total_tokens": 0}
    assert KEY not in result.stdout + result.stderr


def test_osmosis_test_interactive_steps_through_a_row(repo: Path, stub: StubOpenAI) -> None:
    keys = "\n".join(["", "m", "t", "zz", "", "m", "", "q"]) + "\n"
    result = run(
        repo,
        stub,
        "test",
        "--mcp",
        "./mcp",
        "-d",
        "test_data.jsonl",
        "-i",
        "--row",
        "2",
        input=keys,
    )
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "osmosis-client" in result.stderr and "(Interactive Mode)" in result.stderr
    for expected in (
        " Row 2 ",
        "[User] What is 2.5 times 4?",
        "  • multiply",
        "    Parameters: first_val, second_val",
        " Turn 1: LLM Response ",
        "  • multiply({",
        "All Messages",
        "Unknown command: zz",
        "[Tool (multiply)] 10.0",
        "[Assistant] #### 10.0",
        "Finish reason: stop",
        "Status: COMPLETED",
        "Tokens: 20 (2 LLM calls)",
        "Interactive session ended.",
    ):
        assert expected in out, expected
    assert not list(repo.glob("*.json"))  # -i writes nothing


def test_interactive_quit_aborts_the_row_and_bad_choices_are_explained(
    repo: Path, stub: StubOpenAI
) -> None:
    keys = "\n".join(["x", "99", "0", "q", "", "q"]) + "\n"
    result = run(repo, stub, "test", "--mcp", "./mcp", "-d", "test_data.jsonl", "-i", input=keys)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "Please enter a valid row number or 'q' to quit." in out
    assert "Invalid row index. Valid range: 0-4" in out
    assert "Aborting execution..." in out
    assert "Status: ERROR" in out and "Error: Aborted by user" in out


def test_rubric_script_and_shell_script_run_without_osmosis_ai(
    repo: Path, stub: StubOpenAI
) -> None:
    direct = run(repo, stub, "python", "reward_rubric/reward_rubric_openai.py")
    assert direct.returncode == 0, direct.stderr
    assert "OpenAI GPT score: 1.00 (range 0.0-1.0)" in direct.stdout
    shell = run(repo, stub, "bash", "scripts/run_reward_rubric_openai.sh")
    assert shell.returncode == 0, shell.stderr
    assert "OpenAI GPT score: 1.00" in shell.stdout
    judge = [r for r in stub.state.requests if not r.get("tools")]
    assert len(judge) == 2 and judge[0]["model"] == "gpt-5-mini"
    assert stub.state.headers[0]["Authorization"] == f"Bearer {KEY}"
    assert '"context": "example test"' in judge[0]["messages"][-1]["content"]


def test_mcp_directory_problems_are_one_line_each(repo: Path, stub: StubOpenAI) -> None:
    (repo / "empty").mkdir()
    missing = run(repo, stub, *EVAL[:2], "./empty", *EVAL[3:])
    assert missing.returncode == 2
    assert "No main.py found in MCP directory" in missing.stderr
    assert "Traceback" not in missing.stderr
    (repo / "empty" / "main.py").write_text("x = 1\n")
    none = run(repo, stub, "test", "--mcp", "./empty", "-d", "test_data.jsonl")
    assert none.returncode == 2 and "No FastMCP instance found in" in none.stderr
    (repo / "empty" / "main.py").write_text("import sys\nsys.exit(3)\n")
    exits = run(repo, stub, "test", "--mcp", "./empty", "-d", "test_data.jsonl")
    assert exits.returncode == 2 and "sys.exit(3)" in exits.stderr
    both = run(repo, stub, "test", "--mcp", "./mcp", "-m", "x:y", "-d", "test_data.jsonl")
    assert both.returncode == 2 and "--module and --mcp are mutually exclusive." in both.stderr


def stuck_multiply(repo: Path) -> None:
    """The tool becomes synchronous code that never returns."""
    math = repo / "mcp" / "tools" / "math.py"
    text = math.read_text().replace(
        "    return round(first_val * second_val, 4)",
        "    import threading\n    threading.Event().wait()\n    return 0.0",
    )
    math.write_text(text)


def test_a_stuck_sync_tool_never_keeps_eval_alive(repo: Path, stub: StubOpenAI) -> None:
    """Issue 33: the deadline fired and results were written, then the process never
    exited (the tool's worker thread was joined at shutdown)."""
    stuck_multiply(repo)
    result = run(repo, stub, *EVAL, "-o", "out.json", "--deadline", "3")  # bounded: 120 s
    assert result.returncode == 1, result.stderr
    assert "deadline" in result.stderr
    doc = json.loads((repo / "out.json").read_text())
    assert doc["summary"]["status"] == "stopped"


def test_a_stuck_sync_tool_never_keeps_test_alive_after_ctrl_c(
    repo: Path, stub: StubOpenAI
) -> None:
    import signal
    import time

    stuck_multiply(repo)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OSMOSIS_", "OPENAI_"))}
    env |= {
        "OSMOSIS_WARM": "0",
        "OSMOSIS_CONFIG_DIR": str(repo.parent / "cfg"),
        "OPENAI_BASE_URL": stub.url,
        "OPENAI_API_KEY": KEY,
    }
    proc = subprocess.Popen(
        [*osmosis_command(), "test", "--mcp", "./mcp", "-d", "test_data.jsonl", "-o", "t.json"],
        cwd=repo,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while not rollout_calls(stub):  # the model answers the first one with a tool call
            assert time.monotonic() < deadline, "the run never reached the tool"
            time.sleep(0.05)
        time.sleep(0.5)  # short: the call reaches the stuck tool's thread
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)  # it would hang for ever
    finally:
        proc.kill()
    assert proc.returncode in (1, 130), err
    assert "Traceback" not in err


def test_osmosis_json_test_is_one_document_on_stdout(repo: Path, stub: StubOpenAI) -> None:
    """Issue 33: `osmosis --json test` always ended in an internal error with nothing on
    stdout; with -i it printed the row prompt on stdout."""
    result = run(
        repo,
        stub,
        "--json",
        "test",
        "--mcp",
        "./mcp",
        "-d",
        "test_data.jsonl",
        "--limit",
        "2",
        "-o",
        "t.json",
    )
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)  # one document, nothing else
    assert (document["operation"], document["status"]) == ("test", "success")
    assert document["resource"]["summary"]["passed"] == 2
    assert document["resource"]["output_path"] == "t.json"
    stub.state.fail_after = (len(stub.state.requests) + 3, 401)  # row 2 fails
    failed = run(repo, stub, "--json", "test", "--mcp", "./mcp", "-d", "test_data.jsonl")
    assert failed.returncode == 1
    assert json.loads(failed.stdout)["status"] == "failed", (failed.stdout, failed.stderr)
    interactive = run(
        repo, stub, "--json", "test", "--mcp", "./mcp", "-d", "test_data.jsonl", "-i", input="\n"
    )
    assert interactive.returncode == 2 and interactive.stdout == ""
    error = json.loads(interactive.stderr.strip().splitlines()[-1])["error"]
    assert "no --json form" in error["message"]
