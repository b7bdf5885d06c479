"""``osmosis eval push RUN --to hf:ORG/NAME`` (issue 47) with the real
``huggingface_hub`` client against a loopback double of the Hub's routes
(``tests/hub_double.py``, ``HF_ENDPOINT``): a private dataset repository, a config per
eval with a split per run and ``latest``, a card the Hub accepts — and what was pushed
loaded back with ``datasets.load_dataset``, as a reader of the Hub loads it."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.conftest import osmosis_command
from tests.helpers import SUITE_RUN
from tests.hub_double import TOKEN, Hub, running_hub

pytestmark = pytest.mark.slow
RUN = ["eval", "run", "configs/eval/quickstart.toml", "-q", "--limit", "3"]


@pytest.fixture
def hub(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Hub]:
    with running_hub() as found:
        monkeypatch.setenv("HF_ENDPOINT", found.url)
        monkeypatch.setenv("HF_TOKEN", TOKEN)
        monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
        monkeypatch.setenv("HF_HUB_DISABLE_TELEMETRY", "1")
        monkeypatch.setenv("HF_HUB_OFFLINE", "0")
        yield found


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*osmosis_command(), *args], capture_output=True, text=True, timeout=180)


def test_runs_pushed_to_the_hub_load_back_as_a_dataset(
    hub: Hub, quickstart_project: Path, tmp_path: Path
) -> None:
    for name, model in (("step-100", "mock/calculator"), ("step-200", "mock/echo")):
        assert cli(*RUN, "--model", model, "--name", name).returncode == 0
    first = cli("--json", "eval", "push", "step-100", "--to", "hf:acme/rl-evals")
    assert first.returncode == 0, first.stderr
    logged = json.loads(first.stdout)["resource"]["trackers"][0]
    assert logged["status"] == "logged" and logged["url"].endswith("/datasets/acme/rl-evals")
    # someone broke the index by hand: what cannot be read of it is left out, not fatal
    index = json.loads(hub.repos["acme/rl-evals"].files["osmosis_index.json"])
    index["junk"], index["quickstart"]["bad"] = 5, "not a run"
    hub.repos["acme/rl-evals"].files["osmosis_index.json"] = json.dumps(index).encode()
    second = cli("--json", "eval", "push", "step-200", "--to", "hf:acme/rl-evals")
    assert second.returncode == 0, second.stderr
    repo = hub.repos["acme/rl-evals"]
    assert repo.private  # unless --public
    assert sorted(repo.files) == [
        "README.md",
        "osmosis_index.json",
        "quickstart/details_step_100.parquet",
        "quickstart/details_step_200.parquet",
        "results/quickstart_step_100.parquet",
        "results/quickstart_step_200.parquet",
    ]
    card = repo.files["README.md"].decode()
    assert "junk" not in card and "bad" not in card
    assert "| step-100 |" in card and "mock/calculator" in card and "grader/mean 1" in card
    assert hub.cards and len(repo.commits) == 2  # the card was validated; a commit a push

    # what a reader of the Hub gets: the files, loaded by `datasets` from the card's configs
    local = tmp_path / "clone"
    for path, data in repo.files.items():
        (local / path).parent.mkdir(parents=True, exist_ok=True)
        (local / path).write_bytes(data)
    from datasets import load_dataset

    details = load_dataset(str(local), "quickstart")
    assert set(details) == {"step_100", "step_200", "latest"}
    assert details["step_100"].num_rows == 9
    assert details["step_100"].features["score"].dtype == "float64"
    assert set(details["step_100"]["passed"]) == {True}
    assert set(details["latest"]["passed"]) == {False}  # step-200, pushed last, echoed
    assert json.loads(details["step_100"][0]["transcript"])[-1]["role"] == "assistant"
    results = load_dataset(str(local), "results_quickstart", split="step_100").to_pandas()
    metric = results.set_index("metric")
    assert metric.loc["eval/grader/mean", "value"] == 1.0
    assert set(results["model"]) == {"mock/calculator"}

    # pushed again: nothing sent, no commit
    before = len(hub.requests)
    again = cli("eval", "push", "step-100", "--to", "hf:acme/rl-evals")
    assert again.returncode == 0 and "Already logged to hf:acme/rl-evals" in again.stderr
    assert len(hub.requests) == before and len(repo.commits) == 2


def test_a_public_repository_a_bad_id_and_a_missing_token(
    hub: Hub, quickstart_project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert cli(*RUN, "--model", "mock/calculator", "--name", "a").returncode == 0
    public = cli("eval", "push", "a", "--to", "hf:acme/open", "--public")
    assert public.returncode == 0, public.stderr
    assert not hub.repos["acme/open"].private
    for bad in ("hf:no-namespace", "hf:acme/bad--name", "hf:acme/x.git"):
        refused = cli("eval", "push", "a", "--to", bad)
        assert refused.returncode == 2 and "names no Hub dataset repository" in refused.stderr
    assert cli("eval", "push", "a", "--to", "wandb:x", "--public").returncode == 2
    requests = len(hub.requests)
    assert requests == len(hub.requests)  # refused before any request
    monkeypatch.setenv("HF_TOKEN", "hf_wrong")
    denied = cli("eval", "push", "a", "--to", "hf:acme/other")
    assert denied.returncode == 1
    assert "not logged to hf:acme/other" in denied.stderr and "401" in denied.stderr
    assert "hf_wrong" not in denied.stderr


def test_a_suite_goes_to_the_hub_a_config_per_entry(hub: Hub, quickstart_project: Path) -> None:
    suite = SUITE_RUN
    assert cli(*suite).returncode == 0
    pushed = cli("--json", "eval", "push", ".osmosis/suites/sweep", "--to", "hf:acme/sweep")
    assert pushed.returncode == 0, pushed.stderr
    trackers = json.loads(pushed.stdout)["resource"]["trackers"]
    entries = json.loads((quickstart_project / ".osmosis/suites/sweep/suite.json").read_text())
    assert len(trackers) == len(entries["entries"]) >= 2
    files = hub.repos["acme/sweep"].files
    for entry in entries["entries"]:
        assert (
            f"{entry['name']}/details_{entry['name'].replace('-', '_').replace('.', '_')}"
            ".parquet" in files
        )
