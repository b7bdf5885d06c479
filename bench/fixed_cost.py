"""A run's fixed cost (issue 43): the time a 2,000-row ``osmosis eval run`` spends outside
its dispatch window — interpreter start-up, imports, the config and dataset checks, the
plan; after the last answer, the results document, the published files and the exit —
and the run's peak memory, beside the same measure of another checkout.

Measured from outside, by one clock: a loopback stub in this process notes when the
first request arrives and when the last answer leaves; the CLI runs in a child process.
Fixed time = (first request − spawn) + (exit − last answer). The stub answers at once, so
the window itself is the runner's own work and is left out. Peak memory is the child's
own high-water mark (``VmHWM``), read as it exits: the kernel's ``ru_maxrss`` would
count the parent's pages the child shared until its ``exec`` (a large benchmark process
made every child look 690 MB), and scale.py's middle process would add its own start-up
to the time measured.

    python bench/fixed_cost.py                 # this checkout beside the baseline
    python bench/fixed_cost.py --other /path/venv/bin/python   # beside another install

The baseline is the commit before model calls moved to aiohttp (``BEFORE``), checked out
and installed (editable, as this checkout is) under ~/.cache/osmosis-bench on first use.
Prints JSON (medians of ``--trials`` interleaved runs); run_benchmarks.py includes it.
"""

from __future__ import annotations

import argparse
import asyncio
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
ROWS = 2000
BEFORE = "fd8c184"  # cb5ea9e^: the last commit with model calls on our own HTTP client
CACHE = Path.home() / ".cache" / "osmosis-bench"


class Clocked:
    """An OpenAI-compatible stub on loopback (its own thread and loop) that notes the
    arrival of the first request and the departure of the last answer."""

    def __init__(self) -> None:
        self.first: float | None = None
        self.last = 0.0
        self.count = 0
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self.port = 0
        threading.Thread(target=self._serve, daemon=True).start()
        self._ready.wait(10)

    def reset(self) -> None:
        self.first, self.last, self.count = None, 0.0, 0

    async def _answer(self, request: Any) -> Any:
        from aiohttp import web

        if self.first is None:
            self.first = time.monotonic()
        body = await request.json()
        prompt = body["messages"][-1]["content"]
        numbers = [int(w.strip("?")) for w in prompt.split() if w.strip("?").isdigit()]
        answer = {
            "id": "c",
            "object": "chat.completion",
            "model": body.get("model", "m"),
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "stop",
                    "message": {"role": "assistant", "content": str(sum(numbers))},
                }
            ],
            "usage": {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12},
        }
        self.count += 1
        response = web.json_response(answer)
        self.last = time.monotonic()
        return response

    def _serve(self) -> None:
        from aiohttp import web

        asyncio.set_event_loop(self._loop)
        app = web.Application()
        app.router.add_post("/v1/chat/completions", self._answer)
        runner = web.AppRunner(app, access_log=None)
        self._loop.run_until_complete(runner.setup())
        site = web.TCPSite(runner, "127.0.0.1", 0)
        self._loop.run_until_complete(site.start())
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self._ready.set()
        self._loop.run_forever()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"


def project(where: Path) -> Path:
    """The quickstart with a 2,000-row dataset."""
    root = where / "qs"
    shutil.copytree(
        ROOT / "examples" / "quickstart", root, ignore=shutil.ignore_patterns(".osmosis")
    )
    with (root / "data" / "big.jsonl").open("w") as out:
        for i in range(ROWS):
            row = {"user_prompt": f"What is {i} + {i + 1}?", "ground_truth": str(2 * i + 1)}
            out.write(json.dumps(row) + "\n")
    return root


def one(python: str, root: Path, stub: Clocked, tag: str, trial: int) -> dict[str, float]:
    """One run of ``python -m osmosis_cli`` (time outside the window, peak MB)."""
    stub.reset()
    peak = root / f".peak-{tag}-{trial}"
    command = [
        python,
        "-c",
        _PEAK,
        "eval",
        "run",
        "configs/eval/quickstart.toml",
        "--model",
        "stub-model",
        "--base-url",
        stub.url,
        "--dataset",
        "data/big.jsonl",
        "--limit",
        str(ROWS),
        "--n",
        "1",
        "--batch-size",
        "64",
        "-o",
        f"out-{tag}-{trial}.json",
        "-q",
    ]
    # as installed: modules load from their bytecode caches (pip writes them; a session
    # with PYTHONDONTWRITEBYTECODE=1 would compile every module of ours from source)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["OSMOSIS_BENCH_PEAK"] = str(peak)
    spawned = time.monotonic()
    proc = subprocess.Popen(
        command, cwd=root, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    assert proc.stderr is not None
    errors = proc.stderr.read()  # to the end: the child has closed it as it exits
    proc.wait()
    ended = time.monotonic()
    # (older versions probed the endpoint with a request of its own first)
    assert proc.returncode == 0 and stub.count >= ROWS and stub.first is not None, errors[-2000:]
    rss_kib = int(peak.read_text())
    return {
        "fixed_s": (stub.first - spawned) + (ended - stub.last),
        "start_s": stub.first - spawned,
        "end_s": ended - stub.last,
        "window_s": stub.last - stub.first,
        "peak_mb": rss_kib / 1024,
    }


#: the console script as installed, with its own peak memory written as it exits
_PEAK = """
import atexit, os, runpy, sys

def peak():
    with open("/proc/self/status") as status:
        found = next(line for line in status if line.startswith("VmHWM:"))
    with open(os.environ["OSMOSIS_BENCH_PEAK"], "w") as out:
        out.write(found.split()[1])

atexit.register(peak)
sys.argv = ["osmosis", *sys.argv[1:]]
runpy.run_module("osmosis_cli", run_name="__main__", alter_sys=True)
"""


def measure(pythons: dict[str, str], trials: int) -> dict[str, Any]:
    stub = Clocked()
    found: dict[str, list[dict[str, float]]] = {name: [] for name in pythons}
    with tempfile.TemporaryDirectory() as scratch:
        root = project(Path(scratch))
        for name, python in pythons.items():  # warm: bytecode caches, the OS's file cache
            one(python, root, stub, name, -1)
        for trial in range(trials):  # interleaved: drift hits every variant alike
            for name, python in pythons.items():
                found[name].append(one(python, root, stub, name, trial))
    return {
        name: {key: statistics.median(r[key] for r in runs) for key in runs[0]}
        for name, runs in found.items()
    }


def baseline_python() -> str:
    """The baseline commit's interpreter (checked out and installed once, then cached)."""
    tree, venv = CACHE / "before-aiohttp", CACHE / "before-venv"
    if not (tree / "pyproject.toml").exists():
        CACHE.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            ["git", "-C", str(ROOT), "worktree", "add", "--detach", "-f", str(tree), BEFORE],
            check=True,
            capture_output=True,
        )
    python = venv / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q", "-e", str(tree)], check=True)
    return str(python)


def compared(trials: int = 9) -> dict[str, Any]:
    """This checkout beside the baseline commit: run_benchmarks.py's section."""
    found = measure({"this": sys.executable, "before": baseline_python()}, trials)
    return {**found, "before_commit": BEFORE, "rows": ROWS, "trials": trials}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--other", help="another install's python (default: the baseline commit)")
    parser.add_argument("--trials", type=int, default=9)
    args = parser.parse_args()
    if args.other:
        found = measure({"this": sys.executable, "other": args.other}, args.trials)
    else:
        found = compared(args.trials)
    print(json.dumps(found, indent=2))


if __name__ == "__main__":
    main()
