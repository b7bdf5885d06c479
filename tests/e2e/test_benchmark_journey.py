"""A benchmark run on the loopback platform (issue 37): the installed ``osmosis benchmark``
submits a config from outside any checkout (a secret not stored is named first, nothing
created), follows the run to finished, downloads its outputs with a file cut short
mid-answer and resumed from where it stopped, and a re-run fetches nothing."""

from __future__ import annotations

import hashlib
import time
from pathlib import Path

import pytest

from tests import envelopes
from tests.e2e.conftest import Run
from tests.e2e.platform_benchmarks import outputs
from tests.e2e.platform_double import PlatformDouble

pytestmark = pytest.mark.slow

CONFIG = """\
[experiment]
benchmark = "terminal-bench-2-1"

[execution]
attempts_per_task = 1

[[agents]]
harness = "codex"

[agents.model]
type = "provider"
model = "openai/gpt-5.2"
api_key_secret = "OPENAI_API_KEY"
"""


def test_submitted_followed_and_downloaded_with_a_file_resumed(
    run_osmosis: Run, platform: PlatformDouble, tmp_path: Path
) -> None:
    env = {"OSMOSIS_TOKEN": platform.state.token, "OSMOSIS_WORKSPACE": "acme"}
    config = tmp_path / "bench.toml"
    config.write_text(
        CONFIG.replace("[[agents]]", '[verifier]\nrequired = ["VLM_KEY"]\n\n[[agents]]')
    )
    unstored = run_osmosis("benchmark", "submit", str(config), "--yes", extra_env=env)
    assert unstored.returncode == 2 and "Could not find secret(s): VLM_KEY" in unstored.stderr
    assert not platform.requests("POST", "/api/cli/benchmark-runs")

    config.write_text(CONFIG)
    submitted = run_osmosis("--json", "benchmark", "submit", str(config), "--yes", extra_env=env)
    assert submitted.returncode == 0, submitted.stderr
    name = envelopes.stdout_document(submitted.stdout)["resource"]["name"]
    deadline = time.monotonic() + 20
    while True:
        shown = run_osmosis("--json", "benchmark", "runs", "info", name, extra_env=env)
        run = envelopes.data(shown.stdout)["benchmark_run"]
        if run["status"] == "finished" or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    assert run["status"] == "finished" and run["best_pass_at_1"] == 0.5

    key = f"bench/{run['id']}/results.csv"
    platform.hosted.state.truncate[key] = 1  # the first answer stops half-way
    fetched = run_osmosis(
        "--json", "benchmark", "runs", "download", name, "--type", "all", extra_env=env
    )
    assert fetched.returncode == 0, fetched.stderr
    resource = envelopes.stdout_document(fetched.stdout)["resource"]
    root = tmp_path / ".osmosis" / "benchmarks" / name
    assert resource["output_path"] == str(root) and resource["files_downloaded"] == 4
    for path, data in outputs(run["id"]).items():
        assert hashlib.sha256((root / path).read_bytes()).digest() == hashlib.sha256(data).digest()
    gets = [r for r in platform.requests("GET", f"/storage/{key}")]
    assert len(gets) == 2 and gets[1].headers.get("Range", "").startswith("bytes=")
    assert gets[1].headers["Range"] != "bytes=0-"  # resumed where the cut left it

    again = run_osmosis(
        "--plain", "benchmark", "runs", "download", name, "--type", "all", extra_env=env
    )
    assert again.returncode == 0 and "Downloaded 0 files (0 B)" in again.stdout
    assert "(4 already up to date)" in again.stdout
    assert len(platform.requests("GET", f"/storage/{key}")) == 2
    stop = run_osmosis("benchmark", "runs", "stop", name, "--yes", extra_env=env)
    assert stop.returncode == 1 and "already finished" in stop.stderr
    for result in (unstored, submitted, fetched, again, stop):
        assert platform.state.token not in result.stdout + result.stderr
        assert "Traceback" not in result.stderr
