"""Eval functions: their two modes (simple: the answer text first; full: the messages
first) read from the signature, and how each is called with an attempt's answer, the
row's ground truth and the row itself — decided once, before the run starts."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from osmosis_client.errors import InvalidInputError

EvalMode = Literal["simple", "full"]


#: how to call an eval fn: (first argument, ground truth, the dataset row) → (args, kwargs)
Binder = Callable[[Any, "str | None", "dict[str, Any]"], "tuple[tuple[Any, ...], dict[str, Any]]"]


@dataclass(frozen=True)
class EvalFn:
    """An eval function and how to call it."""

    name: str  # as shown in results, e.g. "rewards:compute_reward" or "grader"
    fn: Callable[..., Any]
    mode: EvalMode | Literal["grader"]
    is_async: bool
    bind: Binder | None = None  # None: fn(first, ground_truth, row) positionally

    def arguments(
        self, first: Any, ground_truth: str | None, row: dict[str, Any]
    ) -> tuple[tuple[Any, ...], dict[str, Any]]:
        if self.bind is None:
            return (first, ground_truth, row), {}
        return self.bind(first, ground_truth, row)


def _parameters(fn: Callable[..., Any], name: str) -> list[inspect.Parameter]:
    try:
        return list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError) as exc:
        raise InvalidInputError(
            f"eval fn {name} has no inspectable signature", code="BAD_EVAL_FN"
        ) from exc


def eval_mode(fn: Callable[..., Any], name: str) -> EvalMode:
    """Simple (``solution_str`` first) or full (``messages`` first); anything else is exit 2."""
    params = _parameters(fn, name)
    if not params or params[0].kind in (params[0].VAR_POSITIONAL, params[0].VAR_KEYWORD):
        raise InvalidInputError(
            f"eval fn {name} takes no named first parameter", code="BAD_EVAL_FN"
        )
    first = params[0].name
    if first == "solution_str":
        return "simple"
    if first == "messages":
        return "full"
    raise InvalidInputError(
        f"eval fn {name}'s first parameter is {first!r}",
        hint="use fn(solution_str, ground_truth, extra_info=None, **kw) or "
        "fn(messages, ground_truth, metadata, **kw)",
        code="BAD_EVAL_FN",
    )


_POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)


def make_binder(fn: Callable[..., Any], mode: EvalMode, name: str) -> Binder:
    """Pass an eval fn only what it can take.

    After the first argument, a parameter named ``ground_truth`` gets the ground
    truth and one named ``extra_info`` (simple mode) or ``metadata`` (full mode) the
    dataset row; unnamed positional slots get them in that order; ``**kwargs``
    receives whichever is not taken yet. Any other parameter without a default is
    an error before the run starts.
    """
    plan = _bind_plan(_parameters(fn, name)[1:], mode, name)

    def bind(
        first: Any, ground_truth: str | None, row: dict[str, Any]
    ) -> tuple[tuple[Any, ...], dict[str, Any]]:
        values = {"ground_truth": ground_truth, "row": row}
        args: list[Any] = [first]
        kwargs: dict[str, Any] = {}
        for how, what in plan:
            if how == "pos":
                args.append(values[what])
            else:
                kwargs[how[3:]] = values[what]
        return tuple(args), kwargs

    return bind


def _bind_plan(params: list[inspect.Parameter], mode: EvalMode, name: str) -> list[tuple[str, str]]:
    """[(how, what)]: how is ``"pos"`` or ``"kw:NAME"``, what is ``ground_truth``/``row``."""
    row_name = "extra_info" if mode == "simple" else "metadata"
    plan: list[tuple[str, str]] = []
    taken: set[str] = set()
    order = ["ground_truth", "row"]
    by_keyword = False  # once a defaulted slot is skipped, later ones go by name
    for param in params:
        what = {"ground_truth": "ground_truth", row_name: "row"}.get(param.name)
        if param.kind is param.VAR_KEYWORD:
            for w in ("ground_truth", "row"):
                if w not in taken:
                    plan.append((f"kw:{'ground_truth' if w == 'ground_truth' else row_name}", w))
            taken.update(("ground_truth", "row"))
            continue
        if param.kind in _POSITIONAL and not by_keyword:
            if what is None and order and param.default is param.empty:
                what = order[0]  # e.g. fn(solution_str, gt, info)
            if what is None or what in taken:
                _needs_default(param, name, row_name)
                by_keyword = True  # this slot keeps its default
                continue
            plan.append(("pos", what))
        elif param.kind is param.KEYWORD_ONLY or (
            by_keyword and param.kind is param.POSITIONAL_OR_KEYWORD
        ):
            if what is None or what in taken:
                _needs_default(param, name, row_name)
                continue
            plan.append((f"kw:{param.name}", what))
        else:
            continue  # *args: nothing more to pass positionally
        taken.add(what)
        if what in order:
            order.remove(what)
    return plan


def _needs_default(param: inspect.Parameter, name: str, row_name: str) -> None:
    if param.default is param.empty:
        raise InvalidInputError(
            f"eval fn {name} needs parameter {param.name!r}, which the runner does not provide",
            hint=f"give it a default, or name it ground_truth / {row_name}",
            code="BAD_EVAL_FN",
        )
