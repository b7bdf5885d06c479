"""Nothing published that was not meant to be (issue 51), through the CLI in process
against the loopback Hub double (which keeps each repository's privacy): a site sends
exactly the files its build wrote, never a folder's other files nor a link's target; an
existing public repository or Space is refused without ``--public``; the token is
checked first; a refused token or no network is one clear line; two runs never share a
split; an index someone broke never blocks a push; no machine path, no tracker
password, in anything shown, kept or published."""

from __future__ import annotations

import asyncio
import json
import os
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import quickstart_run
from tests.hub_double import TOKEN, Hub, Repo, running_hub
from tests.osmosis_cli.conftest import Invoke

RUN = quickstart_run(2)


@pytest.fixture
def hub(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Hub]:
    import huggingface_hub.constants as constants

    with running_hub() as found:
        monkeypatch.setenv("HF_ENDPOINT", found.url)
        monkeypatch.setenv("HF_TOKEN", TOKEN)
        monkeypatch.setenv("HF_HUB_DISABLE_TELEMETRY", "1")
        # read when huggingface_hub is imported: this process may have imported it already
        monkeypatch.setattr(constants, "ENDPOINT", found.url)
        template = found.url + "/{repo_id}/resolve/{revision}/{filename}"
        monkeypatch.setattr(constants, "HUGGINGFACE_CO_URL_TEMPLATE", template)
        monkeypatch.setenv("HF_HUB_OFFLINE", "0")
        monkeypatch.setattr(constants, "HF_TOKEN_PATH", str(tmp_path / "no-token"))
        monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hf-cache"))
        yield found


@pytest.fixture
def project(quickstart_project: Path, invoke: Invoke) -> Path:
    for step in (1, 2):  # a series: its neighbours are compared in a site
        ran = invoke(*RUN, "--name", f"step-{step}", "--series", "grpo", "--step", str(step))
        assert ran.exit_code == 0, ran.stderr
    return quickstart_project


def test_a_site_sends_exactly_the_files_its_build_wrote(
    hub: Hub, project: Path, invoke: Invoke, tmp_path: Path
) -> None:
    site = project / "site"
    site.mkdir()
    (site / ".env").write_text("OPENAI_API_KEY=sk-leaked\n")
    (site / "old.html").write_text("an old page")
    outside = tmp_path / "outside.txt"
    outside.write_text("a private file")
    os.symlink(outside, site / "leak.txt")
    os.symlink(outside.parent, site / "linked-dir")
    done = invoke("--json", "eval", "view", "--bundle", "site", "--to", "hf-space:acme/site")
    assert done.exit_code == 0, done.stderr
    built = set(done.resource()["files"])
    space = hub.repos["acme/site"]
    assert set(space.files) == built | {"README.md"}
    assert built >= {"index.html", "runs/step-1.html", "compare/step-1--step-2.html"}
    for path, data in space.files.items():  # no machine path in anything published
        text = data.decode()
        assert str(project) not in text and str(tmp_path) not in text, path
        assert "sk-leaked" not in text and "a private file" not in text
    assert ".osmosis/evals/step-1/results.json" in space.files["runs/step-1.html"].decode()
    # published again with one run: what the older site had and this one has not is gone
    again = invoke("eval", "view", "--bundle", "site2", "step-1", "--to", "hf-space:acme/site")
    assert again.exit_code == 0, again.stderr
    assert "runs/step-2.html" not in hub.repos["acme/site"].files
    assert "runs/step-1.html" in hub.repos["acme/site"].files


def test_an_existing_public_repository_is_refused_without_public(
    hub: Hub, project: Path, invoke: Invoke
) -> None:
    hub.repos["acme/open"] = Repo(private=False)
    hub.repos["acme/page"] = Repo(private=False, kind="space", sdk="static")
    refused = invoke("--json", "eval", "push", "step-1", "--to", "hf:acme/open")
    assert refused.exit_code == 1
    failed = refused.resource()["trackers"][0]
    assert failed["status"] == "failed" and failed["code"] == "HUB_PUBLIC"
    assert "is public" in failed["error"] and not hub.repos["acme/open"].files
    site = invoke("eval", "view", "--bundle", "site", "--to", "hf-space:acme/page")
    assert site.exit_code == 2 and "is public" in site.stderr and "--public" in site.stderr
    assert not hub.repos["acme/page"].files and "Traceback" not in site.stderr
    asked = invoke("eval", "push", "step-1", "--to", "hf:acme/open", "--public")
    assert asked.exit_code == 0, asked.stderr
    assert hub.repos["acme/open"].files and not hub.repos["acme/open"].private
    private = invoke("eval", "push", "step-1", "--to", "hf:acme/new")
    assert private.exit_code == 0 and hub.repos["acme/new"].private


def test_the_token_is_checked_first_and_hub_failures_are_one_line(
    hub: Hub, project: Path, invoke: Invoke, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("HF_TOKEN")
    none = invoke("eval", "push", "step-1", "--to", "hf:acme/x")
    assert none.exit_code == 1 and "no Hugging Face token" in none.stderr
    assert "hf auth login" in none.stderr and "huggingface-cli" not in none.stderr
    site = invoke("eval", "view", "--bundle", "site", "--to", "hf-space:acme/x")
    assert site.exit_code == 3 and "hf auth login" in site.stderr
    assert not hub.requests and not (project / "site").exists()  # said before anything
    monkeypatch.setenv("HF_TOKEN", "hf_wrong")
    refused = invoke("eval", "view", "--bundle", "site", "--to", "hf-space:acme/x")
    assert refused.exit_code == 3 and "refused the token" in refused.stderr
    assert "hf_wrong" not in refused.stderr and "Traceback" not in refused.stderr
    with socket.socket() as sock:  # a port nothing listens on: no network
        sock.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{sock.getsockname()[1]}"
    import huggingface_hub.constants as constants

    monkeypatch.setenv("HF_TOKEN", TOKEN)
    monkeypatch.setattr(constants, "ENDPOINT", closed)
    offline = invoke("eval", "view", "--bundle", "site", "--to", "hf-space:acme/x")
    assert offline.exit_code == 1 and "cannot reach the Hub" in offline.stderr, offline.stderr
    assert "Traceback" not in offline.stderr


def test_two_runs_never_share_a_split_and_a_broken_index_blocks_nothing(
    hub: Hub, project: Path, invoke: Invoke
) -> None:
    assert invoke(*RUN, "--name", "step_1").exit_code == 0
    assert invoke("eval", "push", "step-1", "--to", "hf:acme/evals").exit_code == 0
    repo = hub.repos["acme/evals"]
    first = repo.files["quickstart/details_step_1.parquet"]
    clash = invoke("--json", "eval", "push", "step_1", "--to", "hf:acme/evals")
    assert clash.exit_code == 1
    assert clash.resource()["trackers"][0]["code"] == "HUB_SPLIT_TAKEN"
    assert repo.files["quickstart/details_step_1.parquet"] == first  # never replaced
    index = json.loads(repo.files["osmosis_index.json"])
    index["quickstart"]["odd"] = {
        "run": 5,
        "params": [1],
        "metrics": {"x": "y", "z": None},
        "date": 7,
        "step": "a",
    }
    index["other"] = {"old": {"metrics": "none", "params": "none"}}
    repo.files["osmosis_index.json"] = json.dumps(index).encode()
    pushed = invoke("eval", "push", "step-2", "--to", "hf:acme/evals")
    assert pushed.exit_code == 0, pushed.stderr
    assert "| step-2 |" in repo.files["README.md"].decode()


def test_a_tracking_uris_password_is_never_shown_kept_or_served(
    project: Path, invoke: Invoke, monkeypatch: pytest.MonkeyPatch
) -> None:
    from osmosis_local_runner.trackers import logging as tracking
    from osmosis_local_runner.viewer.server import Viewer

    uri = "http://ada:s3cret@mlflow.example:5000"

    def mlflow(payload: Any, to: Any, step: int | None) -> dict[str, Any]:
        from osmosis_local_runner.trackers.mlflow_sink import _done

        return _done(to.target, "run1", "7", "own")

    def failing(payload: Any, to: Any, step: int | None) -> dict[str, Any]:
        raise ConnectionError(f"cannot reach {to.target.rstrip('0')}/api (as {uri}/)")

    monkeypatch.setattr(tracking, "SINKS", {**tracking.SINKS, "mlflow": mlflow})
    monkeypatch.setattr("osmosis_local_runner.trackers.check_available", lambda d: None)
    logged = invoke("--json", "eval", "push", "step-1", "--to", f"mlflow:{uri}")
    assert logged.exit_code == 0, logged.stderr
    monkeypatch.setattr(tracking, "SINKS", {**tracking.SINKS, "mlflow": failing})
    failed = invoke("eval", "push", "step-2", "--to", f"mlflow:{uri}")
    assert failed.exit_code == 1
    info = invoke("eval", "info", "--local", "step-1")
    as_json = invoke("--json", "eval", "info", "--local", "step-1")
    kept = (project / ".osmosis/evals/step-1/trackers.json").read_text()
    kept += (project / ".osmosis/evals/step-2/trackers.json").read_text()
    shown = [logged.stdout, logged.stderr, failed.stderr, info.stdout, as_json.stdout, kept]
    assert all("s3cret" not in text for text in shown), shown
    assert "http://***@mlflow.example:5000/#/experiments/7/runs/run1" in logged.stdout

    viewer = Viewer(project)

    async def home() -> str:
        from aiohttp.test_utils import TestClient, TestServer

        async with TestClient(TestServer(viewer.app())) as client:
            await client.get(f"/?token={viewer.token}")
            return await (await client.get("/api/runs")).text()

    assert "s3cret" not in asyncio.run(home())


def test_trackers_get_no_machine_path(
    project: Path, invoke: Invoke, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What a tracker is sent — its parameters and the results document it stores as an
    artifact — names the dataset by its place in the project, never the machine's."""
    from osmosis_local_runner.trackers import logging as tracking

    seen: list[tuple[dict[str, str], str]] = []

    def sink(payload: Any, to: Any, step: int | None) -> dict[str, Any]:
        seen.append((payload.params, Path(payload.results).read_text()))
        return {"run_id": "r", "into": "own"}

    monkeypatch.setattr(tracking, "SINKS", {**tracking.SINKS, "mlflow": sink, "hf": sink})
    monkeypatch.setattr("osmosis_local_runner.trackers.check_available", lambda d: None)
    local = (project / ".osmosis/evals/step-1/results.json").read_text()
    assert str(project) in local  # kept as it ran, on this machine
    done = invoke("eval", "push", "step-1", "--to", "mlflow:http://tracker", "--to", "hf:a/b")
    assert done.exit_code == 0, done.stderr
    for params, document in seen:
        assert params["dataset"] == "data/arithmetic.jsonl"
        assert str(project) not in document and "data/arithmetic.jsonl" in document
        assert json.loads(document)["summary"] == json.loads(local)["summary"]
