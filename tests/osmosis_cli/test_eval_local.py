"""eval run / the seed form through the CLI: documents, exit codes, one-line errors."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import pytest

from tests.osmosis_cli.conftest import Invoke

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "quickstart"


SEED = [
    "eval",
    "-m",
    "rollouts/calculator/main.py:CalculatorWorkflow",
    "-d",
    "data/arithmetic.jsonl",
    "--model",
    "mock/calculator",
    "--eval-fn",
    "rollouts/calculator/rewards.py:exact_number",
]


@pytest.fixture
def quickstart(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    project = tmp_path / "quickstart"
    shutil.copytree(EXAMPLE, project, ignore=shutil.ignore_patterns(".osmosis"))
    monkeypatch.chdir(project)
    return project


def test_eval_run_quickstart_json(invoke: Invoke, quickstart: Path) -> None:
    result = invoke("eval", "run", "configs/eval/quickstart.toml", "--json", "-o", "out.json")
    assert result.exit_code == 0, result.stderr
    doc = result.resource()
    written = json.loads((quickstart / "out.json").read_text())
    assert {key: doc[key] for key in written} == written  # the document, inside the envelope
    assert doc["output_path"] == "out.json" and doc["total_work_items"] == 60
    assert doc["config"]["model"] == "mock/flaky-calculator"
    assert doc["config"]["eval_fns"] == ["grader"]
    assert doc["summary"]["total_rows"] == 20 and doc["summary"]["total_runs"] == 60
    stats = doc["summary"]["eval_fns"]["grader"]
    assert set(stats) == {
        "mean",
        "std",
        "min",
        "max",
        "pass_at_1",
        "pass_at_3",
        "stderr",
        "ci_low",
        "ci_high",
        "clusters",
        "ci_pass_at_k",
        "variance",
    }
    assert stats["ci_low"] < stats["mean"] < stats["ci_high"]  # every score with its interval
    assert 0.5 < stats["pass_at_1"] < 0.95 < stats["pass_at_3"]


def test_eval_run_human_summary_and_default_output(invoke: Invoke, quickstart: Path) -> None:
    result = invoke("eval", "run", "configs/eval/quickstart.toml", "--limit", "4", "--n", "1")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.splitlines()[0].startswith("EVAL FN\tMEAN")
    assert "4 rows, 4 attempts (0 errored)" in result.stdout
    (run,) = [p for p in (quickstart / ".osmosis" / "evals").iterdir() if p.name != ".locks"]
    assert re.fullmatch(r"[a-z]+-[a-z]+-\d{1,2}", run.name)  # a generated run name
    assert f"Results written to .osmosis/evals/{run.name}/results.json" in result.stderr
    assert f"Upload: osmosis eval upload {run.name}" in result.stderr  # the published next step
    published = {"manifest.json", "index.jsonl", "summary.jsonl", "events.jsonl"}
    assert published | {"progress.json", "metrics.json", "logs.txt"} <= set(os.listdir(run))


def test_flags_override_toml(invoke: Invoke, quickstart: Path) -> None:
    doc = invoke(
        "eval",
        "run",
        "configs/eval/quickstart.toml",
        "--json",
        "-q",
        "--limit",
        "2",
        "--n",
        "2",
        "--batch-size",
        "1",
        "--pass-threshold",
        "0.5",
        "--model",
        "mock/calculator",
    ).resource()
    assert doc["config"]["model"] == "mock/calculator"
    assert (
        doc["config"]["n_runs"],
        doc["config"]["batch_size"],
        doc["config"]["pass_threshold"],
    ) == (2, 1, 0.5)
    assert doc["summary"]["eval_fns"]["grader"]["mean"] == 1.0


def test_no_limit_samples_ten_percent_with_seed(invoke: Invoke, quickstart: Path) -> None:
    config = quickstart / "configs" / "eval" / "quickstart.toml"
    config.write_text(config.read_text().replace("limit = 20\n", ""))
    a = invoke("eval", "run", str(config), "--json", "--seed", "1", "-o", "a.json").resource()
    b = invoke("eval", "run", str(config), "--json", "--seed", "1", "-o", "b.json").resource()
    assert [r["row_index"] for r in a["rows"]] == [r["row_index"] for r in b["rows"]]
    assert a["summary"]["total_rows"] == 5 and a["config"]["seed"] == 1


def test_seed_form(invoke: Invoke, quickstart: Path) -> None:
    result = invoke(
        *SEED,
        "--eval-fn",
        "rollouts/calculator/rewards.py:brevity",
        "--n",
        "2",
        "--batch-size",
        "8",
        "--limit",
        "5",
        "--json",
        "-o",
        "seed.json",
    )
    assert result.exit_code == 0, result.stderr
    doc = result.resource()
    assert list(doc["summary"]["eval_fns"]) == [
        "rollouts/calculator/rewards.py:exact_number",
        "rollouts/calculator/rewards.py:brevity",
    ]
    assert doc["summary"]["total_runs"] == 10
    assert doc["config"]["limit"] == 5


def test_seed_form_baseline_key_flags_as_in_0_2(invoke: Invoke, quickstart: Path) -> None:
    alone = invoke(*SEED, "--baseline-api-key", "sk-base-123456", "-o", "x.json")
    assert alone.exit_code == 2 and "--baseline-api-key needs --baseline-model" in alone.stderr
    doc = invoke(
        *SEED,
        "--baseline-model",
        "mock/calculator",
        "--baseline-api-key",
        "sk-base-123456",
        "--limit",
        "2",
        "--json",
        "-q",
        "-o",
        "b.json",
    )
    assert doc.exit_code == 0, doc.stderr
    assert "prefer --baseline-api-key-env" in doc.stderr
    assert "sk-base-123456" not in doc.stdout + doc.stderr
    assert doc.resource()["config"]["baseline_model"] == "mock/calculator"


def test_seed_form_baseline_prints_one_summary_per_model(invoke: Invoke, quickstart: Path) -> None:
    result = invoke(*SEED, "--baseline-model", "mock/echo", "--limit", "2", "-o", "m.json")
    assert result.exit_code == 0, result.stderr
    text = result.stdout
    primary, baseline = text.index("(primary)"), text.index("mock/echo (baseline)")
    assert primary < baseline  # the run's model first, then the baseline, each with a table
    assert text.count("EVAL FN") == 2
    assert "4 attempts" in text  # the closing line counts both models
    # issue 34: the line naming the baseline carries its own results (echo scores 0)
    line = next(x for x in text.splitlines() if x.startswith("mock/echo (baseline)"))
    assert "mean 0" in line and "pass@1 0" in line


def test_seed_form_evaluates_every_row_without_limit(invoke: Invoke, quickstart: Path) -> None:
    doc = invoke(*SEED, "--json", "-q", "-o", "all.json").resource()
    assert doc["summary"]["total_rows"] == 50


BAD = [
    (["-m", "rollouts/calculator/main.py:Nope"], 2, "has no attribute 'Nope'"),
    (["--eval-fn", "rollouts/calculator/main.py:NumberMatch"], 2, "is a class"),
    (["--eval-fn", "rollouts/calculator/main.py:re"], 2, "is not a function"),
    (["-d", "missing.jsonl"], 2, "does not exist"),
    (["--model", "openai/gpt-5-mini"], 2, "OPENAI_API_KEY is not set"),
    (
        ["--model", "served", "--base-url", "http://127.0.0.1:9/v1"],
        1,
        "refused the connection (nothing listens on that port)",
    ),
    (["--model", "mock/unknown"], 2, "unknown mock model"),
    (
        ["--api-key-env", "sk-123", "--base-url", "http://x/v1", "--model", "m"],
        2,
        "must name an environment variable",
    ),
]


@pytest.mark.parametrize(("override", "code", "fragment"), BAD)
def test_bad_seed_form_inputs_exit_with_one_line(
    invoke: Invoke,
    quickstart: Path,
    monkeypatch: pytest.MonkeyPatch,
    override: list[str],
    code: int,
    fragment: str,
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    args = {
        "-m": "rollouts/calculator/main.py:CalculatorWorkflow",
        "-d": "data/arithmetic.jsonl",
        "--model": "mock/calculator",
        "--eval-fn": "rollouts/calculator/rewards.py:exact_number",
    }
    extra: list[str] = []
    for i in range(0, len(override), 2):
        if override[i] in args:
            args[override[i]] = override[i + 1]
        else:
            extra += override[i : i + 2]
    flat = [x for kv in args.items() for x in kv] + extra
    result = invoke("eval", *flat, "-o", "bad.json")
    assert result.exit_code == code, result.stderr
    assert fragment in result.stderr
    errors = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1 and result.stderr.splitlines()[-1] == errors[0]
    assert "Traceback" not in result.stderr
    assert not (quickstart / "bad.json").exists()
    assert not (quickstart / "bad.json.journal.jsonl").exists()


def test_bad_dataset_row_reported_before_any_model_call(invoke: Invoke, quickstart: Path) -> None:
    data = quickstart / "data" / "arithmetic.jsonl"
    lines = data.read_text().splitlines()
    lines[6] = '{"user_prompt": 5}'
    data.write_text("\n".join(lines) + "\n")
    result = invoke("eval", "run", "configs/eval/quickstart.toml", "-o", "x.json")
    assert result.exit_code == 2
    assert "data/arithmetic.jsonl:7: user_prompt must be a non-empty string" in result.stderr
    assert not (quickstart / "x.json").exists()


def test_missing_seed_form_flags(invoke: Invoke, quickstart: Path) -> None:
    result = invoke("eval", "--model", "mock/echo")
    assert result.exit_code == 2
    assert "missing -m, -d, --eval-fn" in result.stderr


def test_resume_needs_output(invoke: Invoke, quickstart: Path) -> None:
    result = invoke("eval", "run", "configs/eval/quickstart.toml", "--resume")
    assert result.exit_code == 2 and "-o" in result.stderr


def test_docs_seed_form_unchanged_against_an_openai_compatible_server(
    invoke: Invoke, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The command from the Osmosis docs, with dotted modules, against a loopback server."""
    from tests.stub_openai import StubOpenAI

    monkeypatch.chdir(tmp_path)
    (tmp_path / "server.py").write_text(
        "from osmosis_client.rollout import AgentWorkflow\n"
        "class Loop(AgentWorkflow):\n"
        "    async def run(self, ctx):\n"
        "        await ctx.chat(ctx.prompt, max_tokens=16)\n"
        "agent_loop = Loop()\n"
    )
    (tmp_path / "rewards.py").write_text(
        "def compute_reward(solution_str, ground_truth, extra_info=None, **kwargs):\n"
        "    return 1.0 if solution_str.strip() == ground_truth.strip() else 0.0\n"
    )
    (tmp_path / "test_data.jsonl").write_text(
        "".join(
            json.dumps(
                {
                    "system_prompt": "Answer with a number.",
                    "user_prompt": f"{i} * 3",
                    "ground_truth": str(i * 3),
                }
            )
            + "\n"
            for i in range(6)
        )
    )
    with StubOpenAI() as stub:
        result = invoke(
            "eval",
            "-m",
            "server:agent_loop",
            "-d",
            "test_data.jsonl",
            "--eval-fn",
            "rewards:compute_reward",
            "--model",
            "my-served-model",
            "--base-url",
            stub.url,
            "--n",
            "2",
            "--batch-size",
            "4",
            "--json",
            "-q",
            "-o",
            "results.json",
        )
        bodies = list(stub.state.requests)
        headers = list(stub.state.headers)
    assert result.exit_code == 0, result.stderr
    doc = result.resource()
    assert doc["summary"]["eval_fns"]["rewards:compute_reward"]["mean"] == 1.0
    assert doc["summary"]["total_runs"] == 12 and doc["summary"]["total_tokens"] == 120
    chat = [b for b in bodies if b["messages"][-1]["content"] != "ping"]
    assert len(chat) == 12
    assert chat[0]["model"] == "my-served-model" and chat[0]["max_tokens"] == 16
    assert chat[0]["messages"][0] == {"role": "system", "content": "Answer with a number."}
    assert all("Authorization" not in h for h in headers)
