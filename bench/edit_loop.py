"""The edit–eval loop on a published rollout (issue 25): the workspace template's OpenAI
Agents rollout (examples/published-rollout's agents-calculator: openai-agents, LiteLLM,
FastAPI), each run timed from the command's start to the first ``POST /rollout`` the
rollout server receives (recorded by the server itself, one clock):

- first run: nothing warm (a new warm directory);
- re-run, no change: the warm interpreter ready;
- re-run after an edit of the rollout's own code (``main.py`` changed each time);
- the same three with warm starts off (``OSMOSIS_WARM=0``: every run cold);
- the same three in another layout: the rollout's own ``rollouts/<name>/.venv`` (synced in
  place, ``--rollout-python``), whose site-packages lie inside the rollout's folder;
- the published CLI's run (it has no warm path: every run is a first run).

    python bench/edit_loop.py      # prints JSON; run_benchmarks.py includes it
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.server_mode import bench_env  # noqa: E402
from tests.published_sdk import PUBLISHED_VERSION, published_python, python312, uv  # noqa: E402

TRIALS = int(os.environ.get("BENCH_TRIALS", 3))
ROWS = 4
MIDDLEWARE = """
    @app.middleware("http")
    async def _bench_mark(request, call_next):  # the benchmark's clock
        if request.method == "POST" and request.url.path == "/rollout":
            with open(os.environ["BENCH_EVENTS"], "a") as f:
                f.write(f"post {time.time():.6f}\\n")
        return await call_next(request)
"""


def workspace(tmp: Path) -> Path:
    ws = tmp / "ws"
    shutil.copytree(
        ROOT / "examples" / "published-rollout",
        ws,
        ignore=shutil.ignore_patterns(".osmosis", ".venv", "*.run", "__pycache__"),
    )
    main = ws / "rollouts" / "agents-calculator" / "main.py"
    text = main.read_text().replace("import os\n", "import os\nimport time\n", 1)
    text = text.replace("    uvicorn.run(app,", MIDDLEWARE + "    uvicorn.run(app,", 1)
    main.write_text(text)
    rows = [{"user_prompt": f"What is {i} + {i}?", "label": str(2 * i)} for i in range(ROWS)]
    (ws / "data" / "edit.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (ws / "configs" / "training").mkdir(exist_ok=True)
    (ws / "configs" / "eval" / "edit.toml").write_text(
        '[experiment]\nrollout = "agents-calculator"\nentrypoint = "main.py"\n'
        'model_path = "openai/stub-model"\ndataset = "edit"\n\n'
        f"[evaluation]\nlimit = {ROWS}\nbatch_size = {ROWS}\nagent_workflow_timeout_s = 60\n"
        f'grader_timeout_s = 30\n\n[env]\nBENCH_EVENTS = "{ws / "events.txt"}"\n\n'
        "[secrets]\nrequired = []\n"
    )
    subprocess.run(["git", "init", "-q"], cwd=ws, check=True)
    return ws


def to_first_post(command: list[str], ws: Path, env: dict[str, str]) -> float:
    events = ws / "events.txt"
    events.unlink(missing_ok=True)
    started = time.time()
    done = subprocess.run(command, cwd=ws, env=env, capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        raise RuntimeError(f"{command[0]} failed ({done.returncode}): {done.stderr[-2000:]}")
    posts = [float(line.split()[1]) for line in events.read_text().splitlines()]
    return min(posts) - started


def edit(ws: Path, n: int) -> None:
    main = ws / "rollouts" / "agents-calculator" / "main.py"
    main.write_text(main.read_text() + f"\n# edit {n}\n")


def wait_ready(directory: Path, seconds: float = 120.0) -> None:
    deadline = time.monotonic() + seconds
    while not any(directory.glob("*.ready")):
        if time.monotonic() > deadline:
            raise RuntimeError("the warm interpreter did not get ready")
        time.sleep(0.1)


def measure() -> dict[str, Any]:
    python = python312()
    if python is None:
        return {"skipped": "no Python >= 3.12 on this machine"}
    sdk = published_python(python)
    tmp = Path(tempfile.mkdtemp(prefix="osmosis-bench-edit-"))
    stub = subprocess.Popen(
        [sys.executable, "-m", "tests.stub_openai"], cwd=ROOT, stdout=subprocess.PIPE, text=True
    )
    try:
        assert stub.stdout is not None
        url = stub.stdout.readline().strip()
        ws = workspace(tmp)
        tool = uv()
        env = bench_env(python, tmp, url)
        subprocess.run(
            [str(tool), "sync", "-q", "--project", "rollouts/agents-calculator"],
            cwd=ws,
            env=env,
            check=True,
        )
        ours = [
            str(Path(sys.executable).parent / "osmosis"),
            "eval",
            "run",
            "configs/eval/edit.toml",
            "--base-url",
            url,
            "-q",
        ]
        theirs = [
            str(sdk.parent / "osmosis"),
            "eval",
            "run",
            "configs/eval/edit.toml",
            "--dataset-file",
            "data/edit.jsonl",
            "--yes",
        ]
        to_first_post([*ours, "-o", "sync.json"], ws, {**env, "OSMOSIS_WARM": "0"})  # in sync
        folder = ws / "rollouts" / "agents-calculator" / ".venv"  # the layout of its own venv
        subprocess.run(
            [str(tool), "sync", "-q", "--project", "rollouts/agents-calculator"],
            cwd=ws,
            env={**env, "UV_PROJECT_ENVIRONMENT": str(folder)},
            check=True,
        )
        results: dict[str, list[float]] = {
            k: []
            for k in (
                "first",
                "no_change",
                "edited",
                "cold_first",
                "cold_no_change",
                "cold_edited",
                "venv_first",
                "venv_no_change",
                "venv_edited",
                "published",
            )
        }
        inside = [*ours, "--rollout-python", "rollouts/agents-calculator/.venv"]
        for trial in range(TRIALS):
            warm = {**env, "OSMOSIS_WARM": "1", "OSMOSIS_WARM_DIR": str(tmp / f"warm{trial}")}
            cold = {**env, "OSMOSIS_WARM": "0"}
            results["first"].append(to_first_post([*ours, "-o", f"a{trial}.json"], ws, warm))
            wait_ready(tmp / f"warm{trial}")
            results["no_change"].append(to_first_post([*ours, "-o", f"b{trial}.json"], ws, warm))
            edit(ws, trial)
            results["edited"].append(to_first_post([*ours, "-o", f"c{trial}.json"], ws, warm))
            results["cold_first"].append(to_first_post([*ours, "-o", f"d{trial}.json"], ws, cold))
            results["cold_no_change"].append(
                to_first_post([*ours, "-o", f"e{trial}.json"], ws, cold)
            )
            edit(ws, trial + 100)
            results["cold_edited"].append(to_first_post([*ours, "-o", f"f{trial}.json"], ws, cold))
            venv = {**env, "OSMOSIS_WARM": "1", "OSMOSIS_WARM_DIR": str(tmp / f"venv{trial}")}
            results["venv_first"].append(to_first_post([*inside, "-o", f"g{trial}.json"], ws, venv))
            wait_ready(tmp / f"venv{trial}")
            results["venv_no_change"].append(
                to_first_post([*inside, "-o", f"h{trial}.json"], ws, venv)
            )
            edit(ws, trial + 200)
            results["venv_edited"].append(
                to_first_post([*inside, "-o", f"i{trial}.json"], ws, venv)
            )
            results["published"].append(to_first_post(theirs, ws, env))
            for directory in (f"warm{trial}", f"venv{trial}"):
                for socket_file in (tmp / directory).glob("*.sock"):
                    socket_file.unlink()  # its interpreter exits at its next idle check
    finally:
        stub.terminate()
        stub.wait(10)
        shutil.rmtree(tmp, ignore_errors=True)
    medians = {k: statistics.median(v) for k, v in results.items()}
    return {
        "published_version": PUBLISHED_VERSION,
        "rows": ROWS,
        "trials": TRIALS,
        "to_first_post_s": medians,
    }


if __name__ == "__main__":
    print(json.dumps(measure(), indent=2))
