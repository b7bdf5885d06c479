"""@osmosis_reward / @osmosis_rubric: signatures at decoration, results at call time."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from osmosis_client.rewards import osmosis_reward, osmosis_rubric, rubric_model_info


def test_reward_with_published_signature_works_unchanged() -> None:
    @osmosis_reward
    def exact(solution_str: str, ground_truth: str, extra_info: dict = None) -> float:  # type: ignore[assignment]
        return 1.0 if solution_str.strip() == ground_truth.strip() else 0.0

    assert exact("hello world", "hello world") == 1.0
    assert exact("a", "b", {"x": 1}) == 0.0
    assert exact.__name__ == "exact"


@pytest.mark.parametrize(
    ("source", "fragment"),
    [
        (
            "def f(solution, ground_truth: str, extra_info: dict = None) -> float: ...",
            "must take exactly",
        ),
        ("def f(solution_str: str, ground_truth: str) -> float: ...", "must take exactly"),
        (
            "def f(solution_str: int, ground_truth: str, extra_info: dict = None) -> float: ...",
            "solution_str must be annotated str",
        ),
        (
            "def f(solution_str: str, ground_truth: str, extra_info: dict = {}) -> float: ...",
            "extra_info must have default None",
        ),
        (
            "def f(solution_str: str, ground_truth: str, extra_info: list = None) -> float: ...",
            "extra_info must be annotated",
        ),
        (
            "def f(solution_str: str, ground_truth: str, extra_info: dict = None) -> int: ...",
            "-> float",
        ),
        ("def f(solution_str, ground_truth, extra_info=None): ...", "must be annotated"),
    ],
)
def test_reward_signature_errors_name_the_problem(source: str, fragment: str) -> None:
    namespace: dict[str, Any] = {}
    exec(source, namespace)
    with pytest.raises(TypeError) as info:
        osmosis_reward(strict=True)(namespace["f"])
    assert fragment in str(info.value)
    if fragment != "must take exactly":  # the published checks: strict or not
        with pytest.raises(TypeError, match=fragment.split()[0]):
            osmosis_reward(namespace["f"])


def test_as_published_parameters_after_the_three_are_allowed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    @osmosis_reward
    def numbers_match_reward(
        solution_str: str, ground_truth: str, extra_info: dict = None, **kwargs: Any
    ) -> float:  # type: ignore[assignment]
        return 1.0 if solution_str == ground_truth else 0.0

    assert numbers_match_reward("4", "4", None, data_source="x") == 1.0

    def needs_more(
        solution_str: str, ground_truth: str, extra_info: dict = None, k: int = 1, *a: Any
    ) -> float:  # type: ignore[assignment]
        return 0.0

    osmosis_reward(needs_more)  # extra parameters with defaults: fine
    with pytest.raises(TypeError, match="must take exactly"):
        osmosis_reward(strict=True)(needs_more)
    monkeypatch.setenv("OSMOSIS_STRICT_DECORATORS", "1")
    with pytest.raises(TypeError, match="must take exactly"):
        osmosis_reward(needs_more)

    def required_extra(
        solution_str: str, ground_truth: str, extra_info: dict = None, *, k: int
    ) -> float:  # type: ignore[assignment]
        return 0.0

    monkeypatch.delenv("OSMOSIS_STRICT_DECORATORS")
    with pytest.raises(TypeError, match="k after extra_info needs a default"):
        osmosis_reward(required_extra)


def test_reward_result_must_be_a_float() -> None:
    @osmosis_reward
    def bad(solution_str: str, ground_truth: str, extra_info: dict = None) -> float:  # type: ignore[assignment]
        return 1  # type: ignore[return-value]

    with pytest.raises(TypeError, match="must return a float, returned int"):
        bad("a", "b")


def test_async_reward_and_optional_dict_annotation() -> None:
    @osmosis_reward
    async def areward(
        solution_str: str, ground_truth: str, extra_info: dict | None = None
    ) -> float:
        return 0.5

    assert asyncio.run(areward("a", "b")) == 0.5


def test_reward_is_a_simple_mode_eval_fn() -> None:
    from osmosis_local_runner.run.execute.eval_fns import eval_mode

    @osmosis_reward
    def r(solution_str: str, ground_truth: str, extra_info: dict = None) -> float:  # type: ignore[assignment]
        return 1.0

    assert eval_mode(r, "r") == "simple"


RUBRIC_INFO = {"provider": "openai", "model": "gpt-5", "rubric": "be right", "api_key_env": "K"}


def test_rubric_decorator_leaves_extra_info_alone_unless_strict() -> None:
    @osmosis_rubric
    def lenient(
        solution_str: str, ground_truth: str | None, extra_info: dict, **kwargs: Any
    ) -> float:
        return 0.5

    assert lenient("x", None, {"metadata": {"a": 1}}) == 0.5  # as 0.2.11–0.2.17

    @osmosis_rubric(strict=True)
    def judge(solution_str: str, ground_truth: str | None, extra_info: dict) -> float:
        return 0.75

    assert judge("x", None, RUBRIC_INFO) == 0.75
    for broken, fragment in [
        ({**RUBRIC_INFO, "provider": ""}, "provider"),
        ({k: v for k, v in RUBRIC_INFO.items() if k != "rubric"}, "rubric"),
        ({k: v for k, v in RUBRIC_INFO.items() if k != "api_key_env"}, "api_key"),
        ({**RUBRIC_INFO, "score_min": 1, "score_max": 0}, "below"),
        ({**RUBRIC_INFO, "model_info_overrides": []}, "model_info_overrides"),
        ({**RUBRIC_INFO, "system_prompt": 3}, "system_prompt"),
    ]:
        with pytest.raises(ValueError, match=fragment):
            judge("x", None, broken)


def test_rubric_signature_rules() -> None:
    with pytest.raises(TypeError, match="extra_info must have no default"):

        @osmosis_rubric
        def with_default(
            solution_str: str, ground_truth: str | None, extra_info: dict = None
        ) -> float:  # type: ignore[assignment]
            return 0.0


def test_model_info_overrides_are_merged() -> None:
    info = rubric_model_info(
        {
            **RUBRIC_INFO,
            "score_max": 10,
            "model_info_overrides": {"base_url": "http://x/v1", "timeout": 5},
        }
    )
    assert info == {
        "provider": "openai",
        "model": "gpt-5",
        "api_key_env": "K",
        "score_max": 10,
        "base_url": "http://x/v1",
        "timeout": 5,
    }
