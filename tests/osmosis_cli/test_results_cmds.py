"""eval compare / rescore, --junit, --no-transcripts and GitHub step summaries through the
CLI, on offline runs of the bundled quickstart."""

from __future__ import annotations

import json
import re
import shutil
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import httpx
import pytest
import respx

from tests.junit_schema import validate
from tests.osmosis_cli.conftest import Invoke
from tests.osmosis_cli.test_eval_hosted import CONFIG
from tests.osmosis_client.platform.test_eval_runs import CREATED, detail
from tests.results_docs import attempt, write

QUICKSTART = Path(__file__).resolve().parents[2] / "examples" / "quickstart"
TOML = "configs/eval/quickstart.toml"
MAIN = "rollouts/calculator/main.py"
REWARDS = "rollouts/calculator/rewards.py"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "qs"
    shutil.copytree(QUICKSTART, root, ignore=shutil.ignore_patterns(".osmosis"))
    monkeypatch.chdir(root)
    return root


def run_quickstart(invoke: Invoke, out: str, *args: str) -> dict:  # type: ignore[type-arg]
    result = invoke("eval", "run", TOML, "-o", out, "--json", *args)
    assert result.exit_code == 0, result.stderr
    return result.resource()  # type: ignore[no-any-return]


# ------------------------------------------------------------------ compare


def test_two_offline_runs_compare_with_an_interval_and_flips(invoke: Invoke, project: Path) -> None:
    run_quickstart(invoke, "a.json", "--model", "mock/calculator")
    run_quickstart(invoke, "b.json")  # mock/flaky-calculator
    result = invoke("eval", "compare", "a.json", "b.json")
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[2] == "Paired rows: 20 (unpaired: A 0, B 0)"
    header = lines[4].split("\t")
    assert header[:5] == ["EVAL FN", "MEAN A", "MEAN B", "B−A", "95% CI (BOOTSTRAP)"]
    grader = lines[5].split("\t")
    assert grader[0] == "grader" and grader[1] == "1.000" and float(grader[3]) < 0
    assert grader[4].startswith("[-") and grader[7] != "0"  # rows flipped to fail
    assert "Largest drops (grader):" in result.stdout
    assert "Flipped rows (grader): " in result.stdout and "pass→fail" in result.stdout

    doc = invoke("eval", "compare", "a.json", "b.json", "--json").data()
    stats = doc["eval_fns"]["grader"]
    assert (
        stats["ci_method"] == "bootstrap" and stats["ci_low"] <= stats["diff"] <= stats["ci_high"]
    )
    assert stats["flipped_to_fail"] >= 1 and stats["flipped_to_pass"] == 0
    assert 0 < stats["mcnemar_p"] <= 1
    assert doc["worst_rows"] and all(w["score_b"] < w["score_a"] for w in doc["worst_rows"])
    assert {"row_index", "fn", "score_a", "score_b", "prompt"} <= set(doc["worst_rows"][0])
    assert len(doc["flipped_rows"]) == stats["flipped_to_fail"]
    assert all(f["direction"] == "to_fail" for f in doc["flipped_rows"])


def test_fail_if_worse_gates_on_an_established_regression(invoke: Invoke, project: Path) -> None:
    run_quickstart(invoke, "a.json", "--model", "mock/calculator")
    run_quickstart(invoke, "b.json")
    worse = invoke("eval", "compare", "a.json", "b.json", "--fail-if-worse", "0.05")
    assert worse.exit_code == 4
    assert "REGRESSION: B is worse than A on grader" in worse.stderr
    doc = invoke("eval", "compare", "a.json", "b.json", "--json", "--fail-if-worse", "0.05")
    assert doc.exit_code == 4 and doc.data()["regressions"] == ["grader"]
    better = invoke("eval", "compare", "b.json", "a.json", "--fail-if-worse", "0.05")
    assert better.exit_code == 0
    assert "no regression established" in better.stderr
    # a bar lower than the drop's interval allows: not established
    assert invoke("eval", "compare", "a.json", "b.json", "--fail-if-worse", "0.9").exit_code == 0


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["missing.json", "b.json"], "missing.json: no such file"),
        (["a.json", "a.json", "--eval-fn", "nope"], "eval fn 'nope' is not in both"),
    ],
)
def test_compare_bad_input_is_one_line_and_exit_2(
    invoke: Invoke, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str], message: str
) -> None:
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "a.json", {0: [1.0]})
    write(tmp_path / "b.json", {0: [1.0]})
    result = invoke("eval", "compare", *args)
    assert result.exit_code == 2
    assert message in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert "Traceback" not in result.stderr


def test_compare_of_a_name_that_is_no_run_is_one_line(
    invoke: Invoke, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, router: respx.MockRouter
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OSMOSIS_TOKEN", "tok")
    monkeypatch.setenv("OSMOSIS_WORKSPACE", "acme")
    write(tmp_path / "b.json", {0: [1.0]})
    router.get("/api/cli/eval-runs/my-run").respond(404, json={"error": "not found"})
    result = invoke("eval", "compare", "my-run", "b.json")
    assert result.exit_code == 2
    assert "my-run is neither a results file nor a hosted run" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_compare_appends_to_the_github_step_summary(
    invoke: Invoke, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    summary = tmp_path / "summary.md"
    summary.write_text("earlier step\n")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    a = write(tmp_path / "a.json", {i: [1.0] for i in range(6)})
    b = write(tmp_path / "b.json", {i: [float(i % 2)] for i in range(6)})
    assert invoke("eval", "compare", str(a), str(b)).exit_code == 0
    text = summary.read_text()
    assert text.startswith("earlier step\n")  # appended, never overwritten
    assert "## osmosis eval compare: `a` → `b`" in text
    assert "| grader | 1.000 | 0.500 | -0.500 |" in text and "Largest drops" in text


def test_the_step_summary_of_a_gate_says_its_verdict(
    invoke: Invoke, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    a = write(tmp_path / "a.json", {i: [1.0] for i in range(8)})
    b = write(tmp_path / "b.json", {i: [float(i % 2)] for i in range(8)})
    gated = invoke("eval", "compare", str(a), str(b), "--fail-if-worse", "0.1")
    assert gated.exit_code == 4
    lines = summary.read_text().splitlines()
    assert lines[2] == (
        "❌ **REGRESSION**: B is worse than A on grader — the 95% interval of B−A lies below −0.1"
    )
    summary.write_text("")
    assert invoke("eval", "compare", str(a), str(a), "--fail-if-worse", "0.1").exit_code == 0
    assert "✅ **no regression established beyond −0.1**" in summary.read_text()


# ------------------------------------------------------------------ rescore


def test_rescore_reproduces_the_scores_with_the_same_eval_fn(invoke: Invoke, project: Path) -> None:
    seed = invoke(
        "eval",
        "-m",
        f"{MAIN}:CalculatorWorkflow",
        "-d",
        "data/arithmetic.jsonl",
        "--model",
        "mock/flaky-calculator",
        "--eval-fn",
        f"{REWARDS}:exact_number",
        "--n",
        "3",
        "--limit",
        "12",
        "-o",
        "seed.json",
        "--quiet",
    )
    assert seed.exit_code == 0, seed.stderr
    result = invoke(
        "eval",
        "rescore",
        "seed.json",
        "--eval-fn",
        f"{REWARDS}:exact_number",
        "-o",
        "again.json",
        "--json",
    )
    assert result.exit_code == 0, result.stderr
    original = json.loads((project / "seed.json").read_text())
    again = result.resource()
    written = json.loads((project / "again.json").read_text())
    assert {key: again[key] for key in written} == written
    assert again["rescored_from"] == "seed.json"
    assert again["summary"]["eval_fns"] == original["summary"]["eval_fns"]
    assert [r["runs"] for r in again["rows"]] == [r["runs"] for r in original["rows"]]


def test_rescore_a_toml_run_with_its_grader_and_with_a_new_fn(
    invoke: Invoke, project: Path
) -> None:
    original = run_quickstart(invoke, "run.json")
    same = invoke("eval", "rescore", "run.json", "--eval-fn", f"{MAIN}:NumberMatch", "--json")
    assert same.exit_code == 0, same.stderr
    assert same.resource()["summary"]["eval_fns"] == original["summary"]["eval_fns"]
    assert (project / "run.rescored.json").is_file()  # the default output

    other = invoke(
        "eval",
        "rescore",
        "run.json",
        "--eval-fn",
        f"{REWARDS}:brevity",
        "-o",
        "brief.json",
        "--json",
    )
    assert other.exit_code == 0, other.stderr
    doc = other.resource()
    assert doc["config"]["eval_fns"] == [f"{REWARDS}:brevity"]
    assert doc["summary"]["eval_fns"][f"{REWARDS}:brevity"]["mean"] == 1.0  # answers are short
    assert doc["summary"]["total_tokens"] == original["summary"]["total_tokens"]  # no model call
    # the rescored document compares with the original like any other
    assert invoke("eval", "compare", "run.json", "run.rescored.json").exit_code == 0
    # issue 34: a new fn named after its file shares no name with the run's grader;
    # NAME= names it, and compare pairs the two
    unnamed = invoke("eval", "compare", "run.json", "brief.json")
    assert unnamed.exit_code == 2 and "share no eval fn" in unnamed.stderr
    named = invoke(
        "eval",
        "rescore",
        "run.json",
        "--eval-fn",
        f"grader={REWARDS}:brevity",
        "-o",
        "named.json",
        "--json",
    )
    assert named.exit_code == 0, named.stderr
    assert list(named.resource()["summary"]["eval_fns"]) == ["grader"]
    paired = invoke("eval", "compare", "run.json", "named.json", "--json")
    assert paired.exit_code == 0, paired.stderr
    assert list(paired.data()["eval_fns"]) == ["grader"]


def test_rescore_needs_transcripts(invoke: Invoke, project: Path) -> None:
    doc = run_quickstart(invoke, "bare.json", "--no-transcripts")
    assert all("messages" not in run for row in doc["rows"] for run in row["runs"])
    assert all("answer" in run for row in doc["rows"] for run in row["runs"])
    result = invoke("eval", "rescore", "bare.json", "--eval-fn", f"{MAIN}:NumberMatch")
    assert result.exit_code == 2
    assert "has no transcripts" in result.stderr and "--no-transcripts" in result.stderr


def test_rescore_of_a_module_below_the_project_suggests_its_file_form(
    invoke: Invoke, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run_quickstart(invoke, "run.json")
    # as in a new process: the run's rollout folder is not on sys.path
    hidden = [p for p in sys.path if not (Path(p or ".") / "rewards.py").exists()]
    monkeypatch.setattr(sys, "path", hidden)
    monkeypatch.delitem(sys.modules, "rewards", raising=False)
    result = invoke("eval", "rescore", "run.json", "--eval-fn", "rewards:exact_number")
    assert result.exit_code == 2
    assert result.stderr.count("\n") == 1  # one line
    assert f"give the file: {REWARDS}:exact_number" in result.stderr
    # the form suggested works
    assert (
        invoke("eval", "rescore", "run.json", "--eval-fn", f"{REWARDS}:exact_number").exit_code == 0
    )
    nowhere = invoke("eval", "rescore", "run.json", "--eval-fn", "nowhere:fn")
    assert nowhere.exit_code == 2 and "give a file path: path/to/nowhere.py:fn" in nowhere.stderr


def test_rescore_refuses_a_changed_dataset(invoke: Invoke, project: Path) -> None:
    run_quickstart(invoke, "run.json")
    data = project / "data" / "arithmetic.jsonl"
    lines = data.read_text().splitlines()
    data.write_text("\n".join(lines[1:] + lines[:1]) + "\n")  # same rows, other positions
    result = invoke("eval", "rescore", "run.json", "--eval-fn", f"{MAIN}:NumberMatch")
    assert result.exit_code == 2 and "the dataset changed" in result.stderr


def test_rescore_survives_a_hostile_eval_fn(invoke: Invoke, project: Path) -> None:
    run_quickstart(invoke, "run.json")
    (project / "hostile.py").write_text(
        "import sys\n"
        "def exits(solution_str, ground_truth, **kw):\n"
        "    print('noise from user code')\n"
        "    sys.exit(3)\n"
        "def raises(solution_str, ground_truth, **kw):\n"
        "    raise RuntimeError('grader bug')\n"
    )
    result = invoke(
        "eval",
        "rescore",
        "run.json",
        "--eval-fn",
        "hostile.py:exits",
        "--eval-fn",
        "hostile.py:raises",
        "--json",
    )
    assert result.exit_code == 0, result.stderr
    doc = result.resource()  # stdout still holds one document: the user's print went to stderr
    run = doc["rows"][0]["runs"][0]
    assert run["success"] is True
    assert "RuntimeError: grader bug" in run["fn_errors"]["hostile.py:raises"]
    assert "exit" in run["fn_errors"]["hostile.py:exits"].lower()


# ------------------------------------------------------------------ JUnit


def test_junit_for_a_local_run_is_valid_and_counts_rows(invoke: Invoke, project: Path) -> None:
    result = invoke("eval", "run", TOML, "-o", "run.json", "--junit", "reports/junit.xml")
    assert result.exit_code == 0, result.stderr
    path = project / "reports" / "junit.xml"
    validate(path)
    root = ET.parse(path).getroot()
    suites = root.findall("testsuite")
    # called by the config it ran and its model, not by its file (issue 36)
    assert [s.get("name") for s in suites] == ["quickstart · mock/flaky-calculator"]
    cases = suites[0].findall("testcase")
    assert len(cases) == 20 and cases[0].get("name") == "row 0: What is 43 + 21?"  # its prompt
    # mock attempts take well under a millisecond: their time still shows
    assert all(float(c.get("time") or 0) > 0 for c in cases)
    doc = json.loads((project / "run.json").read_text())
    failing = [
        row["row_index"]
        for row in doc["rows"]
        if sum(r["scores"]["grader"] >= 1.0 for r in row["runs"]) * 2 <= len(row["runs"])
    ]
    failed = [c for c in cases if c.find("failure") is not None]
    assert [int(c.get("name", "").split()[1].rstrip(":")) for c in failed] == failing
    assert suites[0].get("failures") == str(len(failing)) == root.get("failures")
    message = failed[0].find("failure").get("message")  # type: ignore[union-attr]
    assert "attempts passed" in str(message) and "pass threshold 1" in str(message)


def test_junit_marks_errored_rows_as_errors_and_strips_unprintable_text(
    tmp_path: Path,
) -> None:
    from osmosis_local_runner.results.documents.documents import ResultsFile
    from osmosis_local_runner.results.documents.sources import Source
    from osmosis_local_runner.results.reports.ci_reports import junit_xml

    doc = write(
        tmp_path / "run.json",
        {0: [1.0]},
        extra={
            1: [attempt(1, 0, None, error="workflow: RuntimeError: \x1b[31mboom\x00")],
            2: [attempt(2, 0, 0.0, answer="bad \x07 answer <tag> & 'quotes'")],
            3: [attempt(3, 0, None, skipped=True)],
        },
    )
    data = junit_xml([Source("run", ResultsFile(doc))])
    validate(data)
    root = ET.fromstring(data)
    cases = {str(c.get("name")).split(":")[0]: c for c in root.iter("testcase")}
    assert cases["row 0"].find("failure") is None and cases["row 0"].find("error") is None
    error = cases["row 1"].find("error")
    assert error is not None and "RuntimeError" in str(error.get("message"))
    assert cases["row 2"].find("failure") is not None
    assert "<tag> & 'quotes'" in str(cases["row 2"].findtext("system-out"))
    assert cases["row 3"].find("skipped") is not None
    suite = root.find("testsuite")
    assert suite is not None
    assert (
        suite.get("tests"),
        suite.get("failures"),
        suite.get("errors"),
        suite.get("skipped"),
    ) == (
        "4",
        "1",
        "1",
        "1",
    )


def test_junit_for_a_suite_has_one_testsuite_per_entry(
    invoke: Invoke, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(project / "step.md"))
    result = invoke(
        "eval",
        "run",
        "configs/eval/suite.toml",
        "-o",
        "out",
        "--limit",
        "3",
        "--junit",
        "suite.xml",
        "--quiet",
    )
    assert result.exit_code == 0, result.stderr
    validate(project / "suite.xml")
    root = ET.parse(project / "suite.xml").getroot()
    names = [s.get("name") for s in root.findall("testsuite")]
    document = json.loads((project / "out" / "suite.json").read_text())
    assert names == [e["name"] for e in document["entries"]]
    assert all(len(s.findall("testcase")) == 3 for s in root.findall("testsuite"))
    summary = (project / "step.md").read_text()
    assert summary.startswith("## osmosis eval suite quickstart-suite\n")
    head = summary.split("<details>", 1)[0]
    table = [line for line in head.splitlines() if line.startswith("| ") and "---" not in line]
    assert table[0].startswith("| entry | status | mean |") and len(table) == 1 + len(names)
    assert table[1].startswith("| exact |")  # best first
    assert summary.count("<details><summary>") == len(names)


def test_a_bad_junit_path_is_refused_before_the_run(invoke: Invoke, project: Path) -> None:
    (project / "adir").mkdir()
    result = invoke("eval", "run", TOML, "-o", "run.json", "--junit", "adir")
    assert result.exit_code == 2 and "is a directory" in result.stderr
    assert not (project / "run.json").exists()
    same = invoke("eval", "run", TOML, "-o", "run.json", "--junit", "run.json")
    assert same.exit_code == 2 and "is the results document" in same.stderr


def test_eval_run_writes_the_step_summary(
    invoke: Invoke, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    summary = project / "step.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    run_quickstart(invoke, "run.json")
    text = summary.read_text()
    assert text.startswith("## osmosis eval run\n\n### quickstart · mock/flaky-calculator\n")
    assert "| eval fn | mean | std | pass@1 | pass@3 |" in text
    assert "| grader |" in text and "Worst rows (grader, 3 of 20 failed)" in text
    assert "| 0 | 0.333 | What is 43 + 21? | 64 | 65 |  |" in text  # prompt, expected, got


def test_an_unwritable_step_summary_is_a_warning_not_a_failure(
    invoke: Invoke, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(project / "no" / "such" / "dir" / "x.md"))
    result = invoke("eval", "run", TOML, "-o", "run.json")
    assert result.exit_code == 0
    assert "warning: cannot append to GITHUB_STEP_SUMMARY" in result.stderr


# ------------------------------------------------------------------ hosted


@pytest.fixture
def hosted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, router: respx.MockRouter) -> Path:
    from tests.gitrepo import make_project

    path = make_project(tmp_path)
    monkeypatch.chdir(path)
    monkeypatch.setenv("OSMOSIS_TOKEN", "ci-token-secret")
    monkeypatch.setenv("OSMOSIS_WORKSPACE", "acme")
    router.get("/api/cli/workspaces").respond(
        200, json={"workspaces": [{"id": "w1", "name": "acme"}]}
    )
    return path


@pytest.mark.parametrize(("final", "code"), [("finished", 0), ("failed", 4)])
def test_submit_wait_junit_has_the_runs_verdict(
    invoke: Invoke,
    hosted: Path,
    router: respx.MockRouter,
    monkeypatch: pytest.MonkeyPatch,
    final: str,
    code: int,
) -> None:
    summary = hosted / "step.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    router.get("/api/cli/environment-secrets").respond(
        200, json={"environment_secrets": [{"id": "s", "name": "OPENAI_API_KEY"}]}
    )
    router.post("/api/cli/eval-runs").respond(201, json=CREATED)
    router.get("/api/cli/eval-runs/demo-abc").mock(
        side_effect=[httpx.Response(200, json=detail(final, 0.9))]
    )
    result = invoke("eval", "submit", CONFIG, "--yes", "--min-pass-rate", "0.5", "--junit", "j.xml")
    assert result.exit_code == code, result.stderr
    validate(hosted / "j.xml")
    case = ET.parse(hosted / "j.xml").getroot().find("testsuite/testcase")
    assert case is not None and case.get("name") == "demo-abc"
    assert (case.find("failure") is not None) == (final == "failed")
    assert "demo-abc" in summary.read_text() and ("passed" in summary.read_text()) == (code == 0)


def test_submit_junit_needs_wait(invoke: Invoke, hosted: Path, router: respx.MockRouter) -> None:
    create = router.post("/api/cli/eval-runs").respond(201, json=CREATED)
    result = invoke("eval", "submit", CONFIG, "--yes", "--junit", "j.xml")
    assert result.exit_code == 2 and "--junit needs --wait" in result.stderr
    assert not create.called


# ------------------------------------------------------------------ report (no browser)


def test_report_of_a_suite_directory_is_self_contained(invoke: Invoke, project: Path) -> None:
    ran = invoke("eval", "run", "configs/eval/suite.toml", "-o", "out", "--limit", "3", "--quiet")
    assert ran.exit_code == 0, ran.stderr
    result = invoke("eval", "report", "out", "-o", "suite.html")
    assert result.exit_code == 0, result.stderr
    assert "Report written to suite.html (3 rows" in result.stderr
    page = (project / "suite.html").read_text()
    entries = json.loads((project / "out" / "suite.json").read_text())["entries"]
    data = json.loads(page.split('id="data">', 1)[1].split("</script>", 1)[0])
    assert [r["label"] for r in data["runs"]] == [e["name"] for e in entries]
    # nothing to fetch: no external scripts, styles, images or links
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", page)
    assert "default-src 'none'" in page
    assert (project / "suite.html").stat().st_mode & 0o077 == 0  # prompts and answers inside


def test_report_keeps_markup_in_user_content_inert(tmp_path: Path, invoke: Invoke) -> None:
    doc = write(
        tmp_path / "x.json",
        {},
        extra={
            0: [
                attempt(
                    0,
                    0,
                    1.0,
                    answer="</script><script>alert(1)</script>",
                    prompt="<!-- \u2028 & <b> {{JS}} {{DATA}}",
                )
            ]
        },
    )
    result = invoke("eval", "report", str(doc), "-o", str(tmp_path / "x.html"))
    assert result.exit_code == 0, result.stderr
    page = (tmp_path / "x.html").read_text()
    assert "<script>alert(1)</script>" not in page and "</script><script>" not in page
    data = json.loads(page.split('id="data">', 1)[1].split("</script>", 1)[0])
    assert (
        data["rows"][0]["cells"][0]["attempts"][0]["answer"] == "</script><script>alert(1)</script>"
    )
    assert data["rows"][0]["prompt"] == "<!-- & <b> {{JS}} {{DATA}}"  # markers never expanded


def test_report_refuses_to_overwrite_an_input(tmp_path: Path, invoke: Invoke) -> None:
    doc = write(tmp_path / "x.json", {0: [1.0]})
    result = invoke("eval", "report", str(doc), "-o", str(doc))
    assert result.exit_code == 2 and "is one of the results documents" in result.stderr
    assert json.loads(doc.read_text())["summary"]["total_rows"] == 1
    missing = invoke("eval", "report", str(tmp_path / "nope.json"))
    assert missing.exit_code == 2 and "no such file" in missing.stderr


def test_report_renders_odd_transcripts_without_failing(tmp_path: Path, invoke: Invoke) -> None:
    odd = attempt(0, 0, 1.0)
    odd.transcript = json.dumps(
        [
            "not a message",
            {"role": "user", "content": [{"type": "text", "text": "parts"}, "junk"]},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": ["x", {"function": "add"}, {"function": {"name": "f"}}],
            },
            {"role": 7, "content": {"nested": True}},
        ]
    )
    doc = write(tmp_path / "odd.json", {}, extra={0: [odd]})
    result = invoke("eval", "report", str(doc), "-o", str(tmp_path / "odd.html"))
    assert result.exit_code == 0, result.stderr
    page = (tmp_path / "odd.html").read_text()
    data = json.loads(page.split('id="data">', 1)[1].split("</script>", 1)[0])
    messages = data["rows"][0]["cells"][0]["attempts"][0]["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "7"]
    assert messages[0]["content"] == "parts"
    assert messages[1]["tool_calls"] == [{"name": "f", "arguments": ""}]


def test_junit_is_written_when_a_deadline_stops_the_run(invoke: Invoke, project: Path) -> None:
    result = invoke(
        "eval",
        "run",
        TOML,
        "--model",
        "mock/calculator@300",
        "--batch-size",
        "2",
        "--deadline",
        "0.5",
        "-o",
        "r.json",
        "--junit",
        "r.xml",
    )
    assert result.exit_code == 1 and "deadline" in result.stderr
    doc = json.loads((project / "r.json").read_text())
    root = ET.parse(project / "r.xml").getroot()
    assert int(root.get("tests", "0")) == doc["summary"]["total_rows"] > 0


def test_no_junit_from_a_stale_document_when_the_run_never_wrote(
    invoke: Invoke, project: Path
) -> None:
    run_quickstart(invoke, "r.json")  # an earlier document at the same path
    (project / "r.json.journal.jsonl").unlink()
    failed = invoke(
        "eval", "run", TOML, "--model", "openai/gpt-5-mini", "-o", "r.json", "--junit", "r.xml"
    )
    assert failed.exit_code == 2  # no key: nothing ran
    assert not (project / "r.xml").exists()


def test_junit_shows_the_answer_that_explains_the_verdict_and_what_was_expected(
    tmp_path: Path,
) -> None:
    from osmosis_local_runner.results.documents.documents import ResultsFile
    from osmosis_local_runner.results.documents.records import facts_text
    from osmosis_local_runner.results.documents.sources import Source
    from osmosis_local_runner.results.reports.ci_reports import junit_xml
    from tests.results_docs import attempt, write

    def row(index: int, scores: list[float], answers: list[str]) -> list[Any]:
        records = [
            attempt(index, k, s, answer=a, prompt="What is 6 * 7?")
            for k, (s, a) in enumerate(zip(scores, answers, strict=True))
        ]
        for record in records:
            record.row_facts = facts_text({"prompt": "What is 6 * 7?", "expected": "42"})
        return records

    doc = write(
        tmp_path / "run.json",
        {},
        extra={
            0: row(0, [0.0, 1.0, 1.0], ["41", "42", "42"]),
            1: row(1, [1.0, 0, 0], ["42", "40", "39"]),
        },
    )
    root = ET.fromstring(junit_xml([Source("run", ResultsFile(doc))]))
    cases = {str(c.get("name")): c for c in root.iter("testcase")}
    assert set(cases) == {"row 0: What is 6 * 7?", "row 1: What is 6 * 7?"}
    passing, failing = cases["row 0: What is 6 * 7?"], cases["row 1: What is 6 * 7?"]
    assert "answer: 42" in str(passing.findtext("system-out"))  # never the failed 41
    failure = str(failing.findtext("failure"))
    assert "expected: 42" in failure and "answer: 40" in failure  # the lowest-scoring: 40 or 39
