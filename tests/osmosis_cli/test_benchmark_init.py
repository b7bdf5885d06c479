"""``osmosis benchmark init``: a starter benchmark config that validates as written, and
a did-you-mean for a mistyped key or benchmark."""

from __future__ import annotations

from pathlib import Path

import pytest
import respx

from osmosis_client.errors import ConfigError
from osmosis_client.platform.benchmark.benchmark_config import load_benchmark_config
from tests.gitrepo import git
from tests.osmosis_cli.conftest import Invoke


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    git(tmp_path, "init", "-q")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_init_writes_a_config_that_validates_and_never_clobbers(
    invoke: Invoke, workspace: Path
) -> None:
    result = invoke("benchmark", "init")
    assert result.exit_code == 0, result.stderr
    path = workspace / "configs" / "benchmark" / "default.toml"
    config = load_benchmark_config(path)
    assert config.experiment.benchmark == "terminal-bench-2-1"
    assert config.referenced_secrets == ["OPENAI_API_KEY"]
    assert "osmosis benchmark submit configs/benchmark/default.toml" in result.stderr
    again = invoke("benchmark", "init")
    assert again.exit_code == 2 and "already exists" in again.stderr
    named = invoke("--json", "benchmark", "init", "hle", "--benchmark", "hle")
    assert named.exit_code == 0, named.stderr
    assert load_benchmark_config(Path(named.resource()["path"])).experiment.benchmark == "hle"
    assert invoke("benchmark", "init", "--force").exit_code == 0


def test_init_refuses_a_planted_link_and_a_bad_name(
    invoke: Invoke, workspace: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    (workspace / "configs").symlink_to(elsewhere)
    linked = invoke("benchmark", "init")
    assert linked.exit_code == 2 and "symbolic link" in linked.stderr
    assert list(elsewhere.iterdir()) == []
    assert invoke("benchmark", "init", "../x").exit_code == 2


def test_a_mistyped_key_is_named_with_the_one_meant(workspace: Path) -> None:
    from osmosis_client.platform.benchmark.benchmark_starter import STARTER

    path = workspace / "b.toml"
    starter = STARTER.format(path="b.toml", benchmark="terminal-bench-2-1")
    path.write_text(
        starter.replace("max_concurrent_attempts", "max_concurent_attempts").replace(
            "api_key_secret =", "api_key_secrett ="
        )
    )
    with pytest.raises(ConfigError) as caught:
        load_benchmark_config(path)
    messages = [p.message for p in caught.value.problems]
    assert "Unrecognized key (did you mean 'max_concurrent_attempts'?)" in messages
    assert "Unrecognized key (did you mean 'api_key_secret'?)" in messages


def test_an_unknown_benchmark_suggests_the_key_meant(
    invoke: Invoke, workspace: Path, router: respx.MockRouter, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OSMOSIS_TOKEN", "t")
    monkeypatch.setenv("OSMOSIS_WORKSPACE", "acme")
    assert invoke("benchmark", "init", "--benchmark", "terminal-bench").exit_code == 0
    router.get("/api/cli/benchmarks/terminal-bench").respond(404, json={"error": "not found"})
    listed = {
        "id": "b1",
        "name": "Terminal-Bench 2.1",
        "source_type": "registry",
        "source_ref": "terminal-bench-2-1",
        "task_count": 89,
        "category_count": 3,
    }
    router.get("/api/cli/benchmarks").respond(
        200, json={"benchmarks": [listed], "total_count": 1, "has_more": False, "next_offset": None}
    )
    result = invoke("benchmark", "submit", "configs/benchmark/default.toml", "--yes")
    assert result.exit_code == 2, result.stderr
    assert "benchmark 'terminal-bench' not found" in result.stderr
    assert "did you mean 'terminal-bench-2-1'?" in result.stderr
    assert "`osmosis benchmark list`" in result.stderr
