"""What a user notices at the terminal: readable help, usage errors, verdicts, hints."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from osmosis_cli.main import command
from osmosis_cli.terminal.hints import hint_for
from osmosis_client.errors import (
    MissingAPIKeyError,
    NotAuthenticatedError,
    OsmosisError,
    ProviderRequestError,
)
from tests.osmosis_cli.conftest import Invoke

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "quickstart"


def command_paths() -> list[list[str]]:
    paths: list[list[str]] = []

    def walk(command: Any, prefix: list[str]) -> None:
        paths.append(prefix)
        for name, sub in getattr(command, "commands", {}).items():
            walk(sub, [*prefix, name])

    walk(command(), [])
    return paths


@pytest.mark.parametrize("path", command_paths(), ids=lambda p: " ".join(p) or "osmosis")
def test_every_help_page_has_readable_metavars(invoke: Invoke, path: list[str]) -> None:
    result = invoke(*path, "--help")
    assert result.exit_code == 0, result.stderr
    text = result.stdout
    assert not re.search(r"<[a-z][a-z \[\]]*>", text), text  # e.g. <int range>, <list[str]>
    usage = text.splitlines()[0]
    assert "{" not in usage and "}" not in usage, usage


def test_usage_error_with_json_prints_the_error_document(invoke: Invoke) -> None:
    result = invoke("eval", "run", "x.toml", "--json", "--bogus")
    assert result.exit_code == 2 and result.stdout == ""
    error = result.error()
    assert error["code"] == "VALIDATION" and "--bogus" in error["message"]
    assert error["reason"] == "USAGE"
    assert error["hint"] == "see `osmosis eval run --help`"
    human = invoke("eval", "run", "x.toml", "--bogus")
    assert human.stderr.startswith("error: ") and human.stderr.count("\n") == 1


def test_flags_before_a_subcommand_are_an_error(invoke: Invoke) -> None:
    result = invoke("eval", "--limit", "2", "run", "configs/eval/x.toml")
    assert result.exit_code == 2
    assert "options before the subcommand 'run'" in result.stderr
    seed_with_sub = invoke("eval", "-m", "x:y", "run", "c.toml")
    assert seed_with_sub.exit_code == 2 and "'run'" in seed_with_sub.stderr


def test_global_platform_url_is_read_before_the_command(invoke: Invoke) -> None:
    result = invoke("--platform-url", "http://evil.example", "whoami")
    assert result.exit_code == 2 and "refusing plain http" in result.stderr
    assert invoke("--platform-url").exit_code == 2


@pytest.fixture
def quickstart(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    project = tmp_path / "quickstart"
    shutil.copytree(EXAMPLE, project, ignore=shutil.ignore_patterns(".osmosis"))
    monkeypatch.chdir(project)
    return project


def write_rollout(project: Path, body: str) -> None:
    (project / "rollouts" / "calculator" / "main.py").write_text(
        "from osmosis_client.rollout import AgentWorkflow, Grader\n" + body
    )


def test_a_run_where_every_attempt_errored_exits_1(invoke: Invoke, quickstart: Path) -> None:
    write_rollout(
        quickstart,
        "class W(AgentWorkflow):\n    async def run(self, ctx):\n        raise RuntimeError('x')\n"
        "class G(Grader):\n    async def grade(self, ctx):\n        return 1.0\n",
    )
    result = invoke("eval", "run", "configs/eval/quickstart.toml", "--json", "-o", "r.json")
    assert result.exit_code == 1
    doc = result.resource()  # the verdict still comes with its document
    assert doc["summary"]["errored_runs"] == doc["summary"]["total_runs"] == 60
    assert "every attempt errored (60 of 60)" in result.stderr


def test_max_error_rate_fails_above_the_fraction(invoke: Invoke, quickstart: Path) -> None:
    write_rollout(
        quickstart,
        "class W(AgentWorkflow):\n    async def run(self, ctx):\n"
        "        if ctx.row_index % 4 == 0:\n            raise RuntimeError('x')\n"
        "        return [*ctx.prompt, await ctx.chat(ctx.prompt)]\n"
        "class G(Grader):\n    async def grade(self, ctx):\n        return 1.0\n",
    )
    args = ["eval", "run", "configs/eval/quickstart.toml", "-q"]
    ok = invoke(*args, "-o", "a.json", "--max-error-rate", "0.3")
    assert ok.exit_code == 0, ok.stderr  # 25 % errored
    bad = invoke(*args, "-o", "b.json", "--max-error-rate", "0.2")
    assert bad.exit_code == 1 and "above the maximum error rate 0.2" in bad.stderr
    assert invoke(*args, "-o", "c.json").exit_code == 0  # without the flag: only "all" fails


def test_sampling_is_said_on_the_first_line(invoke: Invoke, quickstart: Path) -> None:
    config = quickstart / "configs" / "eval" / "quickstart.toml"
    config.write_text(config.read_text().replace("limit = 20\n", ""))
    result = invoke("eval", "run", str(config), "-q", "-o", "s.json")
    assert result.exit_code == 0, result.stderr
    first = result.stderr.splitlines()[0]
    assert first == "sampling 5 of 50 rows (10%, seed 0) — set limit (or --limit) to change"


def test_rollout_discovery_hint_names_the_attribute_the_loader_reads(
    invoke: Invoke, quickstart: Path
) -> None:
    write_rollout(
        quickstart, "class G(Grader):\n    async def grade(self, ctx):\n        return 1\n"
    )
    result = invoke("eval", "run", "configs/eval/quickstart.toml")
    assert result.exit_code == 2
    assert "defines no AgentWorkflow subclass" in result.stderr
    assert "`workflow = …`" in result.stderr and "agentworkflow" not in result.stderr


@pytest.mark.parametrize(
    ("error", "command", "expected"),
    [
        (
            MissingAPIKeyError("x", data={"env_var": "OPENAI_API_KEY"}),
            "osmosis eval run",
            "export OPENAI_API_KEY=… (or name another variable with --api-key-env)",
        ),
        (
            NotAuthenticatedError("x", data={"workspace": "acme"}),
            "osmosis whoami",
            "run `osmosis login --workspace acme` (see `osmosis workspace list`)",
        ),
        (NotAuthenticatedError("x"), "osmosis whoami", "run `osmosis login`, or set OSMOSIS_TOKEN"),
        (
            ProviderRequestError("x", code="PROVIDER_AUTH", data={"key_env": None}),
            "osmosis eval run",
            "pass --api-key-env NAME",
        ),
        (
            OsmosisError("x", code="TIMEOUT", data={"maybe_created": True}),
            "osmosis eval submit",
            "the run may have been created — check `osmosis eval list` before resubmitting",
        ),
        (OsmosisError("x", code="RUBRIC_CONFIG_NOT_FOUND"), "osmosis preview", "check --path"),
        (
            OsmosisError("x", code="RUBRIC_CONFIG_NOT_FOUND"),
            "osmosis eval-rubric",
            "pass --config PATH",
        ),
        (OsmosisError("x", hint="sdk hint", code="SOMETHING_ELSE"), "osmosis", "sdk hint"),
    ],
)
def test_cli_turns_error_data_into_flag_level_hints(
    error: OsmosisError, command: str, expected: str
) -> None:
    assert hint_for(error, command) == expected


def test_sdk_hints_never_name_cli_flags_or_commands() -> None:
    root = Path(__file__).resolve().parents[2]
    offenders = []
    for folder in ("osmosis_client", "local_runner"):
        for path in (root / folder).rglob("*.py"):
            for number, line in enumerate(path.read_text().splitlines(), 1):
                if "hint=" in line and re.search(r"--[a-z]|`osmosis |docs/", line):
                    offenders.append(f"{path.relative_to(root)}:{number}: {line.strip()}")
    assert offenders == []


def test_hidden_arguments_stay_out_of_usage_lines(invoke: Invoke) -> None:
    seed = invoke("eval", "seed", "--help")
    assert seed.exit_code == 0
    assert seed.stdout.splitlines()[0].rstrip() == "Usage: osmosis eval seed [OPTIONS]"
    run = invoke("eval", "run", "--help")
    assert run.stdout.splitlines()[0].rstrip() == "Usage: osmosis eval run [OPTIONS] CONFIG"


def test_a_run_where_no_attempt_got_a_score_exits_1(invoke: Invoke, quickstart: Path) -> None:
    (quickstart / "scorer.py").write_text(
        "from osmosis_client.rollout import AgentWorkflow\n"
        "class W(AgentWorkflow):\n    async def run(self, ctx):\n"
        "        return [*ctx.prompt, await ctx.chat(ctx.prompt)]\n"
        "def broken(solution_str, ground_truth, extra_info=None):\n    raise ValueError('bug')\n"
    )
    result = invoke(
        "eval",
        "-m",
        "scorer:W",
        "-d",
        "data/arithmetic.jsonl",
        "--model",
        "mock/calculator",
        "--eval-fn",
        "scorer:broken",
        "--limit",
        "4",
        "-o",
        "r.json",
        "--json",
    )
    assert result.exit_code == 1, result.stderr
    summary = result.resource()["summary"]
    assert summary["errored_runs"] == 0 and summary["unscored_runs"] == 4
    assert "no attempt got a score: 0 errored and every eval fn raised on the other 4" in (
        result.stderr
    )


def test_a_terminal_run_ends_with_its_worst_rows_expected_beside_got(
    invoke: Invoke, quickstart: Path
) -> None:
    result = invoke("eval", "run", "configs/eval/quickstart.toml", "-o", "r.json")
    assert result.exit_code == 0, result.stderr
    doc = json.loads((quickstart / "r.json").read_text())
    failing = [
        row for row in doc["rows"] if sum(r["scores"]["grader"] >= 1 for r in row["runs"]) * 2 <= 3
    ]
    assert failing  # mock/flaky-calculator misses some
    out = result.stdout
    assert f"{len(failing)} of 20 rows failed (grader), worst first:" in out
    row = failing[0]
    assert f"FAILED row {row['row_index']}" in out
    assert f"  prompt:   {row['prompt']}" in out
    assert f"  expected: {row['expected']}" in out
    wrong = next(r["answer"] for r in row["runs"] if r["scores"]["grader"] < 1)
    assert f"  answer:   {wrong}" in out.split(f"FAILED row {row['row_index']}")[1]
    assert out.index("rows failed") > out.index("grader\t")  # after the summary table


def test_the_retry_command_is_this_command_again_with_no_secret(
    invoke: Invoke, quickstart: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_rollout(
        quickstart,
        "class W(AgentWorkflow):\n    async def run(self, ctx):\n"
        "        if ctx.row_index == 3 and __import__('os').path.exists('down'):\n"
        "            raise RuntimeError('boom')\n"
        "        return [*ctx.prompt, await ctx.chat(ctx.prompt)]\n"
        "class G(Grader):\n    async def grade(self, ctx):\n        return 1.0\n",
    )
    (quickstart / "down").write_text("")
    result = invoke("eval", "run", "configs/eval/quickstart.toml", "-o", "r.json")
    assert result.exit_code == 0, result.stderr
    line = next(x for x in result.stderr.splitlines() if "errored attempts again" in x)
    command = line.split(": ", 1)[1]
    assert command == "osmosis eval run configs/eval/quickstart.toml -o r.json --retry-failed"
    # issue 34: each error once, beside its row (it was listed again after, out of order)
    assert (result.stdout + result.stderr).count("RuntimeError: boom") == 1
    assert "ERROR  row 3" in result.stdout and "Errors (" not in result.stderr
    rows = next(x for x in result.stderr.splitlines() if "did not pass again" in x)
    assert rows.endswith("osmosis eval run configs/eval/quickstart.toml --rows=3")
    (quickstart / "down").unlink()  # the outage is over; the code is the same
    again = invoke(*command.split()[1:])
    assert again.exit_code == 0, again.stderr
    assert json.loads((quickstart / "r.json").read_text())["summary"]["errored_runs"] == 0


def test_v_shows_more_rows_and_vv_every_model_call(
    invoke: Invoke, quickstart_project: Path
) -> None:
    """Issue 34: -v printed a line per model call (42 lines for 30 rows); those are -vv's."""
    from tests.stub_openai import StubOpenAI

    run = [
        "eval",
        "run",
        "configs/eval/quickstart.toml",
        "--model",
        "m",
        "--limit",
        "3",
        "--n",
        "1",
    ]
    with StubOpenAI() as stub:
        flags = ["--base-url", stub.url]
        once = invoke("-v", *run, *flags, "-o", "a.json")
        twice = invoke(*run, *flags, "-o", "b.json", "-vv")
    assert once.exit_code in (0, 1) and twice.exit_code in (0, 1), once.stderr + twice.stderr
    assert "/chat/completions -> " not in once.stderr
    calls = [line for line in twice.stderr.splitlines() if "/chat/completions -> 200" in line]
    assert len(calls) >= 3  # each attempt


def test_the_seed_form_prints_the_rows_rerun_and_a_ci_log_gets_each_error_whole(
    invoke: Invoke, quickstart: Path
) -> None:
    """Issue 43: the re-run command for rows that did not pass was printed for ``eval
    run`` only; an error was cut to 100 characters even in a CI log (no terminal)."""
    long_error = "the tool server said: " + "x" * 300 + " (end of the message)"
    (quickstart / "boom.py").write_text(
        "from osmosis_client.rollout import AgentWorkflow\n"
        "class W(AgentWorkflow):\n"
        "    async def run(self, ctx):\n"
        "        if ctx.row_index == 1:\n"
        f"            raise RuntimeError({long_error!r})\n"
        "        return [*ctx.prompt, await ctx.chat(ctx.prompt)]\n"
    )
    result = invoke(
        "eval",
        "-m",
        "boom:W",
        "-d",
        "data/arithmetic.jsonl",
        "--model",
        "mock/calculator",
        "--eval-fn",
        "rollouts/calculator/rewards.py:exact_number",
        "--limit",
        "3",
    )
    assert result.exit_code == 0, result.stderr
    assert long_error in result.stdout  # whole: stdout is not a terminal here
    again = next(x for x in result.stderr.splitlines() if "did not pass again" in x)
    assert again.endswith("--rows=1") and again.split(": ", 1)[1].startswith(
        "osmosis eval -m boom:W"
    )
    rerun = invoke(*again.split(": ", 1)[1].split()[1:])
    assert "1 rows × 1 = 1 attempts" in rerun.stderr  # just the row (it still raises)
    assert rerun.exit_code == 1 and "every attempt errored (1 of 1)" in rerun.stderr
