"""One run, one meaning (issue 43): the CLI and ``run_eval`` run the same code
(``run/session/session.py``), so the same spec writes the same run directory through either
door; a finished run asked for with other settings is refused; a key reaches the model
and is written nowhere; a resumed run needs only its name; and what ran is what every
file says ran."""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from osmosis_client.errors import InvalidInputError
from osmosis_local_runner import RunProgress, arun_eval, load_run, run_eval, run_suite
from osmosis_local_runner.api.history import list_runs, run_info
from osmosis_local_runner.run.session.journal import journal_path
from tests.conftest import QUICKSTART
from tests.helpers import run_cli as cli
from tests.stub_openai import StubOpenAI

CONFIG = "configs/eval/quickstart.toml"
KEY = "sk-test-never-written-7f3a9c0e51"


@pytest.fixture
def project(quickstart_project: Path) -> Path:
    return quickstart_project


@pytest.fixture
def twin(tmp_path: Path) -> Path:
    """A second copy of the quickstart, for the other door."""
    root = tmp_path / "twin"
    shutil.copytree(QUICKSTART, root, ignore=shutil.ignore_patterns(".osmosis"))
    return root


# ------------------------------------------------------------------ what both doors write

#: what differs between two runs of the same spec: when, how long, and random ids
_VARYING = re.compile(r"(_at|_ms|^elapsed|^duration|_id|^id|^rollout_id|^ts)$")


def _normal(value: Any, root: Path) -> Any:
    if isinstance(value, dict):
        return {k: "*" if _VARYING.search(k) else _normal(v, root) for k, v in value.items()}
    if isinstance(value, list):
        return [_normal(v, root) for v in value]
    if isinstance(value, str):
        return value.replace(str(root), "<root>")
    return value


def snapshot(run_dir: Path, root: Path) -> dict[str, Any]:
    """A run directory as comparable data: JSON (lines sorted), times, durations and
    ids starred, the project's path replaced."""
    found: dict[str, Any] = {}
    for path in sorted(run_dir.rglob("*")):
        if not path.is_file():
            continue
        text = path.read_text()
        name = str(path.relative_to(run_dir))
        if path.suffix == ".jsonl":
            lines = [_normal(json.loads(line), root) for line in text.splitlines()]
            found[name] = sorted(json.dumps(line, sort_keys=True) for line in lines)
        elif path.suffix == ".json":
            found[name] = _normal(json.loads(text), root)
        else:  # logs.txt: its lines without their time stamps
            found[name] = [line.split(" ", 1)[-1] for line in text.splitlines()]
    return found


def test_a_new_named_run_is_the_same_through_both_doors(project: Path, twin: Path) -> None:
    spec = [
        "--name",
        "ckpt",
        "--model",
        "mock/calculator",
        "--limit",
        "4",
        "--n",
        "2",
        "--batch-size",
        "1",
        "--temperature",
        "0.5",
    ]
    code, _, err = cli("eval", "run", CONFIG, *spec, "-q")
    assert code == 0, err
    os.chdir(twin)
    run_eval(
        CONFIG, name="ckpt", model="mock/calculator", limit=4, n=2, batch_size=1, temperature=0.5
    )
    runs = ".osmosis/evals/ckpt"
    assert snapshot(project / runs, project) == snapshot(twin / runs, twin)


def _killed(results: Path, keep: int) -> None:
    """A run as a kill leaves it: no document, the journal's first ``keep`` attempts."""
    lines = journal_path(results).read_text().splitlines(keepends=True)
    journal_path(results).write_text("".join(lines[: 1 + keep]))
    results.unlink()


def test_a_resumed_run_is_the_same_through_both_doors(project: Path, twin: Path) -> None:
    spec = ["--name", "cut", "--model", "mock/calculator", "--limit", "5", "--batch-size", "1"]
    assert cli("eval", "run", CONFIG, *spec, "-q")[0] == 0
    os.chdir(twin)
    run_eval(CONFIG, name="cut", model="mock/calculator", limit=5, batch_size=1)
    runs = ".osmosis/evals/cut"
    for root in (project, twin):
        _killed(root / runs / "results.json", keep=4)
    os.chdir(project)
    code, _, err = cli("eval", "run", CONFIG, "--name", "cut", "-q")  # only the name
    assert code == 0, err
    assert "Resuming with the run's own settings: --model mock/calculator, --limit 5" in err
    os.chdir(twin)
    result = run_eval(CONFIG, name="cut", resume=True)  # only the name
    assert result.summary.total_runs == 15 and result.config["model"] == "mock/calculator"
    assert snapshot(project / runs, project) == snapshot(twin / runs, twin)


def test_a_suite_is_the_same_through_both_doors(project: Path, twin: Path) -> None:
    suite = (
        'suite = "sweep"\nrollout = "calculator"\nentrypoint = "main.py"\n'
        'model_path = "mock/calculator"\ndataset = "arithmetic"\nlimit = 3\n'
        "batch_size = 1\n\n[[ablation]]\n[ablation.sweep]\nn = [1, 2]\n"
    )
    for root in (project, twin):
        (root / "configs/eval/sweep.toml").write_text(suite)
    assert cli("eval", "run", "configs/eval/sweep.toml", "-o", "out", "-q")[0] == 0
    os.chdir(twin)
    result = run_suite("configs/eval/sweep.toml", output="out")
    assert result.status == "finished" and len(result.entries) == 2
    assert snapshot(project / "out", project) == snapshot(twin / "out", twin)


# ------------------------------------------------------------------ a finished run asked again


def test_a_finished_run_asked_for_with_other_settings_is_refused_by_both_doors(
    project: Path,
) -> None:
    first = run_eval(CONFIG, name="step-100", model="mock/calculator", limit=3)
    again = run_eval(CONFIG, name="step-100", model="mock/calculator", limit=3)
    assert again.summary == first.summary  # the same settings: returned, nothing ran
    with pytest.raises(InvalidInputError) as refused:
        run_eval(CONFIG, name="step-100", model="mock/flaky-calculator", limit=3)
    assert refused.value.code == "RESUME_MISMATCH"
    assert "model: 'mock/calculator' → 'mock/flaky-calculator'" in refused.value.message
    with pytest.raises(InvalidInputError) as fewer:
        run_eval(CONFIG, name="step-100", limit=2)
    assert fewer.value.code == "RESUME_MISMATCH" and "limit: 3 → 2" in fewer.value.message
    code, _, err = cli("eval", "run", CONFIG, "--name", "step-100", "--model", "mock/other")
    assert code == 2 and "complete with other settings" in err
    fresh = run_eval(CONFIG, name="step-100", model="mock/flaky-calculator", limit=3, fresh=True)
    assert fresh.config["model"] == "mock/flaky-calculator"
    assert [p.name for p in (project / ".osmosis/evals").glob("step-100.archive-*")]


# ------------------------------------------------------------------ secrets


def _every_file(root: Path) -> str:
    return "".join(p.read_text(errors="replace") for p in root.rglob("*") if p.is_file())


def test_a_key_reaches_the_model_and_is_written_nowhere(project: Path) -> None:
    with StubOpenAI() as stub:
        stub.state.required_key = KEY
        result = run_eval(
            CONFIG, name="keyed", model="stub-model", base_url=stub.url, api_key=KEY, limit=2
        )
        assert result.summary.total_runs == 6 and result.summary.errors == 0  # it was sent
        password = stub.url.replace("http://", "http://user:hunter2secret@")
        run_eval(CONFIG, name="pw", model="stub-model", base_url=password, api_key=KEY, limit=1)
    written = _every_file(project / ".osmosis")
    assert KEY not in written and "hunter2secret" not in written
    header = json.loads(
        journal_path(project / ".osmosis/evals/keyed/results.json").read_text().splitlines()[0]
    )
    assert header["settings"]["withheld"] == ["api_key"]


def test_a_withheld_key_must_be_given_again_to_resume(project: Path) -> None:
    with StubOpenAI() as stub:
        stub.state.required_key = KEY
        run_eval(CONFIG, name="k", model="stub-model", base_url=stub.url, api_key=KEY, limit=3)
        _killed(project / ".osmosis/evals/k/results.json", keep=2)
        with pytest.raises(InvalidInputError) as refused:
            run_eval(CONFIG, name="k", resume=True)
        assert refused.value.code == "RESUME_MISMATCH" and "api_key" in refused.value.message
        done = run_eval(CONFIG, name="k", resume=True, api_key=KEY)
    assert done.summary.total_runs == 9 and done.summary.errors == 0


# ------------------------------------------------------------------ resume with only a name


def test_a_cancelled_run_resumes_with_only_its_name(project: Path) -> None:
    async def cancelled() -> None:
        progressed = asyncio.Event()

        def on_progress(update: RunProgress) -> None:
            if update.completed >= 4:
                progressed.set()

        task = asyncio.ensure_future(
            arun_eval(
                CONFIG,
                name="cut",
                model="mock/calculator@40",
                limit=8,
                n=2,
                batch_size=2,
                on_progress=on_progress,
            )
        )
        await asyncio.wait_for(progressed.wait(), 30)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(task, 10)

    asyncio.run(cancelled())
    stopped = load_run("cut")  # the document of what finished, written on cancel
    assert stopped.status == "stopped" and 4 <= stopped.summary.total_runs < 16
    assert run_info("cut").status == "stopped"
    result = run_eval(CONFIG, name="cut", resume=True)
    assert result.status == "finished" and result.summary.total_runs == 16
    assert result.config["model"] == "mock/calculator@40" and result.config["n_runs"] == 2


# ------------------------------------------------------------------ what ran, everywhere


def test_what_ran_is_what_every_file_says_ran(project: Path) -> None:
    from osmosis_local_runner.run.share.import_plan import plan_import

    run_eval(CONFIG, name="m", model="mock/flaky-calculator", limit=3, temperature=0.25)
    run_dir = project / ".osmosis/evals/m"
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["inputs"]["model_path"] == "mock/flaky-calculator"
    assert manifest["provenance"]["sampling"] == {"temperature": 0.25}
    assert manifest["provenance"]["settings"]["model"] == "mock/flaky-calculator"
    metrics = json.loads((run_dir / "metrics.json").read_text())
    assert metrics["eval_run"]["model_name"] == "mock/flaky-calculator"
    document = load_run("m")
    assert document.config["model"] == "mock/flaky-calculator"
    assert document.config["sampling"] == {"temperature": 0.25}
    assert [r.model for r in list_runs() if r.name == "m"] == ["mock/flaky-calculator"]
    assert run_info("m").model == "mock/flaky-calculator"
    experiment = plan_import(run_dir).body["run"]["experiment_config"]
    assert experiment["model_path"] == "mock/flaky-calculator"  # what the platform is told
    code, out, _ = cli("--json", "eval", "info", "m", "--local")
    assert code == 0 and "mock/flaky-calculator" in out


def test_a_killed_run_is_first_class_in_list_info_and_load_run(project: Path) -> None:
    """A run killed before it wrote its document: how far it got, the mean so far, and
    what continues it — never blanks, never "does not exist"."""
    run_eval(CONFIG, name="killed", model="mock/flaky-calculator", limit=4, batch_size=1)
    _killed(project / ".osmosis/evals/killed/results.json", keep=5)
    info = run_info("killed")
    assert info.status == "stopped" and info.attempts == 5 and info.total_attempts == 12
    assert info.mean is not None and info.config_path == CONFIG
    loaded = load_run("killed")
    assert loaded.status == "stopped" and loaded.summary.total_runs == 5
    assert loaded.path == Path(".osmosis/evals/killed/results.json").absolute()
    assert load_run(project / ".osmosis/evals/killed").summary.total_runs == 5
    code, out, _ = cli("eval", "info", "killed", "--local")
    assert code == 0 and "5 of 12 attempts" in out
    assert f"osmosis eval run {CONFIG} --name killed" in out
    code, out, _ = cli("eval", "list", "--local")
    assert code == 0 and "5/12" in out


def test_a_request_refused_by_the_cli_is_refused_by_run_eval_with_the_same_code(
    project: Path,
) -> None:
    """The rules of a request live in the request (``RunRequest.check``): a named run's
    options with one results file are refused by both doors, never silently ignored."""
    for keywords, flags in (
        ({"name": "x"}, ["--name", "x"]),
        ({"fresh": True}, ["--fresh"]),
    ):
        with pytest.raises(InvalidInputError) as refused:
            run_eval(CONFIG, output="r.json", model="mock/calculator", limit=1, **keywords)
        code, _, err = cli("eval", "run", CONFIG, "-o", "r.json", "--limit", "1", *flags)
        assert refused.value.code == "RUN_FILE_CONFLICT" and code == 2
        assert "is one results document" in err and "drop -o" in err
        assert not (project / "r.json").exists()
    with pytest.raises(InvalidInputError) as uploading:
        run_eval(CONFIG, output="r.json", upload=object(), limit=1)  # type: ignore[arg-type]
    assert uploading.value.code == "RUN_FILE_CONFLICT"
