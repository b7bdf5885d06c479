"""Issue 47 against the real trackers: a real MLflow tracking server on loopback (full
``mlflow`` in a venv of its own, cached outside the checkout; read back through its
REST API), W&B in offline mode (its run file read with W&B's own protobuf messages) and
Trackio's local store (read with its own storage class). A training script shaped like
the trackers' docs logs its loss and, every N steps, ``run_eval(log_to=…, step=N)``: the
eval curves land in the same tracker run, at the same steps."""

from __future__ import annotations

import contextlib
import json
import os
import pwd
import signal
import socket
import subprocess
import sys
import textwrap
import time
import urllib.request
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest

from tests.child_output import Child
from tests.e2e.conftest import osmosis_command
from tests.e2e.test_report_browser import browser, invoke
from tests.helpers import quickstart_run

pytestmark = pytest.mark.slow
__all__ = ["browser"]  # a fixture defined beside the report's tests
RUN = quickstart_run(2)
#: the scrubbed environment a child gets (no tracker of the machine's)
TRACKER_VARS = ("MLFLOW_", "WANDB_", "TRACKIO_")


def _cache() -> Path:
    """Heavy environments live outside the checkout (the real home: tests change HOME)."""
    given = os.environ.get("OSMOSIS_TEST_CACHE")
    return Path(given) if given else Path(pwd.getpwuid(os.getuid()).pw_dir) / ".cache/osmosis-ci"


def _mlflow_server_python() -> Path:
    """A venv with the full ``mlflow`` (the server), built once: the newest release not
    newer than our client (``mlflow-skinny``) that installs — a client can come out
    before its server's parts reach the index (3.18.0's ``mlflow-tracing`` did not)."""
    version = metadata.version("mlflow-skinny")
    venv = _cache() / f"mlflow-server-{version}"
    python = venv / "bin" / "python"
    if not (venv / "bin" / "mlflow").exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
        wanted = f"mlflow>={version.split('.')[0]},<={version}"
        installed = subprocess.run(
            [str(python), "-m", "pip", "install", "-q", wanted],
            capture_output=True,
            text=True,
            timeout=900,
        )
        if installed.returncode != 0:
            pytest.skip(
                f"cannot install {wanted} for the server: {installed.stderr.strip()[-300:]}"
            )
    return python


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def mlflow_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    python = _mlflow_server_python()
    where = tmp_path_factory.mktemp("mlflow")
    port = _free_port()
    command = [
        str(python),
        "-m",
        "mlflow",
        "server",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--workers",
        "1",
        "--backend-store-uri",
        f"sqlite:///{where}/db.sqlite",
        "--artifacts-destination",
        str(where / "artifacts"),
    ]
    env = {k: v for k, v in os.environ.items() if not k.startswith(TRACKER_VARS)}
    url = f"http://127.0.0.1:{port}"
    # its own session: the server starts workers and job consumers of its own, and the
    # whole group goes at the end (a consumer ignores SIGTERM: SIGKILL after a grace)
    with Child(command, env=env, cwd=where, start_new_session=True) as child:
        try:
            deadline = time.monotonic() + 120
            while True:
                try:
                    with urllib.request.urlopen(f"{url}/health", timeout=2) as answer:
                        if answer.status == 200:
                            break
                except OSError:
                    pass
                if child.proc.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"the MLflow server did not start:\n{child.output()[-3000:]}")
                time.sleep(0.25)
            yield url
        finally:
            _stop_group(child.proc.pid)
    assert _left_behind(python.parent.parent) == [], "the MLflow server left processes"


def _stop_group(group: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(group, signal.SIGTERM)
    deadline = time.monotonic() + 5
    while _alive_in(group) and time.monotonic() < deadline:
        time.sleep(0.1)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(group, signal.SIGKILL)
    deadline = time.monotonic() + 5
    while _alive_in(group) and time.monotonic() < deadline:
        time.sleep(0.1)


def _alive_in(group: int) -> bool:
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return False
    return True


def _left_behind(venv: Path) -> list[str]:
    """Processes still running from the server's venv (by their command lines; none
    known where there is no /proc)."""
    found: list[str] = []
    if not Path("/proc").is_dir():
        return found
    for proc in Path("/proc").iterdir():
        with contextlib.suppress(OSError):
            if proc.name.isdigit():
                line = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
                if str(venv) in line:
                    found.append(line[:200])
    return found


def _get(url: str, route: str, **query: str) -> Any:
    from urllib.parse import urlencode

    with urllib.request.urlopen(
        f"{url}/api/2.0/mlflow/{route}?{urlencode(query)}", timeout=10
    ) as answer:
        return json.loads(answer.read())


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    for name in list(os.environ):
        if name.startswith(TRACKER_VARS):
            monkeypatch.delenv(name)
    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.setenv("WANDB_DIR", str(tmp_path))
    monkeypatch.setenv("TRACKIO_DIR", str(tmp_path / "trackio"))
    return tmp_path


def test_a_run_logged_to_mlflow_reads_back_whole_and_is_never_duplicated(
    mlflow_url: str, quickstart_project: Path, clean_env: Path
) -> None:
    result = invoke(
        "--json",
        *RUN,
        "--name",
        "step-100",
        "--log-to",
        f"mlflow:{mlflow_url}",
        "--log-step",
        "100",
    )
    assert result.exit_code == 0, result.stderr
    logged = result.json()["resource"]["trackers"][0]
    assert logged["status"] == "logged" and logged["url"].startswith(mlflow_url)
    run = _get(mlflow_url, "runs/get", run_id=logged["run_id"])["run"]
    metrics = {m["key"]: m for m in run["data"]["metrics"]}
    assert metrics["eval/grader/mean"]["value"] == 1.0
    assert metrics["eval/grader/mean"]["step"] == 100
    assert metrics["eval/attempts"]["value"] == 6
    params = {p["key"]: p["value"] for p in run["data"]["params"]}
    assert params["model"] == "mock/calculator" and params["run_name"] == "step-100"
    tags = {t["key"]: t["value"] for t in run["data"]["tags"]}
    assert tags["mlflow.runName"] == "step-100" and "osmosis.local_run_id" in tags
    files = {
        f["path"]
        for f in _get(mlflow_url, "artifacts/list", run_id=logged["run_id"], path="osmosis").get(
            "files", []
        )
    }
    assert files == {"osmosis/results.json", "osmosis/rows.json"}
    with urllib.request.urlopen(
        f"{mlflow_url}/get-artifact?path=osmosis/rows.json&run_uuid={logged['run_id']}", timeout=10
    ) as answer:
        table = json.loads(answer.read())
    assert table["columns"][:3] == ["row", "attempt", "model"] and len(table["data"]) == 6

    # the record lost, a push finds the run by the local run's id: still one MLflow run
    (quickstart_project / ".osmosis/evals/step-100/trackers.json").unlink()
    pushed = invoke("--json", "eval", "push", "step-100", "--to", f"mlflow:{mlflow_url}")
    assert pushed.json()["resource"]["trackers"][0]["into"] == "existing"
    experiment = run["info"]["experiment_id"]
    found = _post(mlflow_url, "runs/search", {"experiment_ids": [experiment]})
    assert [r["info"]["run_name"] for r in found.get("runs", [])] == ["step-100"]


def _post(url: str, route: str, body: dict[str, Any]) -> Any:
    request = urllib.request.Request(
        f"{url}/api/2.0/mlflow/{route}",
        method="POST",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=10) as answer:
        return json.loads(answer.read())


def test_a_tracker_down_fails_nothing_and_push_sends_it_later(
    mlflow_url: str, quickstart_project: Path, clean_env: Path
) -> None:
    down = f"http://127.0.0.1:{_free_port()}"
    result = invoke(*RUN, "--name", "offline", "--log-to", f"mlflow:{down}")
    assert result.exit_code == 0, result.stderr
    assert f"send it later: osmosis eval push offline --to mlflow:{down}" in result.stderr
    pushed = invoke("--json", "eval", "push", "offline", "--to", f"mlflow:{mlflow_url}")
    assert pushed.exit_code == 0 and pushed.json()["resource"]["trackers"][0]["status"] == "logged"


TRAINING = """
import sys

import {tracker}
from osmosis_local_runner import run_eval

{start}
for step in (100, 200):
    {log_loss}
    model = "mock/echo" if step == 200 else "mock/calculator"  # step 200 regressed
    run_eval("configs/eval/quickstart.toml", name=f"step-{{step}}", model=model, limit=2,
             log_to="{tracker}", step=step)
{finish}
"""


def _train(project: Path, tracker: str, start: str, log_loss: str, finish: str, *args: str) -> str:
    """The training script, run as its own program (as its author runs it)."""
    script = project / "train.py"
    script.write_text(
        textwrap.dedent(TRAINING).format(
            tracker=tracker, start=start, log_loss=log_loss, finish=finish
        )
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("OSMOSIS_TOKEN")}
    done = subprocess.run(
        [sys.executable, str(script), *args],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout.strip().splitlines()[-1]


def test_a_training_script_sees_its_eval_curves_beside_its_loss_in_mlflow(
    mlflow_url: str, quickstart_project: Path, clean_env: Path, browser: Any
) -> None:
    run_id = _train(
        quickstart_project,
        "mlflow",
        "mlflow.set_tracking_uri(sys.argv[1])\nmlflow.set_experiment('train')\n"
        "run = mlflow.start_run()",
        "mlflow.log_metric('train/loss', 1 / step, step=step)",
        "mlflow.end_run()\nprint(run.info.run_id)",
        mlflow_url,
    )
    curves = {}
    for key in ("train/loss", "eval/grader/mean"):
        history = _get(mlflow_url, "metrics/get-history", run_id=run_id, metric_key=key)
        curves[key] = [(m["step"], m["value"]) for m in history["metrics"]]
    assert curves == {
        "train/loss": [(100, 0.01), (200, 0.005)],
        "eval/grader/mean": [(100, 1.0), (200, 0.0)],
    }
    run = _get(mlflow_url, "runs/get", run_id=run_id)["run"]
    tags = {t["key"] for t in run["data"]["tags"]}
    assert {"osmosis.eval.step-100", "osmosis.eval.step-200"} <= tags
    # the MLflow UI draws them, one beside the other
    experiment = run["info"]["experiment_id"]
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    try:
        page.goto(f"{mlflow_url}/#/experiments/{experiment}/runs/{run_id}/model-metrics")
        page.get_by_placeholder("Search metric charts").fill("grader/mean|pass_at_1|train/loss")
        page.get_by_text("eval/grader", exact=False).first.wait_for(timeout=30_000)
        page.wait_for_timeout(1500)  # the charts' drawing (a real UI, not ours)
        png = page.screenshot()
        assert len(png) > 20_000
        if keep := os.environ.get("OSMOSIS_SCREENSHOTS"):
            (Path(keep) / "mlflow-eval-curves.png").write_bytes(png)
    finally:
        page.close()


def test_a_training_script_sees_its_eval_curves_beside_its_loss_in_wandb(
    quickstart_project: Path, clean_env: Path
) -> None:
    from tests.wandb_records import config, history

    run_id = _train(
        quickstart_project,
        "wandb",
        "run = wandb.init(project='train')",
        "run.log({'train/loss': 1 / step}, step=step)",
        "run.finish()\nprint(run.id)",
    )
    (found,) = clean_env.glob(f"wandb/offline-run-*-{run_id}/run-{run_id}.wandb")
    rows = [r for r in history(found) if "train/loss" in r]
    assert [(r["_step"], r["train/loss"], r["eval/grader/mean"]) for r in rows] == [
        (100, 0.01, 1),
        (200, 0.005, 0),
    ]
    table = "osmosis/evals/step-100/rows/"  # the attempts, as a W&B table at that step
    assert (rows[0][table + "_type"], rows[0][table + "nrows"]) == ("table-file", 6)
    assert "model" not in config(found)  # logged into the training run: its config is its own


def test_a_run_of_its_own_in_wandb_carries_its_settings(
    quickstart_project: Path, clean_env: Path
) -> None:
    from tests.wandb_records import config, history

    result = invoke("--json", *RUN, "--name", "own", "--log-to", "wandb:evals")
    assert result.exit_code == 0, result.stderr
    run_id = result.json()["resource"]["trackers"][0]["run_id"]
    (found,) = clean_env.glob(f"wandb/offline-run-*-{run_id}/run-{run_id}.wandb")
    assert config(found)["model"] == "mock/calculator"
    assert history(found)[0]["eval/grader/mean"] == 1


def test_trackio_keeps_each_step_in_its_local_store(
    quickstart_project: Path, clean_env: Path
) -> None:
    from trackio.sqlite_storage import SQLiteStorage

    from osmosis_local_runner import run_eval

    for step in (100, 200):
        run_eval(
            "configs/eval/quickstart.toml",
            name=f"step-{step}",
            model="mock/calculator",
            limit=2,
            log_to="trackio:evals",
            step=step,
        )
    for step in (100, 200):
        (logged,) = SQLiteStorage.get_logs("evals", f"step-{step}")
        assert logged["step"] == step and logged["eval/grader/mean"] == 1.0
        assert logged["rows"]["_type"] == "trackio.table"


def test_a_series_is_one_curve_in_mlflow_whichever_command_sent_it(
    mlflow_url: str, quickstart_project: Path, clean_env: Path
) -> None:
    """Issue 52: separate ``eval run --series S --step N`` calls and an ``eval push`` of a
    run that could not reach the server make one MLflow run with one history by step;
    ``MLFLOW_RUN_ID`` is honoured."""
    to = f"mlflow:{mlflow_url}"
    for step, model in ((100, "mock/calculator"), (200, "mock/echo")):
        ran = invoke(
            *RUN,
            "--name",
            f"grpo-{step}",
            "--series",
            "grpo",
            "--step",
            str(step),
            "--model",
            model,
            "--log-to",
            to,
        )
        assert ran.exit_code == 0, ran.stderr
    late = invoke(
        *RUN,
        "--name",
        "grpo-300",
        "--series",
        "grpo",
        "--step",
        "300",
        "--log-to",
        "mlflow:http://127.0.0.1:9",
    )  # down: pushed later
    assert late.exit_code == 0
    pushed = invoke("--json", "eval", "push", "grpo-300", "--to", to)  # its recorded step
    logged = pushed.json()["resource"]["trackers"][0]
    assert logged["into"] == "series" and logged["step"] == 300
    history = _get(
        mlflow_url, "metrics/get-history", run_id=logged["run_id"], metric_key="eval/grader/mean"
    )["metrics"]
    assert [(m["step"], m["value"]) for m in history] == [(100, 1.0), (200, 0.0), (300, 1.0)]
    run = _get(mlflow_url, "runs/get", run_id=logged["run_id"])["run"]
    assert run["info"]["run_name"] == "grpo"
    found = _post(
        mlflow_url,
        "runs/search",
        {
            "experiment_ids": [run["info"]["experiment_id"]],
            "filter": "tags.`osmosis.series` = 'grpo'",
        },
    )
    assert len(found["runs"]) == 1  # one curve

    made = _post(
        mlflow_url,
        "runs/create",
        {"experiment_id": run["info"]["experiment_id"], "run_name": "trainer"},
    )["run"]["info"]["run_id"]
    with_env = subprocess.run(
        [*osmosis_command(), *RUN, "--name", "env-5", "--step", "5", "--log-to", to],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=quickstart_project,
        env={**os.environ, "MLFLOW_RUN_ID": made},
    )
    assert with_env.returncode == 0, with_env.stderr
    history = _get(mlflow_url, "metrics/get-history", run_id=made, metric_key="eval/grader/mean")
    assert [(m["step"], m["value"]) for m in history["metrics"]] == [(5, 1.0)]


def test_a_series_is_one_run_in_wandb_offline(quickstart_project: Path, clean_env: Path) -> None:
    from tests.wandb_records import history

    for step, model in ((200, "mock/echo"), (100, "mock/calculator")):  # any order
        ran = invoke(
            *RUN,
            "--name",
            f"s-{step}",
            "--series",
            "grpo",
            "--step",
            str(step),
            "--model",
            model,
            "--log-to",
            "wandb:evals",
        )
        assert ran.exit_code == 0, ran.stderr
    files = sorted(clean_env.glob("wandb/offline-run-*-series-grpo*/run-series-grpo*.wandb"))
    assert len(files) == 2  # one run id, resumed (W&B syncs them as one run)
    points = sorted(
        (r["eval/step"], r["eval/grader/mean"])
        for f in files
        for r in history(f)
        if "eval/step" in r
    )
    assert points == [(100, 1), (200, 0)]


def test_a_watch_makes_one_curve_in_mlflow_and_in_wandb(
    mlflow_url: str, quickstart_project: Path, clean_env: Path
) -> None:
    """Issue 52's end to end: checkpoints watched against the vLLM double (answers depend on
    the adapter named), each step logged to a real MLflow server and W&B offline as one
    series (its own name: the server is the module's, shared with other series)."""
    from tests.osmosis_local_runner.test_watch import save
    from tests.vllm_lora_double import BASE, running_vllm
    from tests.wandb_records import history

    ckpts = clean_env / "ckpts"
    for step, skill in ((10, "calculator"), (20, "echo"), (30, "calculator")):
        save(ckpts, step, skill)
        (ckpts / f"step_{step}" / "STABLE").touch()
    with running_vllm() as vllm:  # the CLI in a process of its own, as a user runs it
        done = subprocess.run(
            [
                *osmosis_command(),
                "--json",
                "eval",
                "watch",
                "configs/eval/quickstart.toml",
                "--checkpoints",
                str(ckpts),
                "--series",
                "watched",
                "--model",
                BASE,
                "--base-url",
                vllm.url,
                "--limit",
                "2",
                "--once",
                "--log-to",
                f"mlflow:{mlflow_url}",
                "--log-to",
                "wandb:evals",
            ],
            capture_output=True,
            text=True,
            timeout=300,
            cwd=quickstart_project,
            env={k: v for k, v in os.environ.items() if not k.startswith("MLFLOW_")},
        )
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)["resource"]
    assert set(found["finished"]) == {"10", "20", "30"}
    record = json.loads(
        (quickstart_project / ".osmosis/evals/watched-step-30/trackers.json").read_text()
    )["destinations"]
    run_id = record[f"mlflow:{mlflow_url}"]["run_id"]
    points = _get(mlflow_url, "metrics/get-history", run_id=run_id, metric_key="eval/grader/mean")[
        "metrics"
    ]
    assert [(m["step"], m["value"]) for m in points] == [(10, 1.0), (20, 0.0), (30, 1.0)]
    # one id; W&B names a second folder of one second "-1" (its data is there)
    files = clean_env.glob("wandb/offline-run-*-series-watched*/run-series-watched*.wandb")
    steps = sorted(
        (r["eval/step"], r["eval/grader/mean"])
        for f in files
        for r in history(f)
        if "eval/step" in r
    )
    assert steps == [(10, 1), (20, 0), (30, 1)]
