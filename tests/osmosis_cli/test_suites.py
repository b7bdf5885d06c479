"""Suites through the CLI: the bundled example, --dry-run, --json documents, resume
without redoing finished entries, --parallel sharing one in-flight cap, hosted submits."""

from __future__ import annotations

import json
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import httpx
import pytest
import respx

from tests.gitrepo import git, make_project
from tests.osmosis_cli.conftest import Invoke
from tests.osmosis_client.platform.test_eval_runs import CREATED, detail
from tests.stub_openai import StubOpenAI

QUICKSTART = Path(__file__).resolve().parents[2] / "examples" / "quickstart"
SUITE = "configs/eval/suite.toml"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "qs"
    shutil.copytree(QUICKSTART, root, ignore=shutil.ignore_patterns(".osmosis"))
    monkeypatch.chdir(root)
    return root


def test_the_example_suite_runs_offline_and_compares(invoke: Invoke, project: Path) -> None:
    result = invoke("eval", "run", SUITE, "-o", "out")
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].split("\t")[:4] == ["ENTRY", "MODEL", "MEAN", "PASS@1"]
    means = [float(line.split("\t")[2]) for line in lines[1:]]
    assert means == sorted(means, reverse=True) and lines[1].startswith("exact\t")
    document = json.loads((project / "out" / "suite.json").read_text())
    assert document["status"] == "finished" and len(document["entries"]) == 5
    for entry in document["entries"]:
        assert (project / entry["output"]).is_file()
        assert entry["summary"]["status"] == "finished"


def test_json_prints_the_suite_document(invoke: Invoke, project: Path) -> None:
    result = invoke("eval", "run", SUITE, "-o", "out", "--json", "--limit", "2")
    assert result.exit_code == 0, result.stderr
    doc = result.resource()
    assert doc["suite"] == "quickstart-suite"
    entry = doc["entries"][1]
    assert set(entry) >= {"name", "settings", "output", "status", "summary"}
    assert entry["settings"]["limit"] == 2  # the flag wins over the file
    assert entry["sweep"] == {
        "model_path": "mock/flaky-calculator",
        "n": 1,
        "sampling.temperature": 0.7,
    }


def test_dry_run_shows_entries_and_origins_and_runs_nothing(invoke: Invoke, project: Path) -> None:
    result = invoke("eval", "run", SUITE, "--dry-run", "--json", "--n", "2")
    assert result.exit_code == 0, result.stderr
    doc = result.resource()
    assert [e["name"] for e in doc["entries"]][:2] == [
        "exact",
        "calculator-flaky-calculator-n1-t0.7",
    ]
    assert doc["entries"][0]["origins"]["n"] == "flag"
    assert doc["entries"][0]["origins"]["limit"] == "defaults, line 10"
    assert doc["entries"][1]["origins"]["sampling.temperature"] == "sweep, line 27"
    assert not (project / ".osmosis").exists()
    human = invoke("eval", "run", SUITE, "--dry-run")
    assert "exact\tcalculator\tmock/calculator\tarithmetic\t10\t3" in human.stdout
    assert "n=3 (defaults, line 11)" in human.stdout


def test_a_stopped_suite_resumes_without_redoing_finished_entries(
    invoke: Invoke, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from osmosis_local_runner.run.suite import suite as suite_module

    real = suite_module.SuiteRunner._run_entry
    calls: list[str] = []

    async def stop_at_third(self: Any, run: Any, slots: Any) -> None:
        calls.append(run.entry.name)
        if len(calls) == 3:
            self.interrupt()  # Ctrl-C while the third entry starts
        await real(self, run, slots)

    monkeypatch.setattr(suite_module.SuiteRunner, "_run_entry", stop_at_third)
    first = invoke("eval", "run", SUITE)
    assert first.exit_code == 130
    directory = next((project / ".osmosis" / "suites").iterdir())
    # the partial table, then the command that finishes the suite
    table = [line.split("\t") for line in first.stdout.splitlines()[1:]]
    assert [row[-1] for row in table].count("finished") == 2 and table[0][0] != "ENTRY"
    printed = first.stderr.split("Resume with: ", 1)[1].splitlines()[0]
    assert printed == f"osmosis eval run {SUITE} -o {directory.relative_to(project)} --resume"
    finished = {
        p.name: p.read_bytes()
        for p in directory.glob("*.json")
        if p.name != "suite.json" and json.loads(p.read_bytes())["summary"]["status"] == "finished"
    }
    assert len(finished) == 2  # two entries done; the third stopped at once
    calls.clear()
    monkeypatch.setattr(suite_module.SuiteRunner, "_run_entry", real)
    again = invoke("eval", "run", SUITE, "--resume")
    assert again.exit_code == 0, again.stderr
    assert f"Resuming {directory.relative_to(project)}" in again.stderr
    assert "(2 entries already finished)" in again.stderr
    for name, content in finished.items():
        assert (directory / name).read_bytes() == content  # never run again
    assert json.loads((directory / "suite.json").read_text())["status"] == "finished"
    assert invoke("eval", "run", SUITE, "--resume").exit_code == 2  # nothing left to resume


def test_parallel_entries_share_one_in_flight_cap(invoke: Invoke, project: Path) -> None:
    with StubOpenAI(latency=0.05) as stub:
        suite = project / "configs" / "eval" / "par.toml"
        suite.write_text(
            f'rollout = "calculator"\nentrypoint = "main.py"\ndataset = "arithmetic"\n'
            f'model_path = "m"\nbase_url = "{stub.url}"\nlimit = 12\nn = 1\nbatch_size = 4\n'
            "[[eval]]\nname = 'a'\n[[eval]]\nname = 'b'\n[[eval]]\nname = 'c'\n"
        )
        result = invoke("eval", "run", "configs/eval/par.toml", "--parallel", "3", "-q")
        assert result.exit_code == 0, result.stderr
        assert stub.state.max_in_flight == 4  # 3 entries × batch 4, yet never more than 4
        assert len(stub.state.requests) == 36  # the attempts (their first calls check)


# ----------------------------------------------------------------- hosted

HOSTED_SUITE = """rollout = "demo"
entrypoint = "main.py"
dataset = "my-dataset"
limit = 20

[[ablation]]
[ablation.sweep]
model_path = ["openai/gpt-5-mini", "openai/gpt-5"]
config = { difficulty = ["easy"] }
"""


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = make_project(tmp_path)
    (path / "configs" / "eval" / "suite.toml").write_text(
        HOSTED_SUITE.replace(
            'config = { difficulty = ["easy"] }', '[ablation.sweep.config]\ndifficulty = ["easy"]'
        )
    )
    git(path, "add", "-A")
    git(path, "commit", "-qm", "suite")
    monkeypatch.chdir(path)
    monkeypatch.setenv("OSMOSIS_TOKEN", "ci-token")
    monkeypatch.setenv("OSMOSIS_WORKSPACE", "acme")
    return path


def _workspaces(router: respx.MockRouter) -> None:
    router.get("/api/cli/workspaces").respond(
        200, json={"workspaces": [{"id": "w1", "name": "acme", "connected_repo": None}]}
    )
    stored = [{"id": "s1", "name": "OPENAI_API_KEY", "scope": "workspace"}]
    router.get("/api/cli/environment-secrets").respond(
        200, json={"environment_secrets": stored, "has_more": False}
    )


def test_hosted_suite_submits_one_run_per_entry_even_when_a_response_is_lost(
    invoke: Invoke, repo: Path, router: respx.MockRouter
) -> None:
    _workspaces(router)
    sent: list[httpx.Request] = []

    def create(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        if len(sent) == 1:
            raise httpx.ReadError("the connection dropped after the create", request=request)
        number = len({r.headers["Idempotency-Key"] for r in sent})
        return httpx.Response(201, json={**CREATED, "id": f"r{number}", "name": f"run-{number}"})

    router.post("/api/cli/eval-runs").mock(side_effect=create)
    result = invoke(
        "eval", "submit", "configs/eval/suite.toml", "--yes", "--json", "--allow-unpushed"
    )
    assert result.exit_code == 0, result.stderr
    keys = [r.headers["Idempotency-Key"] for r in sent]
    assert len(sent) == 3 and keys[0] == keys[1] and len(set(keys)) == 2  # retried with its key
    bodies = [json.loads(r.content) for r in sent[1:]]
    assert [b["experiment_config"]["model_path"] for b in bodies] == [
        "openai/gpt-5-mini",
        "openai/gpt-5",
    ]
    assert bodies[0]["advanced_config"] == {
        "difficulty": "easy",
        "osmosis_suite": {"name": "suite", "entry": "demo-gpt-5-mini-easy"},
    }
    assert all(b["evaluation_config"] == {"limit": 20} for b in bodies)
    doc = result.resource()
    assert [r["entry"] for r in doc["runs"]] == ["demo-gpt-5-mini-easy", "demo-gpt-5-easy"]
    assert [r["name"] for r in doc["runs"]] == ["run-1", "run-2"]
    record = json.loads((repo / ".osmosis" / "suites" / "hosted" / "suite.json").read_text())
    assert [r["name"] for r in record["runs"]] == ["run-1", "run-2"]


@pytest.mark.parametrize(
    ("statuses", "code"), [(("finished", "finished"), 0), (("finished", "failed"), 4)]
)
def test_hosted_suite_wait_gates_every_run(
    invoke: Invoke,
    repo: Path,
    router: respx.MockRouter,
    monkeypatch: pytest.MonkeyPatch,
    statuses: tuple[str, str],
    code: int,
) -> None:
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(repo / "step.md"))
    _workspaces(router)
    created = iter([{**CREATED, "id": f"r{i}", "name": f"run-{i}"} for i in (1, 2)])
    router.post("/api/cli/eval-runs").mock(
        side_effect=lambda r: httpx.Response(201, json=next(created))
    )
    for i, status in zip((1, 2), statuses, strict=True):
        body = detail(status)
        body["eval_run"].update(id=f"r{i}", name=f"run-{i}")
        router.get(f"/api/cli/eval-runs/run-{i}").respond(200, json=body)
        router.get(f"/api/cli/eval-runs/run-{i}/metrics").respond(404)
    result = invoke(
        "eval",
        "submit",
        "configs/eval/suite.toml",
        "--yes",
        "--wait",
        "--allow-unpushed",
        "--junit",
        "hosted.xml",
    )
    assert result.exit_code == code, result.stderr
    if code:
        assert "1 of 2 runs did not pass: demo-gpt-5-easy (run-2) ended failed" in result.stderr
    # CI artefacts: one test case per entry carrying its verdict, and the summary table
    from tests.junit_schema import validate

    validate(repo / "hosted.xml")
    cases = ET.parse(repo / "hosted.xml").getroot().findall("testsuite/testcase")
    assert [c.get("name") for c in cases] == ["demo-gpt-5-mini-easy", "demo-gpt-5-easy"]
    assert [c.find("failure") is not None for c in cases] == [s == "failed" for s in statuses]
    summary = (repo / "step.md").read_text()
    assert f"| demo-gpt-5-easy: run-2 | {statuses[1]} |" in summary
    assert ("❌ ended failed" in summary) == bool(code)


def test_list_suite_shows_only_its_runs(
    invoke: Invoke, repo: Path, router: respx.MockRouter
) -> None:
    from tests.osmosis_client.platform.test_eval_runs import row

    (repo / ".osmosis" / "suites" / "hosted").mkdir(parents=True)
    (repo / ".osmosis" / "suites" / "hosted" / "nightly.json").write_text(
        json.dumps({"suite": "nightly", "runs": [{"entry": "a", "id": "r2", "name": "run-2"}]})
    )
    router.get("/api/cli/eval-runs").respond(
        200,
        json={
            "eval_runs": [row(i) for i in (1, 2, 3)],
            "total_count": 3,
            "has_more": False,
            "next_offset": None,
        },
    )
    result = invoke("eval", "list", "--suite", "nightly", "--json")
    assert result.exit_code == 0, result.stderr
    assert [r["name"] for r in result.items()] == ["run-2"]
    unknown = invoke("eval", "list", "--suite", "other")
    assert unknown.exit_code == 2 and "no hosted runs of suite 'other'" in unknown.stderr


# ----------------------------------------------------------------- resume and retries


def test_resume_without_a_path_finds_the_latest_unfinished_single_run(
    invoke: Invoke, project: Path
) -> None:
    run = ["eval", "run", "configs/eval/quickstart.toml", "--limit", "4"]
    assert invoke(*run).exit_code == 0
    assert invoke(*run, "--resume").exit_code == 2  # it finished: nothing to resume
    (directory,) = [p for p in (project / ".osmosis" / "evals").iterdir() if p.name != ".locks"]
    (directory / "results.json").unlink()  # as if killed before the end: the journal is left
    other = invoke(*run, "--temperature", "0.3", "--resume")  # it changes the run: refused
    assert other.exit_code == 2 and "cannot resume: the run changed" in other.stderr
    assert "sampling" in other.stderr and "--fresh" in other.stderr
    again = invoke(*run[:-2], "--resume")  # its settings come from its journal
    assert again.exit_code == 0, again.stderr
    assert f"run:     {directory.name} (continued)" in again.stderr
    assert "with the run's own settings: --limit 4" in again.stderr
    document = json.loads((directory / "results.json").read_text())
    assert document["summary"]["total_runs"] == 12


def test_model_failures_after_the_clients_retries_are_retried_whole(tmp_path: Path) -> None:
    import asyncio

    from osmosis_client._retry import RetryPolicy
    from osmosis_client.llm.client import ModelClient
    from osmosis_client.llm.providers import resolve_target
    from osmosis_local_runner.run.execute.runner import Runner
    from tests.osmosis_local_runner.test_runner import Calc, make_spec

    async def no_sleep(seconds: float) -> None:
        return None

    with StubOpenAI() as stub:
        stub.fail_next(503, count=2)  # the first attempt's call and its one retry
        target = resolve_target("m", base_url=stub.url, env={})
        spec = make_spec(tmp_path, Calc(), limit=2, batch_size=1, max_retries=1, probe=False)
        spec.model, spec.retry_delay = target, 0.0

        async def go() -> Any:
            client = ModelClient(target, retry_policy=RetryPolicy(max_retries=1), sleep=no_sleep)
            async with client:
                return await Runner(spec, model_client=client).run()

        result = asyncio.run(go())
    first = result.document["rows"][0]["runs"][0]
    assert first["success"] and first["retries"] == 1
    assert result.summary["retried_runs"] == 1 and result.summary["errored_runs"] == 0


# ----------------------------------------------------------------- hostile suites


def write_suite(project: Path, body: str, name: str = "hostile.toml") -> str:
    head = 'rollout = "calculator"\nentrypoint = "main.py"\ndataset = "arithmetic"\n'
    (project / "configs" / "eval" / name).write_text(
        head + 'model_path = "mock/calculator"\n' + body
    )
    return f"configs/eval/{name}"


def test_a_sweep_too_large_is_refused_before_it_is_expanded(invoke: Invoke, project: Path) -> None:
    keys = "\n".join(f"k{i} = [{', '.join(str(v) for v in range(10))}]" for i in range(9))
    path = write_suite(project, "[[ablation]]\n[ablation.sweep.config]\n" + keys + "\n")
    result = invoke("eval", "run", path, "--dry-run")  # was: MemoryError after 30 s
    assert result.exit_code == 2
    assert "the suite would expand to 1,000,000,000 entries; a suite holds at most 1,000" in (
        result.stderr
    )
    assert "Traceback" not in result.stderr


def test_entry_names_are_unique_whatever_names_were_given(invoke: Invoke, project: Path) -> None:
    path = write_suite(
        project,
        "limit = 2\n[[eval]]\nname = 'a-2'\n[[eval]]\nname = 'a'\n[[eval]]\nname = 'a'\n"
        "[[eval]]\nname = 'A'\n[[eval]]\nrollout = 'calculator'\n",
    )
    result = invoke("eval", "run", path, "-o", "out", "--json")
    assert result.exit_code == 0, result.stderr
    names = [e["name"] for e in result.resource()["entries"]]
    assert names == ["a-2", "a", "a-3", "A-4", "calculator"]
    outputs = {e["output"] for e in result.resource()["entries"]}
    assert len(outputs) == 5  # five documents, none overwriting another
    for name in names:
        head = json.loads((project / "out" / f"{name}.json").read_text())
        assert head["summary"]["total_runs"] == 2  # each entry really ran its own attempts


def test_an_entry_named_suite_is_refused_and_a_generated_one_steps_aside(
    invoke: Invoke, project: Path
) -> None:
    given = write_suite(project, "[[eval]]\nname = 'suite'\n", "given.toml")
    result = invoke("eval", "run", given, "--dry-run")
    assert result.exit_code == 2 and "'suite' is reserved" in result.stderr
    rollouts = project / "rollouts"
    shutil.copytree(rollouts / "calculator", rollouts / "suite")
    generated = write_suite(project, "limit = 2\n[[eval]]\nrollout = 'suite'\n", "gen.toml")
    done = invoke("eval", "run", generated, "-o", "out", "--json")
    assert done.exit_code == 0, done.stderr
    assert [e["name"] for e in done.resource()["entries"]] == ["suite-2"]
    assert json.loads((project / "out" / "suite.json").read_text())["entries"][0]["status"] == (
        "finished"
    )


def test_long_names_given_or_swept_never_reach_the_file_system_too_long(
    invoke: Invoke, project: Path
) -> None:
    long_given = write_suite(project, f"[[eval]]\nname = '{'n' * 300}'\n", "given.toml")
    refused = invoke("eval", "run", long_given, "--dry-run")
    assert refused.exit_code == 2 and "is 300 characters long; at most 96" in refused.stderr
    value = "v" * 300
    swept = write_suite(
        project,
        f"limit = 2\n[[ablation]]\n[ablation.sweep.config]\nstyle = ['{value}', '{value}x']\n",
        "swept.toml",
    )
    result = invoke("eval", "run", swept, "-o", "out", "--json")
    assert result.exit_code == 0, result.stderr
    names = [e["name"] for e in result.resource()["entries"]]
    assert len(set(names)) == 2 and all(len(n) <= 100 for n in names)
    assert all((project / "out" / f"{n}.json").is_file() for n in names)


def test_suite_documents_never_hold_header_values_or_url_passwords(
    invoke: Invoke, project: Path
) -> None:
    with StubOpenAI() as stub:
        url = stub.url.replace("http://", "http://user:hunter2pass@")
        path = write_suite(project, "limit = 2\n[[eval]]\nname = 'a'\n[[eval]]\nname = 'b'\n")
        result = invoke(
            "eval",
            "run",
            path,
            "-o",
            "out",
            "--json",
            "--model",
            "m",
            "--base-url",
            url,
            "--header",
            "X-Api-Key: sk-very-secret-token",
        )
        assert result.exit_code == 0, result.stderr
        assert stub.state.headers[0]["X-Api-Key"] == "sk-very-secret-token"
    stored = (project / "out" / "suite.json").read_text()
    for text in (stored, result.stdout, result.stderr):
        assert "sk-very-secret-token" not in text and "hunter2pass" not in text
    document = json.loads(stored)
    assert document["fingerprint"]["flags"]["headers"] == ["X-Api-Key: ***"]
    assert document["entries"][0]["settings"]["base_url"].startswith("http://***@127.0.0.1")


def test_a_model_flag_shows_in_the_table_and_a_collapsed_sweep_is_warned(
    invoke: Invoke, project: Path
) -> None:
    result = invoke("eval", "run", SUITE, "--model", "mock/calculator", "--limit", "2")
    assert result.exit_code == 0, result.stderr
    rows = [line.split("\t") for line in result.stdout.splitlines()[1:] if "\t" in line]
    assert {row[1] for row in rows} == {"mock/calculator"}  # what ran, not the entry's own
    warnings = [line for line in result.stderr.splitlines() if line.startswith("warning:")]
    assert warnings == [
        "warning: --model overrides a setting the sweep varies: entries "
        "calculator-flaky-calculator-n1-t0.7, calculator-echo-n1-t0.7 now run the same settings",
        "warning: --model overrides a setting the sweep varies: entries "
        "calculator-flaky-calculator-n5-t0.7, calculator-echo-n5-t0.7 now run the same settings",
    ]
    plain = invoke("eval", "run", SUITE, "--limit", "2", "--dry-run")
    assert "warning:" not in plain.stderr  # no flag over a swept key: nothing collapses
