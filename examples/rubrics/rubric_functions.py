"""A rubric function delegating to evaluate_rubric, judged offline by the mock model.

python examples/rubrics/rubric_functions.py
"""

from __future__ import annotations

from osmosis_client.rewards import evaluate_rubric, osmosis_rubric


@osmosis_rubric
def capital_city(solution_str: str, ground_truth: str | None, extra_info: dict) -> float:
    return float(
        evaluate_rubric(
            rubric=extra_info["rubric"],
            solution_str=solution_str,
            model_info={
                "provider": extra_info["provider"],
                "model": extra_info["model"],
                "api_key_env": extra_info.get("api_key_env"),
            },
            ground_truth=ground_truth,
        )
    )


if __name__ == "__main__":
    score = capital_city(
        "The capital of France is Paris.",
        "Paris",
        {
            "provider": "mock",
            "model": "judge",
            "api_key_env": "UNUSED_FOR_MOCK",
            "rubric": "The assistant must mention the verified capital city.",
        },
    )
    print(score)
