"""The osmosis_ai 0.2 compatibility layer: what it serves, when, and how it says so."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from osmosis_client.rollout import compat


@pytest.fixture(autouse=True)
def clean() -> Iterator[None]:
    compat.uninstall()
    yield
    compat.uninstall()
    for name in [n for n in sys.modules if n == "osmosis_ai" or n.startswith("osmosis_ai.")]:
        del sys.modules[name]


def test_with_nothing_installed_the_layer_is_chosen() -> None:
    decision = compat.decide()
    assert decision.choice == "layer" and decision.installed is None and decision.message is None


def test_every_published_import_path_resolves_to_our_objects() -> None:
    used: list[int] = []
    compat.install(on_first_use=lambda: used.append(1))
    assert used == []  # nothing announced until user code imports it
    from osmosis_ai import (  # type: ignore[import-not-found]
        MissingAPIKeyError,
        ModelNotFoundError,
        ProviderRequestError,
        evaluate_rubric,
        osmosis_reward,
        osmosis_rubric,
    )
    from osmosis_ai.rollout import RolloutAgentLoop, RolloutContext, create_app  # type: ignore[import-not-found]
    from osmosis_ai.rollout.core.exceptions import ToolArgumentError  # type: ignore[import-not-found]
    from osmosis_ai.rollout.core.schemas import (  # type: ignore[import-not-found]
        OpenAIFunctionToolSchema,
        RolloutRequest,
        RolloutStatus,
    )
    from osmosis_ai.rollout.tools import execute_tool_calls  # type: ignore[import-not-found]

    import osmosis_client.errors as errors
    import osmosis_client.rewards as rewards
    import osmosis_client.rollout as rollout

    assert used == [1]  # announced once
    assert osmosis_reward is rewards.osmosis_reward and evaluate_rubric is rewards.evaluate_rubric
    assert osmosis_rubric is rewards.osmosis_rubric
    assert MissingAPIKeyError is errors.MissingAPIKeyError
    assert issubclass(ModelNotFoundError, ProviderRequestError)
    assert RolloutAgentLoop is rollout.RolloutAgentLoop and RolloutContext is rollout.RolloutContext
    assert create_app is rollout.create_app and execute_tool_calls is rollout.execute_tool_calls
    assert OpenAIFunctionToolSchema is rollout.OpenAIFunctionToolSchema
    assert RolloutRequest is rollout.RolloutRequest and RolloutStatus is rollout.RolloutStatus
    assert ToolArgumentError is rollout.ToolArgumentError
    import osmosis_ai.rollout as served  # type: ignore[import-not-found]

    assert "compatibility layer" in (served.__doc__ or "")
    assert not hasattr(rollout.agent_loop, "core")  # our own modules are not polluted


def test_the_0_2_testing_and_rubric_eval_modules_import() -> None:
    """Issue 34: 0.2.17's examples import osmosis_ai.rubric_eval; the testing guide,
    osmosis_ai.rollout.testing."""
    compat.install()
    from osmosis_ai.rollout.testing import (  # type: ignore[import-not-found]
        RolloutCompletionTracker,
        create_mock_trainer_app,
        fake_token_ids,
        patch_httpx_for_mock_trainer,
    )
    from osmosis_ai.rubric_eval import (  # type: ignore[import-not-found]
        DEFAULT_API_KEY_ENV,
        ensure_api_key_available,
        evaluate_rubric,
    )

    assert DEFAULT_API_KEY_ENV["openai"] == "OPENAI_API_KEY"
    assert DEFAULT_API_KEY_ENV["anthropic"] == "ANTHROPIC_API_KEY"
    assert callable(evaluate_rubric) and callable(patch_httpx_for_mock_trainer)
    assert fake_token_ids("abc") == [0, 1, 2] and not RolloutCompletionTracker().wait(0)
    assert callable(create_mock_trainer_app())
    with pytest.raises(Exception, match="NO_SUCH_KEY_VAR is not set"):
        ensure_api_key_available({"provider": "openai", "api_key_env": "NO_SUCH_KEY_VAR"})


def test_other_submodules_are_not_invented() -> None:
    compat.install()
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("osmosis_ai.rollout.agent_workflow")


def test_nothing_is_installed_under_the_name() -> None:
    import osmosis_client

    site = Path(osmosis_client.__file__).resolve().parents[1]
    assert not (site / "osmosis_ai").exists()
    # `import osmosis_ai` elsewhere is the start-up hook's last resort (a real package
    # wins: test_osmosis_ai_anywhere.py); no distribution claims the name
    from importlib.metadata import PackageNotFoundError, version

    with pytest.raises(PackageNotFoundError):
        version("osmosis-ai")


def fake_distribution(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, version: str) -> None:
    package = tmp_path / "osmosis_ai"
    (package / "rollout").mkdir(parents=True)
    (package / "__init__.py").write_text("REAL = True\n")
    (package / "rollout" / "__init__.py").write_text("")
    (package / "rollout" / "agent_workflow.py").write_text("class AgentWorkflow: pass\n")
    info = tmp_path / f"osmosis_ai-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: osmosis-ai\nVersion: {version}\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.invalidate_caches()


def test_a_real_0_2_installation_with_the_api_is_used_as_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_distribution(tmp_path, monkeypatch, "0.2.14")
    assert compat.decide().choice == "real"


def test_a_newer_installation_gets_the_layer_with_a_message(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_distribution(tmp_path, monkeypatch, "0.3.8")
    decision = compat.decide()
    assert decision.choice == "layer-over-real" and decision.installed == "0.3.8"
    assert "no 0.2 agent-loop API" in (decision.message or "")
    assert "inside this command" in (decision.message or "")
    compat.install()
    from osmosis_ai.rollout import RolloutAgentLoop  # type: ignore[import-not-found]
    from osmosis_ai.rollout.agent_workflow import AgentWorkflow  # type: ignore[import-not-found]

    assert RolloutAgentLoop.__module__.startswith("osmosis_client")
    assert AgentWorkflow.__module__ == "osmosis_ai.rollout.agent_workflow"  # the real one
