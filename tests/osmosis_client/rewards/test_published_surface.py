"""Code written against the published SDK's reward/rubric API works with only the
import changed: string annotations, dict-like details, error classes, config keys."""

from __future__ import annotations

import importlib.util
import logging
import textwrap
from pathlib import Path

import pytest

from osmosis_client import (
    MissingAPIKeyError,
    ModelNotFoundError,
    ProviderRequestError,
    evaluate_rubric,
)
from osmosis_client.errors import ConfigError
from osmosis_client.rewards.rubric_config import load_rubric_config


def load(tmp_path: Path, source: str) -> object:
    path = tmp_path / f"mod_{abs(hash(source))}.py"
    path.write_text(textwrap.dedent(source))
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_decorators_accept_string_annotations(tmp_path: Path) -> None:
    module = load(
        tmp_path,
        """
        from __future__ import annotations
        from typing import Optional
        from osmosis_client import osmosis_reward, osmosis_rubric

        @osmosis_reward
        def exact(solution_str: str, ground_truth: str, extra_info: dict = None) -> float:
            return 1.0 if solution_str == ground_truth else 0.0

        @osmosis_reward
        def optional(solution_str: str, ground_truth: str, extra_info: Optional[dict] = None) -> float:
            return 0.5

        @osmosis_rubric
        def judged(solution_str: str, ground_truth: str | None, extra_info: dict) -> float:
            return 1.0
        """,
    )
    assert module.exact("a", "a") == 1.0  # type: ignore[attr-defined]
    assert module.optional("a", "b") == 0.5  # type: ignore[attr-defined]
    with pytest.raises(TypeError, match="solution_str must be annotated"):
        load(
            tmp_path,
            """
            from __future__ import annotations
            from osmosis_client import osmosis_reward

            @osmosis_reward
            def wrong(solution_str: int, ground_truth: str, extra_info: dict = None) -> float:
                return 1.0
            """,
        )


def test_return_details_is_usable_as_a_dict() -> None:
    details = evaluate_rubric(
        "Be right.", "42", {"provider": "mock", "model": "judge"}, return_details=True
    )
    assert isinstance(details, dict)  # a dict, as 0.2 returned (issue 34)
    assert details["score"] == details.score  # type: ignore[union-attr,index]
    assert details["explanation"] and isinstance(details["raw"], dict)  # type: ignore[index]
    assert set(dict(details)) == {"score", "explanation", "raw", "model", "attempts", "clamped"}  # type: ignore[arg-type]
    assert details.get("nope") is None  # type: ignore[union-attr]
    with pytest.raises(KeyError):
        details["nope"]  # type: ignore[index]


def test_error_classes_and_detail() -> None:
    assert issubclass(ModelNotFoundError, ProviderRequestError)
    error = ProviderRequestError("the provider said no", data={"detail": "quota"})
    assert error.detail == "quota"
    assert MissingAPIKeyError("x", data={"env_var": "K"}).env_var == "K"
    with pytest.raises(MissingAPIKeyError) as info:
        evaluate_rubric("r", "s", {"provider": "openai", "model": "m", "api_key_env": "NOT_SET_X"})
    assert "NOT_SET_X" in info.value.detail


def test_rubric_config_descriptive_keys_and_defaults(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "rubric_configs.yaml"
    path.write_text(
        textwrap.dedent(
            """
            version: 1
            title: Support rubrics
            default_score_min: 1
            default_score_max: 5
            owner: support-team
            rubrics:
              - id: followup
                title: Follow-up quality
                rubric: Is there a follow-up?
                model_info: {provider: mock, model: judge}
                tags: [support]
              - id: own_bounds
                rubric: x
                model_info: {provider: mock, model: judge}
                score_min: 0
                score_max: 10
            """
        )
    )
    with caplog.at_level(logging.WARNING, logger="osmosis_client"):
        config = load_rubric_config(path)
    assert config.title == "Support rubrics"
    followup = config.get("followup")
    assert (followup.title, followup.score_min, followup.score_max) == ("Follow-up quality", 1, 5)
    assert (config.get("own_bounds").score_min, config.get("own_bounds").score_max) == (0, 10)
    assert any("owner: unknown key ignored" in w for w in config.warnings)
    assert any("rubrics.0.tags: unknown key ignored" in w for w in config.warnings)
    assert "owner" in caplog.text


def test_rubric_config_still_refuses_extra_info(tmp_path: Path) -> None:
    path = tmp_path / "r.yaml"
    path.write_text(
        "rubrics:\n  - id: a\n    rubric: x\n    model_info: {provider: mock, model: judge}\n"
        "    extra_info: {k: 1}\n"
    )
    with pytest.raises(ConfigError) as info:
        load_rubric_config(path)
    assert "extra_info" in str(info.value.problems[0])
