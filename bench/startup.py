"""CLI start-up (issue 25): ``python -c pass`` as the baseline, the ``osmosis_ai`` start-up
hook, ``osmosis --help``, ``osmosis eval --help`` and every group's help page, timed with
our packages byte-compiled as an installed wheel has them.

    python bench/startup.py       # prints JSON; run_benchmarks.py includes it
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]

#: every group's help page and the heaviest commands' (the issue: each stays <= 120 ms)
GROUP_HELP = [
    ["auth"],
    ["workspace"],
    ["eval", "run"],
    ["eval", "submit"],
    ["eval", "compare"],
    ["rollout"],
    ["template"],
    ["dataset"],
    ["secret"],
    ["doctor"],
    ["serve"],
    ["test"],
]


def compile_sources() -> None:
    """Byte-compile our packages, as installing a wheel does: an editable checkout under
    PYTHONDONTWRITEBYTECODE (this machine) would otherwise compile every module from
    source at each start (~30 ms of `compile`), which no installed CLI pays."""
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", "cli", "osmosis_client", "local_runner"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    )


def command_ms(args: list[str], repeat: int = 15) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        subprocess.run(args, capture_output=True, check=True)
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def hook_cost_ms(runs: int = 9) -> tuple[float, float]:
    """The start-up hook's own import time and all of ``site`` (``-X importtime``,
    medians): what every interpreter pays for ``import osmosis_ai`` working anywhere."""
    hook, site = [], []
    for _ in range(runs):
        err = subprocess.run(
            [sys.executable, "-X", "importtime", "-c", "pass"],
            capture_output=True,
            text=True,
            check=True,
        ).stderr
        for line in err.splitlines():
            fields = [f.strip() for f in line.removeprefix("import time:").split("|")]
            if len(fields) == 3 and fields[2] == "_osmosis_ai_hook":
                hook.append(int(fields[0]) / 1000)
            if len(fields) == 3 and fields[2] == "site":
                site.append(int(fields[1]) / 1000)
    return statistics.median(hook or [0.0]), statistics.median(site or [0.0])


def measure() -> dict[str, Any]:
    osmosis = str(Path(sys.executable).parent / "osmosis")
    compile_sources()
    results: dict[str, Any] = {"python_startup_ms": command_ms([sys.executable, "-c", "pass"])}
    results["osmosis_ai_hook_ms"], results["site_ms"] = hook_cost_ms()
    results["help_ms"] = command_ms([osmosis, "--help"])
    results["eval_help_ms"] = command_ms([osmosis, "eval", "--help"])
    results["group_help_ms"] = {
        " ".join(words): command_ms([osmosis, *words, "--help"], repeat=7) for words in GROUP_HELP
    }
    results["import_httpx_ms"] = command_ms(
        [sys.executable, "-c", "import httpx, pydantic, rich.console"]
    )
    return results


if __name__ == "__main__":
    print(json.dumps(measure(), indent=2))
