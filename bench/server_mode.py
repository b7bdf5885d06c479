"""Server mode against the published CLI: the same rollout server (published osmosis-ai
0.3 SDK, bench/published_rollout_main.py) and the same zero-latency model stub, driven
by `osmosis eval run` (osmosis-client) and by the published `osmosis eval run`.

    python bench/server_mode.py          # prints JSON (with bench/edit_loop.py's); run_benchmarks.py includes both

Measured from outside, by one clock: the rollout server records when each
``POST /rollout`` arrives and each grade is set. Time to first dispatch = first POST −
command start; throughput = rollouts / (last grade − first POST) — the steady state,
start-up and shutdown excluded; controller CPU = the CLI process's own CPU time
(/proc, sampled), per rollout over the same span; likewise the rollout server's. Both use uv on a project that is
already in sync, and the same environment variables.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.published_sdk import (  # noqa: E402
    PUBLISHED_VERSION,
    published_python,
    python312,
    uv,
    uv_env,
)

ROWS = 320
BATCH = 32
TRIALS = int(os.environ.get("BENCH_TRIALS", 3))
TICK = os.sysconf("SC_CLK_TCK")


def workspace(tmp: Path, stub_url: str) -> Path:
    ws = tmp / "ws"
    shutil.copytree(
        ROOT / "examples" / "published-rollout",
        ws,
        ignore=shutil.ignore_patterns(".osmosis", ".venv", "*.run", "__pycache__"),
    )
    rollout = ws / "rollouts" / "calculator"
    (rollout / "main.py").rename(rollout / "scaffold.py")  # the example, imported by:
    shutil.copy(ROOT / "bench" / "published_rollout_main.py", rollout / "main.py")
    (ws / "configs" / "training").mkdir()  # the published CLI's scaffold check
    rows = []
    for i in range(ROWS):
        a, b = 3 + i % 97, 5 + i % 89
        rows.append(json.dumps({"user_prompt": f"What is {a} + {b}?", "label": str(a + b)}))
    (ws / "data" / "bench.jsonl").write_text("\n".join(rows) + "\n")
    (ws / "configs" / "eval" / "bench.toml").write_text(
        f"""[experiment]
rollout = "calculator"
entrypoint = "main.py"
model_path = "openai/stub-model"
dataset = "bench"

[evaluation]
limit = {ROWS}
batch_size = {BATCH}
agent_workflow_timeout_s = 120
grader_timeout_s = 60

[env]
BENCH_EVENTS = "{ws / "events.txt"}"

[secrets]
required = []
"""
    )
    subprocess.run(["git", "init", "-q"], cwd=ws, check=True)  # the published CLI's check
    return ws


def bench_env(python: Path, tmp: Path, url: str) -> dict[str, str]:
    """Both controllers' environment: uv on PATH, the stub as the model, all else in tmp."""
    tool = uv()
    return {
        **uv_env(python),
        "PATH": f"{tool.parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "OPENAI_BASE_URL": url,
        "OPENAI_API_KEY": "bench",
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "OSMOSIS_CONFIG_DIR": str(tmp / "cfg"),
        "HOME": str(tmp / "home"),
        "OSMOSIS_WARM_DIR": str(tmp / "warm"),
    }


def cpu_seconds(pid: int) -> float | None:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / TICK  # utime + stime, own only


def descendants(pid: int) -> list[int]:
    found: list[int] = []
    try:
        tasks = list(Path(f"/proc/{pid}/task").iterdir())
    except OSError:
        return found
    for task in tasks:
        try:
            children = [int(c) for c in (task / "children").read_text().split()]
        except OSError:
            continue
        for child in children:
            found.append(child)
            found.extend(descendants(child))
    return found


def run_once(command: list[str], ws: Path, env: dict[str, str], label: str) -> dict[str, float]:
    events = ws / "events.txt"  # [env] BENCH_EVENTS: what the rollout server is given
    events.unlink(missing_ok=True)
    samples: list[tuple[float, float]] = []
    server: list[tuple[float, float]] = []  # the CLI's descendants (the rollout server)
    started = time.time()
    proc = subprocess.Popen(
        command, cwd=ws, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )

    def sample() -> None:
        while proc.poll() is None:
            cpu = cpu_seconds(proc.pid)
            if cpu is not None:
                samples.append((time.time(), cpu))
            now = time.time()
            server.append((now, sum(cpu_seconds(c) or 0.0 for c in descendants(proc.pid))))
            time.sleep(0.02)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    _, err = proc.communicate(timeout=600)
    sampler.join()
    if proc.returncode != 0:
        raise RuntimeError(f"{label} failed ({proc.returncode}): {err[-2000:]}")
    marks = [line.split() for line in events.read_text().splitlines()]
    posts = sorted(float(m[1]) for m in marks if m[0] == "post")
    graded = sorted(float(m[1]) for m in marks if m[0] == "graded")
    polls = sum(m[0] == "poll" for m in marks)
    assert len(posts) == ROWS and len(graded) == ROWS, (len(posts), len(graded))
    first, last = posts[0], graded[-1]
    span = [cpu for t, cpu in samples if first <= t <= last]
    server_span = [cpu for t, cpu in server if first <= t <= last]
    return {
        "first_dispatch_s": first - started,
        "rollouts_per_s": ROWS / (last - first),
        "cpu_ms_per_rollout": (span[-1] - span[0]) * 1000 / ROWS if len(span) > 1 else 0.0,
        "total_s": time.time() - started,
        "polls_per_rollout": polls / ROWS,
        "server_cpu_ms_per_rollout": (server_span[-1] - server_span[0]) * 1000 / ROWS,
    }


def measure() -> dict[str, Any]:
    python = python312()
    if python is None:
        return {"skipped": "no Python >= 3.12 on this machine"}
    sdk = published_python(python)
    tmp = Path(tempfile.mkdtemp(prefix="osmosis-bench-server-"))
    stub = subprocess.Popen(
        [sys.executable, "-m", "tests.stub_openai"], cwd=ROOT, stdout=subprocess.PIPE, text=True
    )
    try:
        assert stub.stdout is not None
        url = stub.stdout.readline().strip()
        ws = workspace(tmp, url)
        tool = uv()
        # every run cold, as the published CLI's: the rollout server is then the CLI's
        # own child, whose CPU is sampled (bench/edit_loop.py measures warm starts)
        env = {**bench_env(python, tmp, url), "OSMOSIS_WARM": "0"}
        subprocess.run(
            [str(tool), "sync", "-q", "--project", "rollouts/calculator"],
            cwd=ws,
            env=env,
            check=True,
        )
        ours = str(Path(sys.executable).parent / "osmosis")
        theirs = str(sdk.parent / "osmosis")
        ours_cmd = [ours, "eval", "run", "configs/eval/bench.toml", "--base-url", url, "-q"]
        theirs_cmd = [
            theirs,
            "eval",
            "run",
            "configs/eval/bench.toml",
            "--dataset-file",
            "data/bench.jsonl",
            "--yes",
        ]
        # warm both (the first of ours stamps the environment as in sync)
        run_once([*ours_cmd, "-o", "warm.json"], ws, env, "warm-ours")
        run_once(theirs_cmd, ws, env, "warm-theirs")
        ours_runs, theirs_runs = [], []
        for i in range(TRIALS):  # interleaved
            ours_runs.append(run_once([*ours_cmd, "-o", f"o{i}.json"], ws, env, f"ours{i}"))
            theirs_runs.append(run_once(theirs_cmd, ws, env, f"theirs{i}"))
    finally:
        stub.terminate()
        stub.wait(10)
        for socket in (tmp / "warm").glob("*.sock"):
            socket.unlink()  # its warm interpreter exits at its next check
        shutil.rmtree(tmp, ignore_errors=True)

    def median(runs: list[dict[str, float]], key: str) -> float:
        return statistics.median(r[key] for r in runs)

    keys = (
        "first_dispatch_s",
        "rollouts_per_s",
        "cpu_ms_per_rollout",
        "total_s",
        "polls_per_rollout",
        "server_cpu_ms_per_rollout",
    )
    result: dict[str, Any] = {
        "published_version": PUBLISHED_VERSION,
        "rows": ROWS,
        "batch": BATCH,
        "ours": {k: median(ours_runs, k) for k in keys},
        "published": {k: median(theirs_runs, k) for k in keys},
    }
    result["throughput_ratio"] = statistics.median(
        o["rollouts_per_s"] / t["rollouts_per_s"]
        for o, t in zip(ours_runs, theirs_runs, strict=True)
    )
    result["first_dispatch_ratio"] = statistics.median(
        o["first_dispatch_s"] / t["first_dispatch_s"]
        for o, t in zip(ours_runs, theirs_runs, strict=True)
    )
    return result


if __name__ == "__main__":
    from bench.edit_loop import measure as measure_edit_loop

    # throughput beside the published CLI, and the edit–eval loop (first run, re-run,
    # edited re-run to the first rollout) beside it too: one run, one report
    print(json.dumps({"throughput": measure(), "edit_loop": measure_edit_loop()}, indent=2))
