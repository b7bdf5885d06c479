"""Is a value of a results document sound? What the commands that read documents rely
on — finite numbers, whole counts, runs of the right shape — checked as they are read
(hostile or hand-edited input is one clear error, never a crash further on)."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import Any

LARGEST = sys.float_info.max
#: attempts per row at most: what a run may ask for (more would exhaust memory before
#: doing anything useful), and what a document read back may claim (issue 43: ``n_runs``
#: of 10**12 made ``pass_at_k()`` loop for ever)
MAX_N = 1000


def is_number(value: Any) -> bool:
    """A finite number a float can hold (``bool`` is not one; ``10**400`` is not one)."""
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return -LARGEST <= value <= LARGEST
    return isinstance(value, float) and value - value == 0.0


def whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= LARGEST


def run_problem(run: dict[str, Any]) -> str | None:
    """What makes a run unusable (hand-edited or foreign documents), or None. The common
    case — a run as we write it — is recognised in a few type checks (a million-row
    comparison checks two million runs)."""
    get = run.get
    scores = get("scores")
    if type(scores) is dict and _plain_run(get, scores):
        return None
    if not isinstance(scores, dict):
        return "scores must be an object"
    for name, value in scores.items():
        if not is_number(value):
            return f"score {name!r} is not a finite number"
    if not whole(get("run_index")):
        return "run_index must be a whole number"
    for key in ("answer", "error", "model_tag"):
        if get(key) is not None and not isinstance(run[key], str):
            return f"{key} must be text"
    for key in ("duration_ms", "tokens"):
        value = get(key, 0)
        if not (is_number(value) and value >= 0):
            return f"{key} must be a number"
    for key in ("success", "skipped"):
        if key in run and not isinstance(run[key], bool):
            return f"{key} must be true or false"
    if "messages" in run and not isinstance(run["messages"], list):
        return "messages must be a list"
    fn_errors = get("fn_errors")
    if fn_errors is not None and (
        not isinstance(fn_errors, dict) or not all(isinstance(v, str) for v in fn_errors.values())
    ):
        return "fn_errors must be an object of messages"
    return None


_TEXT_OR_NONE = (str, type(None))


def _plain_run(get: Any, scores: dict[str, Any]) -> bool:
    """A run of the usual shape, every value sound (the slow path explains any other)."""
    for value in scores.values():
        finite_float = type(value) is float and value - value == 0.0
        if not finite_float and (type(value) is not int or not -LARGEST <= value <= LARGEST):
            return False
    index, duration, tokens = get("run_index"), get("duration_ms", 0), get("tokens", 0)
    return (
        type(index) is int
        and 0 <= index <= LARGEST
        and type(get("success", True)) is bool
        and type(get("skipped", False)) is bool
        and type(get("answer")) in _TEXT_OR_NONE
        and type(get("error")) in _TEXT_OR_NONE
        and type(get("model_tag")) in _TEXT_OR_NONE
        and type(get("messages", [])) is list
        and get("fn_errors") is None
        and type(duration) in (int, float)
        and 0 <= duration <= LARGEST
        and type(tokens) in (int, float)
        and 0 <= tokens <= LARGEST
    )


#: the summary's counts (whole numbers) and the one duration
COUNTS = (
    "total_rows",
    "total_runs",
    "errored_runs",
    "skipped_runs",
    "retried_runs",
    "total_tokens",
)
#: per-fn statistics the commands read (``pass_at_<k>`` too); other keys are ignored
STATISTICS = ("mean", "std", "min", "max")


def head_problem(head: Mapping[str, Any]) -> str | None:
    """What makes a document's head unusable (the place and the rule), or None."""
    config, summary = head.get("config"), head.get("summary")
    if not isinstance(config, dict) or not isinstance(summary, dict):
        return "not an osmosis results document (no config and summary)"
    fns = config.get("eval_fns")
    if fns is not None and (not isinstance(fns, list) or not all(isinstance(f, str) for f in fns)):
        return "config.eval_fns must be a list of names"
    if "pass_threshold" in config and not is_number(config["pass_threshold"]):
        return "config.pass_threshold must be a finite number"
    n = config.get("n_runs")
    if n is not None and not (whole(n) and 1 <= n <= MAX_N):
        return f"config.n_runs must be a whole number from 1 to {MAX_N:,}"
    model = config.get("model")
    if model is not None and not isinstance(model, str):
        return "config.model must be text"
    for key in COUNTS:
        if summary.get(key) is not None and not whole(summary[key]):
            return f"summary.{key} must be a whole number"
    duration = summary.get("total_duration_ms")
    if duration is not None and not (is_number(duration) and duration >= 0):
        return "summary.total_duration_ms must be a number of milliseconds"
    if summary.get("status") is not None and not isinstance(summary["status"], str):
        return "summary.status must be text"
    stats = summary.get("eval_fns")
    if stats is not None and not isinstance(stats, dict):
        return "summary.eval_fns must be an object of eval fns"
    for fn, values in (stats or {}).items():
        if not isinstance(values, dict):
            return f"summary.eval_fns.{fn} must be an object of statistics"
        for key, value in values.items():
            if (key in STATISTICS or pass_at_key(key) is not None) and not (
                value is None or is_number(value)
            ):
                return f"summary.eval_fns.{fn}.{key} must be a finite number"
    return None


def pass_at_key(key: str) -> int | None:
    """``pass_at_3`` → 3; anything else (``pass_at_k``) → None."""
    if not key.startswith("pass_at_"):
        return None
    digits = key[len("pass_at_") :]
    return int(digits) if digits.isdigit() and len(digits) < 7 else None
