"""The hosted workflow with the installed `osmosis` against the loopback platform, from a
fresh workspace to a per-sample report: validate and upload a dataset (multipart, one
part failing once) → store a secret → submit → wait → download (one file cut short and
resumed) → compare with a local run of the same config → report → retry → upload the
local run. Then the faults: a part that keeps failing (the upload is aborted), a manifest
path with `..`, a file whose hash does not match, a 401 mid-download."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests import envelopes
from tests.e2e.conftest import Run
from tests.e2e.platform_double import PlatformDouble
from tests.gitrepo import git

pytestmark = pytest.mark.slow

QUICKSTART = Path(__file__).resolve().parents[2] / "examples" / "quickstart"
CONFIG = "configs/eval/quickstart.toml"
SECRET = "calc-key-e2e-9d1b"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """The quickstart as a synced workspace: committed, pushed, origin org/demo; its
    config needs a secret."""
    project = tmp_path / "repo" / "project"
    shutil.copytree(QUICKSTART, project, ignore=shutil.ignore_patterns(".osmosis"))
    config = project / CONFIG
    config.write_text(config.read_text() + '\n[secrets]\nrequired = ["CALC_KEY"]\n')
    git(project, "init", "-q", "-b", "main")
    git(project, "add", "-A")
    git(project, "commit", "-q", "-m", "init")
    bare = tmp_path / "repo" / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    git(project, "remote", "add", "origin", str(bare))
    git(project, "push", "-q", "origin", "main")
    git(project, "remote", "set-url", "origin", "git@github.com:Org/Demo.git")
    return project


@pytest.fixture
def osmosis(run_osmosis: Run, platform: PlatformDouble, workspace: Path) -> Run:
    env = {"OSMOSIS_TOKEN": platform.state.token, "OSMOSIS_WORKSPACE": "acme"}

    def run(*args: str, **kw: object) -> subprocess.CompletedProcess[str]:
        result = run_osmosis(*args, extra_env=env, cwd=workspace, timeout=90, **kw)
        for text in (result.stdout, result.stderr):
            assert platform.state.token not in text and SECRET not in text
            assert "Traceback" not in text
        return result

    return run


def fail_puts(platform: PlatformDouble, suffix: str, *, times: int, kind: str = "status") -> None:
    """The storage answers 503 to (or with ``kind="slow"``: stalls 60 s on) the next
    ``times`` PUTs of a path ending in ``suffix``."""
    from tests.e2e.platform_double import Fault

    original, left = platform._take_fault, [times]

    def take(method: str, path: str) -> Fault | None:
        if method == "PUT" and path.endswith(suffix) and left[0] > 0:
            left[0] -= 1
            return Fault(method, path, kind, status=503, seconds=60.0)
        return original(method, path)

    platform._take_fault = take  # type: ignore[method-assign]


def test_from_a_fresh_workspace_to_a_per_sample_report(
    osmosis: Run, platform: PlatformDouble, workspace: Path
) -> None:
    hosted = platform.hosted
    hosted.state.secrets.clear()
    hosted.part_size = 2048  # the 7.6 KB dataset goes up in 4 parts
    dataset = workspace / "data" / "arithmetic.jsonl"

    assert osmosis("dataset", "validate", str(dataset)).returncode == 0
    fail_puts(platform, "/part2", times=1)  # one part fails once, then goes up
    uploaded = osmosis("--json", "dataset", "upload", "data/arithmetic.jsonl", "-y")
    assert uploaded.returncode == 0, uploaded.stderr
    record = hosted.state.datasets["arithmetic"]
    assert record["status"] == "uploaded" and record["row_count"] == 50
    assert hosted.state.storage[f"datasets/{record['id']}"].data == dataset.read_bytes()
    part2 = [r for r in platform.state.received if r.method == "PUT" and r.path.endswith("/part2")]
    assert len(part2) == 2
    preview = osmosis("--json", "dataset", "preview", "arithmetic", "--rows", "2")
    assert len(envelopes.data(preview.stdout)["rows"]) == 2

    refused = osmosis("eval", "submit", CONFIG, "--yes")
    assert refused.returncode == 2 and "CALC_KEY" in refused.stderr
    assert "osmosis secret set CALC_KEY" in refused.stderr
    assert not platform.requests("POST", "/api/cli/eval-runs")
    stored = osmosis("secret", "set", "CALC_KEY", "--scope", "workspace", input=SECRET + "\n")
    assert stored.returncode == 0, stored.stderr
    assert hosted.state.secrets[0]["_value"] == SECRET

    submitted = osmosis("--json", "eval", "submit", CONFIG, "--yes", "--wait")
    assert submitted.returncode == 0, submitted.stderr
    name = envelopes.resource(submitted.stdout)["name"]
    run = platform._find(name)
    assert run is not None
    hosted.state.truncate[f"runs/{run.id}/trajectories/row_3_run_1.json"] = 1
    downloaded = osmosis("--json", "eval", "download", name)
    assert downloaded.returncode == 0, downloaded.stderr
    resource = envelopes.resource(downloaded.stdout)
    assert resource["files_failed"] == [] and resource["files_downloaded"] == 2 + 20 * 3
    root = Path(resource["output_path"])
    outputs = hosted.outputs(run)
    for path in ("summary.jsonl", "metrics.json", "trajectories/row_3_run_1.json"):
        assert (root / path).read_bytes() == outputs[path]
    again = osmosis("--json", "eval", "download", name)
    assert envelopes.resource(again.stdout)["files_skipped"] == 62

    (workspace / "local.env").write_text(f"CALC_KEY={SECRET}\n")
    local = osmosis("--json", "eval", "run", CONFIG, "--name", "dry", "--secrets-file", "local.env")
    assert local.returncode == 0, local.stderr
    compared = osmosis("--json", "eval", "compare", name, "dry")
    assert compared.returncode == 0, compared.stderr
    comparison = envelopes.data(compared.stdout)
    assert comparison["paired_rows"] == 20  # paired by prompt: the same 20 rows
    reported = osmosis("eval", "report", name, "dry", "-o", "report.html")
    assert reported.returncode == 0, reported.stderr
    assert (workspace / "report.html").stat().st_size > 10_000

    retried = osmosis("--json", "eval", "retry", name, "-y")
    assert retried.returncode == 0, retried.stderr
    assert hosted.state.retries[-1]["run"] == name

    published = osmosis("--json", "eval", "upload", "dry")
    assert published.returncode == 0, published.stderr
    session = next(iter(hosted.state.imports.values()))
    assert session["status"] == "finalized" and session["body"]["run"]["name"] == "dry"
    assert envelopes.resource(published.stdout)["eval_run_name"] == "imported-dry"


def test_a_part_that_keeps_failing_aborts_the_upload(
    osmosis: Run, platform: PlatformDouble, workspace: Path
) -> None:
    platform.hosted.part_size = 2048
    fail_puts(platform, "/part2", times=99)  # 5 tries, then the dataset is aborted
    result = osmosis("--json", "dataset", "upload", "data/arithmetic.jsonl", "-y")
    assert result.returncode == 1
    assert envelopes.error_of(result.stderr)["code"] != "INTERNAL", result.stderr
    assert platform.hosted.state.datasets["arithmetic"]["status"] == "cancelled"
    puts = [r for r in platform.state.received if r.method == "PUT" and r.path.endswith("/part2")]
    assert len(puts) == 5
    assert platform.requests("POST", "/api/cli/datasets/")[-1].path.endswith("/abort")


def test_download_faults_fail_files_never_the_directory(
    osmosis: Run, platform: PlatformDouble, workspace: Path
) -> None:
    platform.hosted.state.datasets["arithmetic"] = {
        "id": "ds-x",
        "file_name": "arithmetic",
        "status": "uploaded",
        "created_at": "2026-11-24T10:00:00Z",
        "_rows": [json.loads(line) for line in (workspace / "data" / "arithmetic.jsonl").open()],
    }
    submitted = osmosis(
        "--json",
        "eval",
        "submit",
        CONFIG,
        "--yes",
        "--wait",
        "--secrets-file",
        "-",
        input=f"CALC_KEY={SECRET}\n",
    )
    assert submitted.returncode == 0, submitted.stderr
    name = envelopes.resource(submitted.stdout)["name"]
    run = platform._find(name)
    assert run is not None
    outputs = platform.hosted.outputs
    tampered = dict(outputs(run))

    def evil(r: object) -> dict[str, bytes]:
        files = dict(tampered)
        files["../escape.txt"] = b"x"
        return files

    platform.hosted.outputs = evil  # type: ignore[method-assign]
    original_get = platform.hosted.get

    def corrupt(key: str, range_header: str | None) -> tuple[int, bytes, dict[str, str]]:
        status, data, headers = original_get(key, range_header)
        if key.endswith("row_0_run_0.json"):
            data = data.replace(b"answer", b"ANSWER")  # same size, another hash
        return status, data, headers

    platform.hosted.get = corrupt  # type: ignore[method-assign]
    result = osmosis("--json", "eval", "download", name, "-o", "out")
    assert result.returncode == 1
    document = envelopes.stdout_document(result.stdout)
    failed = {f["path"]: f["error"] for f in document["resource"]["files_failed"]}
    assert set(failed) == {"../escape.txt", "trajectories/row_0_run_0.json"}
    assert "SHA-256" in failed["trajectories/row_0_run_0.json"]
    assert not (workspace / "escape.txt").exists()
    assert not (workspace / "out" / "trajectories" / "row_0_run_0.json").exists()
    platform.hosted.get = original_get  # type: ignore[method-assign]
    platform.hosted.outputs = outputs  # type: ignore[method-assign]

    platform.inject(
        "POST",
        f"/api/cli/eval-runs/{run.id}/samples/download-urls",
        "status",
        status=401,
        body={"code": "TOKEN_EXPIRED", "message": "token expired"},
    )
    expired = osmosis("eval", "download", name, "-o", "out2")
    assert expired.returncode == 3 and "osmosis login" in expired.stderr
    fixed = osmosis("--json", "eval", "download", name, "-o", "out")
    assert fixed.returncode == 0, fixed.stderr
    data = (workspace / "out" / "trajectories" / "row_0_run_0.json").read_bytes()
    assert (
        hashlib.sha256(data).hexdigest()
        == hashlib.sha256(outputs(run)["trajectories/row_0_run_0.json"]).hexdigest()
    )


def test_a_killed_upload_is_cleaned_up_by_the_next_one(
    osmosis: Run, platform: PlatformDouble, workspace: Path, tmp_path: Path
) -> None:
    import os
    import signal
    import time

    from tests.e2e.conftest import osmosis_command

    platform.hosted.part_size = 2048
    fail_puts(platform, "/part2", times=1, kind="slow")  # the first upload stalls there
    env = (
        {k: v for k, v in os.environ.items() if not k.startswith("OSMOSIS_")}
        | {"OSMOSIS_WARM": "0"}
        | {
            "OSMOSIS_CONFIG_DIR": str(tmp_path / "cfg"),
            "OSMOSIS_TOKEN_STORE": "file",
            "OSMOSIS_PLATFORM_URL": platform.url,
            "OSMOSIS_TOKEN_PLATFORM_URL": platform.url,
            "OSMOSIS_TOKEN": platform.state.token,
            "OSMOSIS_WORKSPACE": "acme",
            "HOME": str(tmp_path / "home"),
        }
    )
    stalled = subprocess.Popen(
        [*osmosis_command(), "dataset", "upload", "data/arithmetic.jsonl", "-y"],
        cwd=workspace,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    while not any(r.path.endswith("/part2") for r in platform.state.received):
        assert time.monotonic() < deadline and stalled.poll() is None
        time.sleep(0.05)
    stalled.send_signal(signal.SIGKILL)  # no cleanup possible
    stalled.wait(timeout=30)
    first = platform.hosted.state.datasets["arithmetic"]["id"]
    assert platform.hosted.state.datasets["arithmetic"]["status"] == "pending"
    again = osmosis("--json", "dataset", "upload", "data/arithmetic.jsonl", "-y")
    assert again.returncode == 0, again.stderr  # no --overwrite: it was our own leftover
    aborted = [r.path for r in platform.requests("POST", "/api/cli/datasets/")]
    assert f"/api/cli/datasets/{first}/abort" in aborted
    assert platform.hosted.state.datasets["arithmetic"]["status"] == "uploaded"
    assert not list((tmp_path / "cfg" / "uploads").glob("*.json"))
