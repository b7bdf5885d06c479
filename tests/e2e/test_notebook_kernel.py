"""``run_eval`` in a real notebook kernel (ipykernel, driven by jupyter_client as Jupyter
drives it): the cell's event loop is running, so the run goes on a worker loop — and the
kernel's interrupt (SIGINT to the kernel, as the stop button sends) must stop it within
2 s, keep every finished attempt, leave no thread behind, and let the next cell resume
it with only its name (issue 43)."""

from __future__ import annotations

import json
import os
import queue
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import QUICKSTART

jupyter_client = pytest.importorskip("jupyter_client", reason="the dev extra installs it")
pytest.importorskip("ipykernel", reason="the dev extra installs it")
pytestmark = pytest.mark.slow

START = """
import threading, time
from osmosis_local_runner import run_eval, load_run
before = {t.name for t in threading.enumerate()}
"""
RUN = """
run_eval("configs/eval/quickstart.toml", name="nb", model="mock/calculator@100",
         limit=40, n=4, batch_size=2)
"""


@pytest.fixture
def kernel(tmp_path: Path) -> Iterator[Any]:
    root = tmp_path / "qs"
    shutil.copytree(QUICKSTART, root, ignore=shutil.ignore_patterns(".osmosis"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("OSMOSIS_")}
    env["IPYTHONDIR"] = str(tmp_path / "ipython")  # never the user's profile
    (tmp_path / "home").mkdir(exist_ok=True)
    env["HOME"] = str(tmp_path / "home")
    manager = jupyter_client.KernelManager(kernel_name="python3")
    manager.start_kernel(cwd=str(root), env=env)
    client = manager.client()
    client.start_channels()
    try:
        client.wait_for_ready(timeout=60)
        yield manager, client, root
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)


def execute(client: Any, code: str, timeout: float = 60) -> dict[str, Any]:
    """Run a cell; its reply's content (bounded wait). A cell sent just after another
    one failed may be aborted by the kernel (ipykernel's stop-on-error window): it is
    sent again, as a person runs it again."""
    for _ in range(10):
        msg_id = client.execute(code)
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            assert left > 0, f"the cell did not finish in {timeout}s: {code[:60]!r}"
            try:
                reply = client.get_shell_msg(timeout=left)
            except queue.Empty:
                continue
            if reply["parent_header"].get("msg_id") == msg_id:
                break
        if reply["content"]["status"] != "aborted":
            return dict(reply["content"])
        time.sleep(0.2)
    raise AssertionError(f"the kernel kept aborting {code[:60]!r}")


def value(client: Any, expression: str) -> Any:
    """An expression's value in the kernel (via repr)."""
    import ast

    reply = execute(client, f"__v = repr({expression})")
    assert reply["status"] == "ok", reply
    msg_id = client.execute("print(__v)")  # right after an ok cell: never aborted
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        msg = client.get_iopub_msg(timeout=30)
        if msg["parent_header"].get("msg_id") == msg_id and msg["msg_type"] == "stream":
            return ast.literal_eval(msg["content"]["text"].strip())
    raise AssertionError(f"no value for {expression}")


def test_an_interrupt_stops_run_eval_in_a_kernel_and_the_next_cell_resumes(kernel: Any) -> None:
    manager, client, root = kernel
    assert execute(client, START)["status"] == "ok"
    msg_id = client.execute(RUN)  # 160 attempts × 100 ms, 2 at a time: ~8 s
    journal = root / ".osmosis/evals/nb/results.json.journal.jsonl"
    deadline = time.monotonic() + 30
    while not journal.is_file() or len(journal.read_text().splitlines()) < 5:
        assert time.monotonic() < deadline, "the run never got going"
        time.sleep(0.05)
    manager.interrupt_kernel()
    deadline = time.monotonic() + 30
    while True:
        reply = client.get_shell_msg(timeout=max(0.1, deadline - time.monotonic()))
        if reply["parent_header"].get("msg_id") == msg_id:
            break
    assert reply["content"]["status"] == "error"
    assert reply["content"]["ename"] == "KeyboardInterrupt"
    assert value(client, "sorted({t.name for t in threading.enumerate()} - before)") == []
    done = value(client, "load_run('nb').summary.total_runs")
    # it stopped when interrupted (the whole run would be 160), its attempts kept
    assert value(client, "load_run('nb').status") == "stopped" and 4 <= done < 120
    resumed = execute(
        client, "r = run_eval('configs/eval/quickstart.toml', name='nb', resume=True)", timeout=120
    )
    assert resumed["status"] == "ok", resumed
    assert value(client, "(r.status, r.summary.total_runs)") == ("finished", 160)
    # the docs' dataframes, in the same kernel: every attempt, every model call
    frames = execute(
        client,
        "from osmosis_local_runner import attempts_df, calls_df, runs_df\n"
        "a, c, l = attempts_df(['nb']), calls_df('nb'), runs_df()",
    )
    assert frames["status"] == "ok", frames
    assert value(client, "(len(a), len(c), list(l['name']))") == (160, 160, ["nb"])
    assert value(client, "float(a['score:grader'].mean())") == 1.0


SCRIPT = """
import sys
from osmosis_local_runner import run_eval
try:
    run_eval("configs/eval/quickstart.toml", name="script", model="mock/calculator@100",
             limit=40, n=4, batch_size=2)
except KeyboardInterrupt:
    print("interrupted", flush=True)
    sys.exit(130)
"""


def test_ctrl_c_stops_run_eval_in_a_script_and_keeps_what_finished(tmp_path: Path) -> None:
    """Ctrl-C (SIGINT) in a plain script: the run stops, what finished is written, the
    script sees KeyboardInterrupt — and no rollout or thread keeps the process alive."""
    import signal
    import subprocess
    import sys

    from tests.child_output import Child

    root = tmp_path / "qs"
    shutil.copytree(QUICKSTART, root, ignore=shutil.ignore_patterns(".osmosis"))
    (root / "script.py").write_text(SCRIPT)
    env = {k: v for k, v in os.environ.items() if not k.startswith("OSMOSIS_")}
    journal = root / ".osmosis/evals/script/results.json.journal.jsonl"
    with Child([sys.executable, "script.py"], cwd=root, env=env) as child:
        deadline = time.monotonic() + 30
        while not journal.is_file() or len(journal.read_text().splitlines()) < 5:
            assert time.monotonic() < deadline and child.proc.poll() is None, child.output()
            time.sleep(0.05)
        child.proc.send_signal(signal.SIGINT)
        try:
            code = child.proc.wait(30)
        except subprocess.TimeoutExpired:
            raise AssertionError("the script did not stop: " + child.output()) from None
        child.out.wait_closed(10)
    assert code == 130 and "interrupted" in child.out.text(), child.output()
    document = json.loads((root / ".osmosis/evals/script/results.json").read_text())
    assert document["summary"]["status"] == "stopped"
    assert 4 <= document["summary"]["total_runs"] < 120
