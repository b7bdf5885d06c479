"""Every training and benchmark config of the public workspace template validates here
(or fails as 0.3.8 fails it: published-cli-0.3.8-train.md §5), and so do the values its
comments show once uncommented — the typed checks never refuse what the template
documents."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from osmosis_client.errors import ConfigError
from osmosis_client.platform.benchmark.benchmark_config import load_benchmark_config
from osmosis_client.platform.training.training_config import (
    load_training_config,
    parse_training_config,
)

TEMPLATE = Path(__file__).resolve().parents[2] / "fixtures" / "workspace_template"
ROLLOUTS = ("multiply-local-openai", "multiply-harbor-strands")
#: a commented `# key = value` line of the template (a value written after the `=`)
COMMENTED = re.compile(
    r"^# ([a-z_]+ = (?:\"[^\"]*\"|\[[^\]]*\]|[-+\w.]+))([ \t]+#.*)?$", re.MULTILINE
)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    shutil.copytree(TEMPLATE / "configs", tmp_path / "configs")
    for name in ROLLOUTS:
        (tmp_path / "rollouts" / name).mkdir(parents=True)
        (tmp_path / "rollouts" / name / "main.py").write_text("")
    return tmp_path


@pytest.mark.parametrize(
    "name", ["multiply-local-openai.toml", "multiply-harbor-strands@b876e81c.toml"]
)
def test_the_template_training_configs_validate(workspace: Path, name: str) -> None:
    config = load_training_config(workspace / "configs" / "training" / name)
    payload = config.to_submit_payload("a" * 40)
    assert payload["training_config"] == {"n_samples_per_prompt": 8, "rollout_batch_size": 16}
    assert "sampling_config" not in payload and "checkpoints_config" not in payload


@pytest.mark.parametrize(
    "name", ["multiply-local-openai.toml", "multiply-harbor-strands@b876e81c.toml", "default.toml"]
)
def test_every_value_the_comments_show_validates(workspace: Path, name: str) -> None:
    path = workspace / "configs" / "training" / name
    text = COMMENTED.sub(r"\1", path.read_text())
    for placeholder, value in (
        ("<your-rollout>", "multiply-local-openai"),
        ("<your-entrypoint-file>", "main.py"),
        ("<your-model-path>", "Qwen/Qwen3-8B"),
        ("<your-dataset-name>", "d"),
    ):
        text = text.replace(placeholder, value)
    config = parse_training_config(text, path=path, root=workspace)
    assert config.training.lr == 1e-6
    assert config.sampling.rollout_top_p == 1.0
    assert config.checkpoints.checkpoint_save_freq == 20


def test_the_harbor_config_fails_as_0_3_8_fails_it(workspace: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        load_training_config(workspace / "configs" / "training" / "multiply-harbor-strands.toml")
    (problem,) = caught.value.problems
    assert (problem.key, problem.line) == ("rollout", 28)
    assert problem.message.startswith("Unrecognized section")
    assert caught.value.data["error"] == "Invalid training config"


def test_the_default_training_config_names_its_placeholders(workspace: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        load_training_config(workspace / "configs" / "training" / "default.toml")
    assert [p.key for p in caught.value.problems] == [
        "experiment.rollout",
        "experiment.entrypoint",
        "experiment.model_path",
        "experiment.dataset",
    ]
    assert all("template placeholder" in p.message for p in caught.value.problems)


def test_the_template_benchmark_config_validates(workspace: Path) -> None:
    config = load_benchmark_config(workspace / "configs" / "benchmark" / "default.toml")
    assert config.to_submit_payload() == {
        "experiment_config": {"benchmark": "terminal-bench-2-1"},
        "agents": [
            {
                "harness": "codex",
                "env": {},
                "model": {
                    "type": "provider",
                    "model": "openai/gpt-5.2",
                    "api_key_secret": "OPENAI_API_KEY",
                },
            }
        ],
        "execution_config": {
            "attempts_per_task": 1,
            "max_concurrent_attempts": 4,
            "timeout_multiplier": 1.0,
            "max_retries": 0,
        },
    }
    assert config.referenced_secrets == ["OPENAI_API_KEY"]


def test_the_benchmark_comments_validate_once_uncommented(workspace: Path) -> None:
    path = workspace / "configs" / "benchmark" / "default.toml"
    text = path.read_text().replace("# [tasks]", "[tasks]").replace("# [verifier]", "[verifier]")
    text = text.replace("# [secrets]", "[secrets]").replace("# [env]", "[env]")
    text = COMMENTED.sub(r"\1", text).replace("# [agents.env]", "[agents.env]")
    text = text.replace("# AGENT_MODE", "AGENT_MODE").replace("# LOG_LEVEL", "LOG_LEVEL")
    text = text.replace('judge_api_key_secret = "OPENAI_API_KEY"', 'judge_api_key_secret = "J"')
    path.write_text(text)
    config = load_benchmark_config(path)
    payload = config.to_submit_payload()
    assert payload["tasks_config"]["task_set"] == "parity"
    assert payload["execution_config"]["verifier_secrets"] == ["MY_VLM_KEY"]
    assert payload["secrets"] == {"required": ["WEATHER_API_KEY"], "provided": {}}
    assert payload["agents"][0]["env"] == {"AGENT_MODE": "strict"}
    assert payload["env_config"] == {"LOG_LEVEL": "info"}
    assert config.referenced_secrets == ["OPENAI_API_KEY", "J", "MY_VLM_KEY"]
