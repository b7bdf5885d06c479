"""Hostile input never loses, clobbers or leaks anything (issue 13): one test (or more)
per item, numbered as in the issue; docs/reliability.md lists them.

Runs in-process (the CLI through its entry point, the runner directly); the items that
need real processes — concurrency, fd-level writes, kills — are in
tests/e2e/test_hostile_processes.py.
"""

from __future__ import annotations

import asyncio
import json
import math
import os
import shutil
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
import respx

from osmosis_client import Client
from osmosis_client.errors import APITimeoutError, OsmosisError, ProtocolError
from osmosis_client.llm.providers import resolve_target
from osmosis_client.platform import _answers
from osmosis_client.platform.login.credentials import CredentialStore
from osmosis_client.platform.settings import is_loopback_host
from osmosis_client.rollout import GraderContext
from osmosis_local_runner.run.execute.dataset import Dataset
from osmosis_local_runner.run.execute.eval_fns import EvalFn
from osmosis_local_runner.run.execute.runner import Runner
from osmosis_local_runner.run.session import journal as journal_module
from osmosis_local_runner.run.session.journal import journal_path
from tests.conftest import PLATFORM
from tests.osmosis_cli.conftest import Invoke
from tests.osmosis_local_runner.test_runner import Calc, make_spec
from tests.stub_openai import StubOpenAI

QUICKSTART = Path(__file__).resolve().parents[2] / "examples" / "quickstart"
RUN = ["eval", "run", "configs/eval/quickstart.toml"]


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "qs"
    shutil.copytree(QUICKSTART, root, ignore=shutil.ignore_patterns(".osmosis"))
    monkeypatch.chdir(root)
    monkeypatch.setattr(sys, "path", list(sys.path))
    return root


def rollout(project: Path, source: str) -> None:
    """Replace the quickstart rollout with ``source`` (a fresh module name each time)."""
    (project / "rollouts" / "calculator" / "main.py").write_text(source)


def runs_of(doc: dict[str, Any]) -> dict[int, dict[str, Any]]:
    return {row["row_index"]: row["runs"][0] for row in doc["rows"]}


# ----------------------------------------------------------------- 1. duplicate rows


def test_01_duplicate_rows_are_distinct_attempts_across_resume(tmp_path: Path) -> None:
    data = tmp_path / "dup.jsonl"
    data.write_text((json.dumps({"user_prompt": "What is 2 + 2?", "ground_truth": "4"}) + "\n") * 6)
    spec = make_spec(tmp_path, Calc(), data=data, n=2, batch_size=1)
    runner = Runner(spec)

    def stop_at_five(progress: Any) -> None:
        if progress.done == 5:
            runner.interrupt()

    runner.on_progress = stop_at_five
    first = asyncio.run(runner.run())
    assert first.summary["status"] == "stopped"
    resumed = asyncio.run(Runner(make_spec(tmp_path, Calc(), data=data, n=2, resume=True)).run())
    keys = [
        (row["row_index"], r["run_index"]) for row in resumed.document["rows"] for r in row["runs"]
    ]
    assert sorted(keys) == [(i, k) for i in range(6) for k in range(2)]


# ----------------------------------------------------------------- 2. -o never clobbers


@pytest.mark.parametrize(
    ("target", "message"),
    [
        ("data/arithmetic.jsonl", "is a file, not the directory runs are kept in"),
        ("configs/eval/quickstart.toml", "is a file, not the directory runs are kept in"),
        ("rollouts/calculator/main.py", "is a file, not the directory runs are kept in"),
        ("rollouts/calculator", "is inside the rollout"),
        ("notes.json", "exists and is not an osmosis results document"),
        ("a-folder.json", "is a directory"),
    ],
)
def test_02_results_path_never_overwrites_anything_but_our_results(
    invoke: Invoke, project: Path, target: str, message: str
) -> None:
    (project / "notes.json").write_text('{"mine": true}\n')
    (project / "a-folder.json").mkdir()
    before = {p: p.read_bytes() for p in project.rglob("*") if p.is_file()}
    result = invoke(*RUN, "--limit", "2", "-o", target)
    assert result.exit_code == 2
    assert message in result.stderr and "(-o PATH)" in result.stderr
    assert {p: p.read_bytes() for p in project.rglob("*") if p.is_file()} == before


def test_02_our_own_results_document_may_be_replaced(invoke: Invoke, project: Path) -> None:
    assert invoke(*RUN, "--limit", "1", "-o", "r.json").exit_code == 0
    (project / "r.json.journal.jsonl").unlink()
    assert invoke(*RUN, "--limit", "2", "-o", "r.json").exit_code == 0


# ----------------------------------------------------------------- 3. default names


def test_03_default_names_never_collide(monkeypatch: pytest.MonkeyPatch, project: Path) -> None:
    from osmosis_local_runner.run.session.session import unnamed_results

    monkeypatch.setattr("secrets.token_hex", lambda n: "abcd")
    first = unnamed_results("quickstart")
    first.parent.mkdir(parents=True)
    first.write_text("{}")
    second = unnamed_results("quickstart")
    assert second != first and not second.exists()


# ----------------------------------------------------------------- 4. journal failure


def test_04_a_journal_write_failure_stops_the_run_and_keeps_what_was_written(
    invoke: Invoke, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_write = os.write
    calls = {"n": 0}

    def failing_write(fd: int, data: bytes) -> int:
        if b'"row_index"' in data:
            calls["n"] += 1
            if calls["n"] > 2:
                raise OSError(28, "No space left on device")
        return real_write(fd, data)

    monkeypatch.setattr(journal_module.os, "write", failing_write)
    result = invoke(*RUN, "--limit", "8", "--batch-size", "1", "-o", "r.json")
    assert result.exit_code == 1
    assert "cannot write the journal (No space left on device); the run stopped" in result.stderr
    assert "resume with --resume -o r.json" in result.stderr
    kept = (project / "r.json.journal.jsonl").read_text().splitlines()[1:]
    assert len(kept) >= 2 and all(json.loads(line) for line in kept)
    monkeypatch.setattr(journal_module.os, "write", real_write)
    resumed = invoke(*RUN, "--limit", "8", "--batch-size", "1", "-o", "r.json", "--resume")
    assert resumed.exit_code == 0
    assert json.loads((project / "r.json").read_text())["summary"]["total_runs"] == 24


# ----------------------------------------------------------------- 5. exits in user code

ESCAPES = """
import asyncio, os, sys
from osmosis_client.rollout import AgentWorkflow, Grader

class W(AgentWorkflow):
    async def run(self, ctx):
        kind = ctx.row_index
        if kind == 0:
            sys.exit(3)
        if kind == 1:
            os._exit(0)
        if kind == 2:
            raise KeyboardInterrupt
        if kind == 3:
            raise GeneratorExit
        if kind == 4:
            raise asyncio.CancelledError
        return [*ctx.prompt, await ctx.chat(ctx.prompt)]

class G(Grader):
    def grade(self, ctx):
        if ctx.row_index == 5:
            os._exit(1)
        return 1.0
"""


def test_05_exits_and_interrupts_in_user_code_fail_one_attempt(
    invoke: Invoke, project: Path
) -> None:
    rollout(project, ESCAPES)
    result = invoke(*RUN, "--limit", "7", "--n", "1", "-o", "r.json", "--json")
    assert result.exit_code == 0, result.stderr
    runs = runs_of(result.resource())
    assert runs[0]["error"] == "workflow: UserCodeError: called sys.exit(3)"
    assert runs[1]["error"] == "workflow: UserCodeError: called os._exit(0)"
    assert runs[2]["error"] == "workflow: UserCodeError: raised KeyboardInterrupt"
    assert runs[3]["error"] == "workflow: UserCodeError: raised GeneratorExit"
    assert runs[4]["error"] == "workflow: UserCodeError: raised CancelledError"
    assert runs[5]["error"] == "grader: UserCodeError: called os._exit(1)"
    assert runs[6]["success"]


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("import sys\nsys.exit(0)\n", "it called sys.exit(0) at import"),
        ("import os\nos._exit(0)\n", "UserCodeError: called os._exit(0)"),
        ("raise KeyboardInterrupt\n", "KeyboardInterrupt: raised at import"),
        ("raise SystemExit('bye')\n", "it called sys.exit('bye') at import"),
    ],
)
def test_05_exits_at_import_are_one_exit_2_line(
    invoke: Invoke, project: Path, source: str, message: str
) -> None:
    rollout(project, source)
    result = invoke(*RUN, "--limit", "1", "-o", "r.json")
    assert result.exit_code == 2
    (line,) = result.stderr.splitlines()
    assert line.startswith("error: cannot import") and message in line


# ----------------------------------------------------------------- 6. hangs

BLOCKING = """
import time
from osmosis_client.rollout import AgentWorkflow, Grader

class W(AgentWorkflow):
    async def run(self, ctx):
        if ctx.row_index == 0:
            time.sleep(60)  # blocks the event loop
        return [*ctx.prompt, await ctx.chat(ctx.prompt)]

class G(Grader):
    def grade(self, ctx):
        if ctx.row_index == 1:
            while True:  # a sync grader that never returns
                time.sleep(0.05)
        return 1.0
"""


def test_06_code_that_blocks_or_never_returns_times_out(invoke: Invoke, project: Path) -> None:
    rollout(project, BLOCKING)
    toml = project / "configs" / "eval" / "quickstart.toml"
    text = toml.read_text().replace("agent_workflow_timeout_s = 60", "agent_workflow_timeout_s = 1")
    toml.write_text(text.replace("grader_timeout_s = 10", "grader_timeout_s = 1"))
    started = time.monotonic()
    result = invoke(*RUN, "--limit", "4", "--n", "1", "-o", "r.json", "--json")
    assert time.monotonic() - started < 20
    assert result.exit_code == 0, result.stderr
    runs = runs_of(result.resource())
    assert runs[0]["error"].startswith("workflow timed out after 1s: blocked the event loop")
    assert runs[1]["error"] == "grader timed out after 1s"
    assert runs[2]["success"] and runs[3]["success"]


def test_06_an_overall_deadline_stops_the_run_resumably(invoke: Invoke, project: Path) -> None:
    result = invoke(
        *RUN,
        "--model",
        "mock/calculator@300",
        "--limit",
        "20",
        "--batch-size",
        "2",
        "--deadline",
        "0.5",
        "-o",
        "r.json",
    )
    assert result.exit_code == 1
    assert "the run reached its deadline of 0.5s" in result.stderr
    assert "resume with --resume -o r.json" in result.stderr
    doc = json.loads((project / "r.json").read_text())
    assert doc["summary"]["status"] == "stopped" and 0 < doc["summary"]["total_runs"] < 60


# ----------------------------------------------------------------- 7. huge scores


def test_07_huge_finite_scores_keep_statistics_finite_and_json_strict(tmp_path: Path) -> None:
    async def extreme(ctx: GraderContext) -> float:
        return 1e308 if ctx.row_index % 2 else -1e308

    spec = make_spec(tmp_path, Calc(), eval_fns=[EvalFn("grader", extreme, "grader", True)], n=3)
    result = asyncio.run(Runner(spec).run())
    stats = result.summary["eval_fns"]["grader"]
    assert all(math.isfinite(stats[k]) for k in ("mean", "std", "min", "max"))
    json.loads(result.output.read_text(), parse_constant=lambda c: pytest.fail(c))


# ----------------------------------------------------------------- 8. unbounded memory


@pytest.mark.parametrize(
    ("flag", "value", "message"),
    [
        ("--batch-size", "100000000", "batch_size 100000000 is outside 1..4,096"),
        ("--n", "5000", "n 5000 is outside 1..1,000"),
    ],
)
def test_08_batch_size_and_n_are_capped(
    invoke: Invoke, project: Path, flag: str, value: str, message: str
) -> None:
    result = invoke(*RUN, flag, value, "-o", "r.json")
    assert result.exit_code == 2 and message in result.stderr


def test_08_an_oversized_model_answer_fails_that_attempt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from osmosis_client.llm import answers as llm_answers

    monkeypatch.setattr(llm_answers, "MAX_RESPONSE_BYTES", 200)
    with StubOpenAI() as stub:
        stub.state.replies.extend(["x" * 1000] * 3)
        spec = make_spec(tmp_path, Calc(), limit=3, probe=False)
        spec.model = resolve_target("stub", base_url=stub.url, env={})
        result = asyncio.run(Runner(spec).run())
    errors = [e for _, _, e in result.errors()]
    assert errors and all("sent more than 0 MiB for one answer" in e for e in errors)


def test_08_platform_answers_are_capped_in_size_and_total_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_answers, "MAX_BODY_BYTES", 1000)
    with respx.mock(base_url=PLATFORM) as router:
        router.get("/api/cli/workspaces").respond(200, json={"workspaces": [{"x": "y" * 5000}]})
        with Client(token="t", base_url=PLATFORM) as client, pytest.raises(ProtocolError):
            client.workspaces.list()
    clock = iter(range(0, 10_000, 50))  # every read of the clock: 50 s later

    class Trickle(httpx.SyncByteStream):
        def __iter__(self) -> Any:
            yield from (b'{"work', b'spaces"', b": []}")

    def trickle() -> httpx.Response:
        return httpx.Response(200, stream=Trickle())

    with respx.mock(base_url=PLATFORM) as router:
        router.get("/api/cli/workspaces").mock(side_effect=lambda request: trickle())
        client = Client(token="t", base_url=PLATFORM, max_retries=0, sleep=lambda s: None)
        client._transport.monotonic = lambda: float(next(clock))
        with pytest.raises(APITimeoutError):
            client.workspaces.list()
        client.close()


# ----------------------------------------------------------------- 9. userinfo


def test_09_a_password_in_the_base_url_is_written_nowhere(invoke: Invoke, project: Path) -> None:
    with StubOpenAI() as stub:
        url = stub.url.replace("http://", "http://ada:hunter2pass@")
        result = invoke(*RUN, "--model", "m", "--base-url", url, "--limit", "2", "-o", "r.json")
    assert result.exit_code == 0, result.stderr
    assert "hunter2pass" not in result.stderr + result.stdout
    assert "http://***@127.0.0.1" in result.stderr
    for path in (project / "r.json", project / "r.json.journal.jsonl"):
        assert "hunter2pass" not in path.read_text()
        assert path.stat().st_mode & 0o777 == 0o600


@pytest.mark.parametrize(
    "url", ["https://ada:hunter2pass@platform.test", "ftp://ada:hunter2pass@platform.test:99999"]
)
def test_09_a_password_in_the_platform_url_is_refused_without_echoing_it(
    invoke: Invoke, url: str
) -> None:
    result = invoke("--platform-url", url, "whoami")
    assert result.exit_code == 2
    assert "hunter2pass" not in result.stderr + result.stdout


# ----------------------------------------------------------------- 10. config dir modes


def test_10_an_existing_config_dir_keeps_its_mode_and_a_readable_token_file_is_reported(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from tests.osmosis_client.platform.test_credentials import login

    shared = tmp_path / "shared-config"
    shared.mkdir(mode=0o755)
    os.chmod(shared, 0o755)
    link = tmp_path / "link"
    link.symlink_to(shared)
    store = CredentialStore(env={"OSMOSIS_TOKEN_STORE": "file", "OSMOSIS_CONFIG_DIR": str(link)})
    login(store)
    assert shared.stat().st_mode & 0o777 == 0o755  # the user's directory: untouched
    assert (shared / "secrets").stat().st_mode & 0o777 == 0o700  # ours: private
    tokens = shared / "secrets" / "tokens.json"
    os.chmod(tokens, 0o644)
    store.resolve("https://platform.test")
    assert "readable by others (mode 644): chmod 600 it" in caplog.text
    assert tokens.stat().st_mode & 0o777 == 0o644  # reported, not changed


# ----------------------------------------------------------------- 11. print() and --json

PRINTING = """
from osmosis_client.rollout import AgentWorkflow, Grader
print("import-time chatter")

class W(AgentWorkflow):
    async def run(self, ctx):
        print("workflow chatter", ctx.row_index)
        return [*ctx.prompt, await ctx.chat(ctx.prompt)]

class G(Grader):
    def grade(self, ctx):
        print("grader chatter")
        return 1.0
"""


def test_11_user_code_printing_never_corrupts_json_stdout(invoke: Invoke, project: Path) -> None:
    rollout(project, PRINTING)
    result = invoke(*RUN, "--limit", "2", "-o", "r.json", "--json")
    assert result.exit_code == 0
    assert result.resource()["summary"]["total_rows"] == 2  # stdout: exactly the document
    assert "import-time chatter" in result.stderr and "grader chatter" in result.stderr


# ----------------------------------------------------------------- 12. thresholds


@pytest.mark.parametrize("value", ["nan", "inf", "-inf"])
def test_12_non_finite_pass_thresholds_exit_2(invoke: Invoke, project: Path, value: str) -> None:
    result = invoke(*RUN, "--limit", "1", "--pass-threshold", value, "-o", "r.json")
    assert result.exit_code == 2
    assert "pass_threshold must be a finite number" in result.stderr
    assert not (project / "r.json.journal.jsonl").exists()


# ----------------------------------------------------------------- 13. resume fingerprint


@pytest.mark.parametrize(
    ("change", "difference"),
    [
        ("source", "rollout"),
        ("sampling", "sampling"),
    ],
)
def test_13_resume_refuses_changed_sources_and_sampling(
    invoke: Invoke, project: Path, change: str, difference: str
) -> None:
    assert invoke(*RUN, "--limit", "2", "-o", "r.json", "--deadline", "100").exit_code == 0
    (project / "r.json").unlink()
    if change == "source":
        main = project / "rollouts" / "calculator" / "main.py"
        main.write_text(main.read_text() + "\n# edited\n")
    else:
        toml = project / "configs" / "eval" / "quickstart.toml"
        toml.write_text(toml.read_text() + "\n[local.sampling]\ntemperature = 0.9\n")
    result = invoke(*RUN, "--limit", "2", "-o", "r.json", "--resume")
    assert result.exit_code == 2
    assert "cannot resume: the run changed" in result.stderr and difference in result.stderr


def test_13_resume_refuses_a_changed_eval_fn(invoke: Invoke, project: Path) -> None:
    seed = [
        "eval",
        "-m",
        "rollouts/calculator/main.py:CalculatorWorkflow",
        "-d",
        "data/arithmetic.jsonl",
        "--model",
        "mock/calculator",
        "--eval-fn",
        "rollouts/calculator/rewards.py:exact_number",
        "--limit",
        "2",
        "-o",
        "s.json",
    ]
    assert invoke(*seed).exit_code == 0
    rewards = project / "rollouts" / "calculator" / "rewards.py"
    rewards.write_text(rewards.read_text() + "\n# edited\n")
    result = invoke(*seed, "--resume")
    assert result.exit_code == 2 and "eval_fn_sources" in result.stderr


# ----------------------------------------------------------------- 14. internal errors


def test_14_inputs_that_used_to_be_tracebacks_are_one_line(
    invoke: Invoke, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    deep = '{"user_prompt": "x", "m": ' + "[" * 100_000 + "]" * 100_000 + "}\n"
    (project / "data" / "deep.jsonl").write_text(deep)
    (project / "data" / "bad.parquet").write_bytes(b"PAR1" + b"junk" * 100)
    cases = [
        ((*RUN, "--dataset", "data/deep.jsonl", "-o", "a.json"), "more than 64 levels deep", 2),
        ((*RUN, "--dataset", "data/bad.parquet", "-o", "b.json"), "not a readable parquet", 2),
        ((*RUN, "--limit", "1", "-o", "data.json"), "is a directory", 2),
    ]
    (project / "data.json").mkdir()
    if Path("/proc/self").is_dir():  # a directory nothing can be created in, even by root
        cases.append(((*RUN, "--limit", "1", "-o", "/proc/r.json"), "cannot create", 2))
        cases.append(((*RUN, "--limit", "1", "-o", "/proc/runs"), "cannot create", 2))
    for args, message, code in cases:
        result = invoke(*args)
        assert result.exit_code == code, (args, result.stderr)
        assert message in result.stderr and "Traceback" not in result.stderr
    monkeypatch.setenv("OSMOSIS_WORKSPACE", "acme")
    monkeypatch.setenv("OSMOSIS_TOKEN", "tökën")
    result = invoke("eval", "list")
    assert result.exit_code == 2
    assert result.stderr.startswith("error: the token contains characters it can never have")
    monkeypatch.setenv("OSMOSIS_TOKEN", "fine-token")
    result = invoke("eval", "info", "r" * 100_000)
    assert result.exit_code == 2 and "is not a name or id (100,000 characters" in result.stderr
    result = invoke("--platform-url", "http://[::1", "whoami")
    assert result.exit_code == 2 and "invalid platform URL" in result.stderr


def test_14_a_credentials_file_with_wrong_types_is_moved_aside(
    invoke: Invoke, isolated_env: Path
) -> None:
    isolated_env.mkdir(parents=True, exist_ok=True)
    bad = {"version": 1, "platforms": {PLATFORM: {"workspaces": ["not", "a", "table"]}}}
    (isolated_env / "credentials.json").write_text(json.dumps(bad))
    result = invoke("whoami")
    assert result.exit_code == 3  # not logged in: the file was not trusted
    assert "credentials file had an unknown format; moved it to credentials.json.corrupt-" in (
        result.stderr
    )
    assert "Traceback" not in result.stderr


# ----------------------------------------------------------------- 16. terminal escapes


def test_16_server_text_cannot_drive_the_terminal(
    invoke: Invoke, router: respx.MockRouter, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OSMOSIS_TOKEN", "t")
    monkeypatch.setenv("OSMOSIS_WORKSPACE", "acme")
    osc52 = "\x1b]52;c;ZXZpbA==\x07"
    router.get("/api/cli/eval-runs").respond(
        409, json={"code": "BOOM", "message": f"bad {osc52}thing \x1b[2J"}
    )
    result = invoke("eval", "list")
    assert result.exit_code == 1
    assert "\x1b" not in result.stderr and "\x07" not in result.stderr
    assert "bad thing" in result.stderr


# ----------------------------------------------------------------- 17. -v


def test_17_verbose_shows_debug_lines_and_tracebacks_without_secrets(
    invoke: Invoke, router: respx.MockRouter, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OSMOSIS_TOKEN", "tok-very-secret")
    monkeypatch.setenv("OSMOSIS_WORKSPACE", "acme")
    router.get("/api/cli/eval-runs").respond(401, json={"code": "TOKEN_INVALID"})
    quiet = invoke("eval", "list")
    loud = invoke("-v", "eval", "list")
    assert quiet.exit_code == loud.exit_code == 3
    assert "debug:" not in quiet.stderr and "Traceback" not in quiet.stderr
    assert f"debug: GET {PLATFORM}/api/cli/eval-runs -> 401" in loud.stderr
    assert "Traceback (most recent call last)" in loud.stderr
    assert "tok-very-secret" not in loud.stderr


# ----------------------------------------------------------------- 18. fn_errors


def test_18_one_eval_fns_exception_never_leaks_into_anothers_statistics(tmp_path: Path) -> None:
    def flaky(solution_str: str, ground_truth: str, extra_info: Any = None) -> float:
        if extra_info["i"] % 3 == 0:
            raise ValueError("flaky fails")
        return 1.0

    def steady(solution_str: str, ground_truth: str, extra_info: Any = None) -> float:
        return 1.0

    fns = [EvalFn("flaky", flaky, "simple", False), EvalFn("steady", steady, "simple", False)]
    spec = make_spec(tmp_path, Calc(), eval_fns=fns, n=1)
    result = asyncio.run(Runner(spec).run())
    steady_stats = result.summary["eval_fns"]["steady"]
    assert steady_stats["mean"] == steady_stats["pass_at_1"] == 1.0
    flaky_stats = result.summary["eval_fns"]["flaky"]
    assert flaky_stats["mean"] == flaky_stats["pass_at_1"] == pytest.approx(0.6)
    assert result.summary["errored_runs"] == 0


# ----------------------------------------------------------------- 19. minor


def test_19_a_torn_journal_tail_is_cut_before_resuming(tmp_path: Path) -> None:
    spec = make_spec(tmp_path, Calc(), limit=4)
    asyncio.run(Runner(spec).run())
    path = journal_path(spec.output)
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[:3]) + lines[3][:20])  # header, 2 records, a torn third
    spec.output.unlink()
    resumed = asyncio.run(Runner(make_spec(tmp_path, Calc(), limit=4, resume=True)).run())
    assert resumed.summary["total_runs"] == 4
    for line in path.read_text().splitlines():
        json.loads(line)  # no torn text glued to the next record


def test_19_stale_temp_files_are_cleaned_and_fresh_ones_kept(tmp_path: Path) -> None:
    from osmosis_client._fs import atomic_write

    target = tmp_path / "results.json"
    stale = tmp_path / ".results.json.abc123.tmp"
    fresh = tmp_path / ".results.json.def456.tmp"
    stale.write_text("left by a kill")
    fresh.write_text("a write in progress")
    os.utime(stale, (time.time() - 3600, time.time() - 3600))
    atomic_write(target, b"{}")
    assert not stale.exists() and fresh.exists() and target.read_bytes() == b"{}"


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("localhost", True),
        ("127.0.0.1", True),
        ("127.8.9.10", True),
        ("[::1]", True),
        ("evil.localhost", False),
        ("localhost.evil.com", False),
        ("10.0.0.1", False),
    ],
)
def test_19_only_real_loopback_hosts_may_use_plain_http(host: str, loopback: bool) -> None:
    assert is_loopback_host(host) is loopback


# ----------------------------------------------------------------- datasets


def test_datasets_label_alias_metadata_merge_and_bom(tmp_path: Path) -> None:
    csv_path = tmp_path / "rows.csv"
    csv_path.write_bytes('\ufeffuser_prompt,label,metadata\nWhat?,42,"{""k"": 1}"\n'.encode())
    (row,) = Dataset(csv_path).rows()
    assert row.prompt()[-1]["content"] == "What?"
    assert row.ground_truth == "42" and row.metadata["k"] == 1


@pytest.mark.parametrize(
    ("name", "content", "problem"),
    [
        ("q.csv", 'user_prompt,ground_truth\n"What is 1+1?,2\nWhat is 2+2?,4\n', ":2: invalid CSV"),
        ("deep.json", '[{"user_prompt": "x", "m": ' + "[" * 70 + "]" * 70 + "}]", ":1: the row"),
    ],
)
def test_datasets_unterminated_quotes_and_deep_rows_are_located(
    tmp_path: Path, name: str, content: str, problem: str
) -> None:
    path = tmp_path / name
    path.write_text(content)
    with pytest.raises(OsmosisError) as caught:
        Dataset(path).validate()
    assert any(problem in str(p) for p in caught.value.problems)  # type: ignore[attr-defined]


def test_09_printed_commands_mask_url_passwords_keys_and_header_values(
    invoke: Invoke, project: Path
) -> None:
    """Issue 33: the password reached stdout in --json's resume_command."""
    with StubOpenAI() as stub:
        url = stub.url.replace("http://", "http://ada:hunter2pass@")
        result = invoke(
            "--json",
            *RUN,
            "--model",
            "m",
            "--base-url",
            url,
            "--limit",
            "2",
            "-o",
            "r.json",
            "--header",
            "X-Gateway: gw-secret-value",
        )
    assert result.exit_code == 0, result.stderr
    assert "hunter2pass" not in result.stdout + result.stderr
    assert "gw-secret-value" not in result.stdout + result.stderr
    resource = result.json()["resource"]
    for key in ("resume_command", "retry_command"):
        assert "http://***@127.0.0.1" in resource[key] and "X-Gateway: <VALUE>" in resource[key]
    from osmosis_cli.commands.eval.local.failures import command_line

    assert command_line(
        ["eval", "--api-key=sk-1", "--base-url=https://u:p@h/v1"], [], "--resume"
    ) == ("osmosis eval '--api-key=<KEY>' '--base-url=https://***@h/v1' --resume")
