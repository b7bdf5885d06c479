"""``@osmosis_reward`` and ``@osmosis_rubric``: the published SDK's decorators.

    @osmosis_reward
    def exact(solution_str: str, ground_truth: str, extra_info: dict = None, **kwargs) -> float:
        return 1.0 if solution_str.strip() == ground_truth.strip() else 0.0

As published (0.2.11–0.2.17): the first three parameters are checked when decorating
(names, annotations, ``extra_info``'s default; ``TypeError`` naming what is wrong);
parameters after them (``**kwargs``, more keywords with defaults) are allowed; the result
must be a finite float. ``@osmosis_rubric`` leaves ``extra_info`` unchecked at call
time, as published.

Strict mode — exactly three parameters, and ``@osmosis_rubric``'s ``extra_info``
validated on every call — is opt-in: ``@osmosis_reward(strict=True)``, or
``OSMOSIS_STRICT_DECORATORS=1`` for every decorator. Decorated functions work unchanged as
local-runner eval functions (simple mode).
"""

from __future__ import annotations

import functools
import inspect
import math
import types
import typing
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])


def _annotation_names(fn: Callable[..., Any]) -> dict[str, str]:
    """Each annotation as normalised text (``"str"``, ``"dict | None"``…), strings or objects."""
    try:  # (not typing.get_type_hints: on 3.10 it adds an implicit Optional for `= None`)
        hints = inspect.get_annotations(fn, eval_str=True)
    except Exception:  # unresolvable forward references: fall back to the raw text
        hints = dict(getattr(fn, "__annotations__", {}))
    out: dict[str, str] = {}
    for name, hint in hints.items():
        text = hint if isinstance(hint, str) else _type_text(hint)
        out[name] = text.replace("typing.", "").replace(" ", "")
    return out


def _type_text(hint: Any) -> str:
    if hint is type(None):
        return "None"
    if isinstance(hint, type):
        return hint.__name__
    args = typing.get_args(hint)
    if args and typing.get_origin(hint) in (
        typing.Union,
        types.UnionType,
    ):
        return "|".join(sorted(_type_text(a) for a in args))
    return str(hint)


def _normalise(text: str) -> str:
    text = text.replace("Optional[", "").rstrip("]") + ("|None" if "Optional[" in text else "")
    parts = sorted(
        p for p in text.replace("Union[", "").replace("]", "").replace(",", "|").split("|") if p
    )
    return "|".join(parts)


def _check_signature(
    fn: Callable[..., Any],
    decorator: str,
    expected: list[tuple[str, set[str], Any]],
    *,
    strict: bool,
) -> None:
    """``expected``: (name, accepted annotations, default or inspect.Parameter.empty),
    checked as published; strict: nothing after them."""
    if not callable(fn):
        raise TypeError(f"@{decorator} must decorate a function")
    params = list(inspect.signature(fn).parameters.values())
    names = [p.name for p in params]
    wanted = [name for name, _, _ in expected]
    shape = ", ".join(
        f"{n}: {sorted(a)[0]}" + ("" if d is inspect.Parameter.empty else f" = {d}")
        for n, a, d in expected
    )
    head, rest = params[: len(wanted)], params[len(wanted) :]
    if names[: len(wanted)] != wanted or (strict and rest):
        exactly = "exactly " if strict else ""
        raise TypeError(
            f"@{decorator} function {fn.__name__} must take {exactly}({shape}"
            f"{'' if strict else ', …'}); it takes ({', '.join(names)})"
        )
    for param in rest:
        required = param.default is inspect.Parameter.empty and param.kind not in (
            inspect.Parameter.VAR_POSITIONAL,
            inspect.Parameter.VAR_KEYWORD,
        )
        if required:
            raise TypeError(
                f"@{decorator} function {fn.__name__}: parameter {param.name} after "
                f"{wanted[-1]} needs a default (it is never passed)"
            )
    hints = _annotation_names(fn)
    for param, (name, accepted, default) in zip(head, expected, strict=True):
        hint = hints.get(name)
        if hint is None or _normalise(hint) not in {_normalise(a) for a in accepted}:
            raise TypeError(
                f"@{decorator} function {fn.__name__}: parameter {name} must be annotated "
                f"{' or '.join(sorted(accepted))}, not {hint or 'nothing'}"
            )
        if param.default is not default and param.default != default:
            want = "no default" if default is inspect.Parameter.empty else f"default {default!r}"
            raise TypeError(f"@{decorator} function {fn.__name__}: {name} must have {want}")
    returned = hints.get("return")
    if returned is not None and _normalise(returned) != "float":
        raise TypeError(f"@{decorator} function {fn.__name__} must be annotated -> float")


def _strict(given: bool | None) -> bool:
    if given is not None:
        return given
    import os

    return os.environ.get("OSMOSIS_STRICT_DECORATORS", "").strip().lower() in ("1", "true", "yes")


def _checked_float(value: Any, fn: Callable[..., Any], decorator: str) -> float:
    if not isinstance(value, float) or isinstance(value, bool):
        raise TypeError(
            f"@{decorator} function {fn.__name__} must return a float, "
            f"returned {type(value).__name__}"
        )
    if not math.isfinite(value):
        raise ValueError(f"@{decorator} function {fn.__name__} returned {value}")
    return value


def _wrap(fn: F, check_call: Callable[[tuple[Any, ...], dict[str, Any]], None], name: str) -> F:
    if inspect.iscoroutinefunction(fn):

        @functools.wraps(fn)
        async def async_wrapper(*args: Any, **kwargs: Any) -> float:
            check_call(args, kwargs)
            return _checked_float(await fn(*args, **kwargs), fn, name)

        return async_wrapper  # type: ignore[return-value]

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> float:
        check_call(args, kwargs)
        return _checked_float(fn(*args, **kwargs), fn, name)

    return wrapper  # type: ignore[return-value]


_STR = {"str"}
_DICT = {"dict", "dict[str,Any]", "Dict[str,Any]", "dict|None", "dict[str,Any]|None"}


@typing.overload
def osmosis_reward(fn: F) -> F: ...
@typing.overload
def osmosis_reward(*, strict: bool | None = None) -> Callable[[F], F]: ...
def osmosis_reward(fn: F | None = None, *, strict: bool | None = None) -> Any:
    """``fn(solution_str: str, ground_truth: str, extra_info: dict = None[, …]) -> float``."""

    def decorate(fn: F) -> F:
        _check_signature(
            fn,
            "osmosis_reward",
            [
                ("solution_str", _STR, inspect.Parameter.empty),
                ("ground_truth", _STR, inspect.Parameter.empty),
                ("extra_info", _DICT, None),
            ],
            strict=_strict(strict),
        )
        return _wrap(fn, lambda args, kwargs: None, "osmosis_reward")

    return decorate if fn is None else decorate(fn)


RUBRIC_REQUIRED = ("provider", "model", "rubric")


def _extra_info_of(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    if len(args) >= 3:
        return args[2]
    return kwargs.get("extra_info")


def validate_rubric_extra_info(extra_info: Any) -> None:
    """The fields an ``@osmosis_rubric`` function needs in ``extra_info`` (``ValueError``)."""
    if not isinstance(extra_info, Mapping):
        raise TypeError("extra_info must be a dict")
    for required in RUBRIC_REQUIRED:
        value = extra_info.get(required)
        if not isinstance(value, str) or not value.strip():
            raise ValueError(f"extra_info[{required!r}] must be a non-empty string")
    key, key_env = extra_info.get("api_key"), extra_info.get("api_key_env")
    if not (isinstance(key, str) and key) and not (isinstance(key_env, str) and key_env):
        raise ValueError("extra_info needs 'api_key' or 'api_key_env'")
    if "system_prompt" in extra_info and not isinstance(extra_info["system_prompt"], str | None):
        raise ValueError("extra_info['system_prompt'] must be a string")
    bounds = [extra_info.get(k) for k in ("score_min", "score_max")]
    for name, value in zip(("score_min", "score_max"), bounds, strict=True):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int | float)):
            raise ValueError(f"extra_info[{name!r}] must be a number")
    low, high = bounds
    if low is not None and high is not None and low >= high:
        raise ValueError("extra_info['score_min'] must be below 'score_max'")
    overrides = extra_info.get("model_info_overrides")
    if overrides is not None and not isinstance(overrides, Mapping):
        raise ValueError("extra_info['model_info_overrides'] must be a dict")


def rubric_model_info(extra_info: Mapping[str, Any]) -> dict[str, Any]:
    """The ``model_info`` for :func:`evaluate_rubric` from a rubric ``extra_info``."""
    validate_rubric_extra_info(extra_info)
    info: dict[str, Any] = {"provider": extra_info["provider"], "model": extra_info["model"]}
    for key in (
        "api_key",
        "api_key_env",
        "system_prompt",
        "score_min",
        "score_max",
        "timeout",
        "base_url",
    ):
        if extra_info.get(key) is not None:
            info[key] = extra_info[key]
    info.update(extra_info.get("model_info_overrides") or {})
    return info


@typing.overload
def osmosis_rubric(fn: F) -> F: ...
@typing.overload
def osmosis_rubric(*, strict: bool | None = None) -> Callable[[F], F]: ...
def osmosis_rubric(fn: F | None = None, *, strict: bool | None = None) -> Any:
    """``fn(solution_str: str, ground_truth: str | None, extra_info: dict[, …]) -> float``;
    strict mode also validates ``extra_info`` (provider, model, rubric, a key) per call."""

    def decorate(fn: F) -> F:
        exact = _strict(strict)
        _check_signature(
            fn,
            "osmosis_rubric",
            [
                ("solution_str", _STR, inspect.Parameter.empty),
                ("ground_truth", {"str|None", "Optional[str]", "str"}, inspect.Parameter.empty),
                ("extra_info", {"dict", "dict[str,Any]", "Dict[str,Any]"}, inspect.Parameter.empty),
            ],
            strict=exact,
        )

        def check_call(args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
            if exact:
                validate_rubric_extra_info(_extra_info_of(args, kwargs))

        return _wrap(fn, check_call, "osmosis_rubric")

    return decorate if fn is None else decorate(fn)
