"""Scoring one attempt: the rollout's grader or the ``--eval-fn`` functions.

cli.md's semantics: an exception or timeout in the grader fails the attempt
(``success: false``, every score 0); an exception in one eval fn scores that fn 0
and is recorded in ``fn_errors`` — the other eval fns keep their scores and
``success`` reflects the rollout only.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from osmosis_client.rollout import GraderContext, check_score, last_assistant_content
from osmosis_local_runner.run.execute.dataset import Row
from osmosis_local_runner.run.execute.eval_fns import EvalFn
from osmosis_local_runner.run.execute.scheduler import deadline
from osmosis_local_runner.run.execute.user_code import MAX_ERROR_TEXT, call, error_text


@dataclass
class Grades:
    scores: dict[str, float] = field(default_factory=dict)
    fn_errors: dict[str, str] = field(default_factory=dict)
    error: str | None = None  # the grader failed: the attempt errored
    #: eval fn name → the explanation it gave with its score (see :func:`scored`)
    explanations: dict[str, str] = field(default_factory=dict)


#: the longest explanation kept per eval fn
MAX_EXPLANATION = 4_000


def scored(value: Any) -> tuple[float, str | None]:
    """A grader's or eval fn's answer: a number, or a score with its explanation — an
    object with ``score`` and ``explanation`` (``evaluate_rubric(…,
    return_details=True)``'s RubricResult) or a mapping with those keys."""
    if isinstance(value, dict) and "score" in value:
        explanation = value.get("explanation")
        value = value["score"]
    elif hasattr(value, "score") and hasattr(value, "explanation"):
        explanation, value = value.explanation, value.score
    else:
        return check_score(value), None
    text = explanation if isinstance(explanation, str) and explanation else None
    return check_score(value), text[:MAX_EXPLANATION] if text else None


def stage_of(fn: EvalFn) -> str:
    return "grader" if fn.mode == "grader" else f"eval fn {fn.name}"


def zero_scores(eval_fns: Sequence[EvalFn]) -> dict[str, float]:
    return {fn.name: 0.0 for fn in eval_fns}


async def grade(
    eval_fns: Sequence[EvalFn],
    messages: list[dict[str, Any]],
    row: Row,
    run_index: int,
    *,
    timeout: float | None,
    raw: bool = False,
) -> Grades:
    """Every eval fn's score (``raw``: they get the answer with its reasoning)."""
    grades = Grades()
    for fn in eval_fns:
        scoring = _score(fn, messages, row, run_index, raw)
        try:
            if timeout is None:
                score, explanation = await scoring
            else:
                with deadline(timeout):  # in place: no coroutine wrapped around the call
                    score, explanation = await scoring
            grades.scores[fn.name] = score
            if explanation is not None:
                grades.explanations[fn.name] = explanation
        except TimeoutError:
            grades.scores[fn.name] = 0.0
            problem = f"{stage_of(fn)} timed out after {timeout:g}s"
            if fn.mode == "grader":
                grades.error = grades.error or problem
            else:
                grades.fn_errors[fn.name] = problem
        except Exception as exc:
            grades.scores[fn.name] = 0.0
            if fn.mode == "grader":
                grades.error = grades.error or error_text("grader", exc)
            else:
                grades.fn_errors[fn.name] = f"{type(exc).__name__}: {exc}"[:MAX_ERROR_TEXT]
    if grades.error is not None:
        grades.scores = zero_scores(eval_fns)
        grades.explanations = {}
    return grades


async def _score(
    fn: EvalFn, messages: list[dict[str, Any]], row: Row, run_index: int, raw: bool
) -> tuple[float, str | None]:
    if fn.mode == "grader":
        ctx = GraderContext(
            messages=messages,
            ground_truth=row.ground_truth,
            metadata=row.metadata,
            row_index=row.index,
            run_index=run_index,
            raw=raw,
        )
        value = await call(fn.fn, ctx, is_async=fn.is_async)
        if value is None:
            value = ctx.reward
        if value is None:
            raise ValueError("grade() returned no score and did not call ctx.set_reward()")
        return scored(value)
    first: Any = last_assistant_content(messages, raw=raw) if fn.mode == "simple" else messages
    args, kwargs = fn.arguments(first, row.ground_truth, dict(row.data))
    return scored(await call(fn.fn, *args, is_async=fn.is_async, **kwargs))
