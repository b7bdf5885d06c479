"""Results commands at a million rows (issue 25): ``eval compare`` and ``eval report`` of
two synthetic million-row runs (a transcript per attempt), each in its own process — time
and peak memory — beside the baseline of merely reading both documents' lines (and, for
the report, opening the page in Chromium).

    python bench/scale.py          # prints JSON; run_benchmarks.py includes it
    BENCH_SCALE_ROWS=100000 python bench/scale.py
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
ROWS = int(os.environ.get("BENCH_SCALE_ROWS", 1_000_000))


def make_document(path: Path, rows: int, p: float, seed: int) -> None:
    """A results document as the runner writes it (one row per line), n = 1, a short
    three-message transcript per attempt and a metadata column."""
    rng = random.Random(seed)
    head = {
        "config": {
            "model": f"mock/{seed}",
            "n_runs": 1,
            "pass_threshold": 1.0,
            "eval_fns": ["grader"],
            "dataset": "big.jsonl",
        },
        "summary": {
            "total_rows": rows,
            "total_runs": rows,
            "errored_runs": 0,
            "eval_fns": {"grader": {"mean": p, "pass_at_1": p}},
            "total_tokens": rows * 40,
            "total_duration_ms": 1000,
            "status": "finished",
        },
    }
    with path.open("w") as out:
        parts = [f"  {json.dumps(k)}: {json.dumps(v)}" for k, v in head.items()]
        out.write("{\n" + ",\n".join(parts) + ',\n  "rows": [')
        for i in range(rows):
            ok = rng.random() < p
            answer = str(i if ok else i + 1)
            messages = [
                {"role": "system", "content": "You are a calculator."},
                {"role": "user", "content": f"What is {i} + 0?"},
                {"role": "assistant", "content": answer},
            ]
            run = {
                "run_index": 0,
                "success": True,
                "scores": {"grader": 1.0 if ok else 0.0},
                "duration_ms": 12.5,
                "tokens": 40,
                "error": None,
                "answer": answer,
            }
            digest = hashlib.sha1(str(i).encode()).hexdigest()[:20]
            text = json.dumps(run, separators=(",", ":"))[:-1]
            line = (
                f'{{"row_index": {i}, "row_digest": "{digest}", "prompt": "What is {i} + 0?", '
                f'"expected": "{i}", "metadata": {{"difficulty": "{["easy", "hard"][i % 2]}"}}, '
                f'"runs": [{text},"messages":{json.dumps(messages, separators=(",", ":"))}}}]}}'
            )
            out.write(("\n    " if i == 0 else ",\n    ") + line)
        out.write("\n  ]\n}\n")


#: runs a command and prints the peak RSS of its process tree (KB), from a fresh process
WRAPPER = (
    "import resource, subprocess, sys\n"
    "done = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)\n"
    "sys.stderr.write(done.stderr.decode()[-1000:])\n"
    "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
    "sys.exit(done.returncode)"
)


def timed(command: list[str]) -> dict[str, float]:
    """Wall time and peak RSS (the command's process tree) of one command."""
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", WRAPPER, *command], capture_output=True, text=True)
    elapsed = time.perf_counter() - started
    if done.returncode not in (0, 4):
        raise RuntimeError(f"{command[:3]} failed: {done.stderr[-1000:]}")
    return {"s": elapsed, "rss_mb": int(done.stdout.split()[-1]) / 1024}


def measure() -> dict[str, Any]:
    osmosis = str(Path(sys.executable).parent / "osmosis")
    with tempfile.TemporaryDirectory(prefix="osmosis-bench-scale-") as tmp:
        a, b = Path(tmp) / "a.json", Path(tmp) / "b.json"
        make_document(a, ROWS, 0.6, 1)
        make_document(b, ROWS, 0.55, 2)
        reading = timed(
            [
                sys.executable,
                "-c",
                "import json, sys\nfor p in sys.argv[1:]:\n    for line in open(p, 'rb'):"
                "\n        line = line.strip().rstrip(b',')\n        if line.startswith"
                "(b'{\"row_index'): json.loads(line)",
                str(a),
                str(b),
            ]
        )
        read_orjson = timed(
            [
                sys.executable,
                "-c",
                "import orjson, sys\nfor p in sys.argv[1:]:\n    for line in open(p, 'rb'):"
                "\n        line = line.strip().rstrip(b',')\n        if line.startswith"
                "(b'{\"row_index'): orjson.loads(line)",
                str(a),
                str(b),
            ]
        )
        compare = timed([osmosis, "eval", "compare", str(a), str(b), "--json"])
        report = timed([osmosis, "eval", "report", str(a), str(b), "-o", f"{tmp}/r.html"])
        html_mb = Path(f"{tmp}/r.html").stat().st_size / 1e6
        doc_mb = a.stat().st_size / 1e6
    return {
        "rows": ROWS,
        "doc_mb": doc_mb,
        "read": reading,
        "read_orjson": read_orjson,
        "compare": compare,
        "report": report,
        "report_html_mb": html_mb,
    }


if __name__ == "__main__":
    print(json.dumps(measure(), indent=2))
