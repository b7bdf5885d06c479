"""A suite's entries from its tables: defaults laid under each ``[[eval]]``, each
``[[ablation]]`` swept into the cartesian product of its values (counted before it is
made: at most ``MAX_ENTRIES``), every setting's origin kept (file line, defaults, sweep),
and a stable, readable, unique name per entry (docs/suites.md)."""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from osmosis_client.errors import Problem
from osmosis_client.platform.config_check import suggest
from osmosis_client.platform.eval import eval_config as single

EXPERIMENT_KEYS = ("rollout", "entrypoint", "model_path", "dataset", "branch", "commit_sha")
EVALUATION_KEYS = (
    "limit",
    "n",
    "batch_size",
    "pass_threshold",
    "agent_workflow_timeout_s",
    "grader_timeout_s",
)
LOCAL_KEYS = (
    "dataset_file",
    "base_url",
    "api_key_env",
    "endpoint_id",
    "headers",
    "header",
    "sampling",
    "seed",
    "mode",
    "rollout_python",
    "reasoning_effort",
    "think_tags",
    "raw_answers",
    "prices",
    "max_cost",
    "max_attempt_tokens",
)
OWN_KEYS = ("config", "name")
ENTRY_KEYS = (*EXPERIMENT_KEYS, *EVALUATION_KEYS, *LOCAL_KEYS, *OWN_KEYS)
SUITE_KEYS = ("suite", "endpoints_path")
SUITE_TABLES = ("env", "secrets", "advanced")
MERGED_TABLES = ("sampling", "config", "headers")
SWEEPABLE_TABLES = ("sampling", "config")
MAX_ENTRIES = 1000  # entries one suite may expand to (each is a whole eval run)
MAX_NAME = 100  # characters of an entry name (it names files: <name>.journal.jsonl…)
RESERVED_NAMES = frozenset({"suite"})  # suite.json is the suite's own document
#: short labels of swept numbers in entry names (other keys: the value alone)
ABBREVIATIONS = {
    "temperature": "t",
    "top_p": "p",
    "max_tokens": "mt",
    "n": "n",
    "limit": "l",
    "batch_size": "b",
    "pass_threshold": "pt",
    "seed": "s",
}


@dataclass(frozen=True)
class Origin:
    """Where a setting's value came from: ``entry``, ``defaults``, ``sweep``, ``flag``."""

    kind: str
    line: int | None = None
    col: int | None = None

    def __str__(self) -> str:
        return self.kind if self.line is None else f"{self.kind}, line {self.line}"


@dataclass
class SuiteEntry:
    """One evaluation of a suite, its settings resolved (flags not applied yet)."""

    name: str
    block: str  # "eval[0]", "ablation[1]"
    settings: dict[str, Any]
    origins: dict[str, Origin]
    sweep: dict[str, Any] = field(default_factory=dict)  # "sampling.temperature": 0.7
    config: single.EvalConfig | None = None


# ------------------------------------------------------------------ positions


class Problems:
    def __init__(self, file: str, positions: Mapping[tuple[Any, ...], tuple[int, int]]) -> None:
        self.file = file
        self.positions = positions
        self.list: list[Problem] = []

    def add(self, path: Iterable[Any], message: str, where: Origin | None = None) -> None:
        path = tuple(path)
        line = col = None
        if where is not None and where.line is not None:
            line, col = where.line, where.col
        else:
            for n in range(len(path), 0, -1):
                if path[:n] in self.positions:
                    line, col = self.positions[path[:n]]
                    break
        key = ".".join(f"[{p}]" if isinstance(p, int) else str(p) for p in path).replace(".[", "[")
        self.list.append(Problem(self.file, line, col, key, message))


# ------------------------------------------------------------------ expansion


def _origin(positions: Mapping[tuple[Any, ...], tuple[int, int]], kind: str, *path: Any) -> Origin:
    line, col = positions.get(tuple(path), (None, None))
    return Origin(kind, line, col)


def slug(value: Any) -> str:
    if isinstance(value, float):
        text = f"{value:g}"
    elif isinstance(value, str):
        text = value.rsplit("/", 1)[-1]
    else:
        text = str(value)
    return re.sub(r"[^A-Za-z0-9.]+", "-", text).strip("-.") or "x"


def _label(key: str, value: Any) -> str:
    short = ABBREVIATIONS.get(key.rsplit(".", 1)[-1])
    if short is not None and isinstance(value, int | float) and not isinstance(value, bool):
        return f"{short}{slug(value)}"
    if isinstance(value, bool):
        return f"{key.rsplit('.', 1)[-1]}-{str(value).lower()}"
    return slug(value)


def _merge(
    settings: dict[str, Any],
    origins: dict[str, Origin],
    values: Mapping[str, Any],
    kind: str,
    positions: Mapping[tuple[Any, ...], tuple[int, int]],
    prefix: tuple[Any, ...],
) -> None:
    """Lay ``values`` over ``settings``; the tables of MERGED_TABLES merge key by key."""
    for key, value in values.items():
        if key not in ENTRY_KEYS:
            continue
        if key in MERGED_TABLES and isinstance(value, dict):
            table = dict(settings.get(key) or {})
            for sub, item in value.items():
                table[sub] = item
                origins[f"{key}.{sub}"] = _origin(positions, kind, *prefix, key, sub)
            settings[key] = table
        else:
            settings[key] = value
        origins[key] = _origin(positions, kind, *prefix, key)


def expand(
    data: Mapping[str, Any],
    positions: Mapping[tuple[Any, ...], tuple[int, int]],
    problems: Problems,
) -> list[SuiteEntry]:
    defaults = {k: v for k, v in data.items() if k in ENTRY_KEYS}
    entries: list[SuiteEntry] = []
    evals = data.get("eval", [])
    ablations = data.get("ablation", [])
    if not _within_cap(evals, ablations, problems):
        return entries
    for index, block in enumerate(evals if isinstance(evals, list) else []):
        if not isinstance(block, dict):
            problems.add(("eval", index), "must be a table")
            continue
        settings: dict[str, Any] = {}
        origins: dict[str, Origin] = {}
        _merge(settings, origins, defaults, "defaults", positions, ())
        _merge(settings, origins, block, "entry", positions, ("eval", index))
        entries.append(SuiteEntry("", f"eval[{index}]", settings, origins))
    for index, block in enumerate(ablations if isinstance(ablations, list) else []):
        if not isinstance(block, dict):
            problems.add(("ablation", index), "must be a table")
            continue
        entries.extend(_expand_ablation(index, block, defaults, positions, problems))
    return entries


def _within_cap(evals: Any, ablations: Any, problems: Problems) -> bool:
    """Count the entries before making any (a sweep of 9 keys × 10 values would be a
    billion); over MAX_ENTRIES, each sweep's size is one problem."""
    sizes: list[tuple[int, int, str]] = []
    for index, block in enumerate(ablations if isinstance(ablations, list) else []):
        sweep = block.get("sweep") if isinstance(block, dict) else None
        if not isinstance(sweep, dict):
            continue
        lengths: list[tuple[str, int]] = []
        for key, values in sweep.items():
            if key in SWEEPABLE_TABLES and isinstance(values, dict):
                lengths += [
                    (f"{key}.{k}", len(v)) for k, v in values.items() if isinstance(v, list)
                ]
            elif isinstance(values, list):
                lengths.append((key, len(values)))
        count = math.prod(n for _, n in lengths if n) if lengths else 0
        shown = " × ".join(f"{n} {k}" for k, n in lengths)
        sizes.append((index, count, shown))
    total = len(evals if isinstance(evals, list) else []) + sum(n for _, n, _ in sizes)
    if total <= MAX_ENTRIES:
        return True
    for index, count, shown in sizes:
        if count > 1:
            problems.add(
                ("ablation", index, "sweep"),
                f"sweeps {shown}: {count:,} entries",
            )
    problems.add(
        (),
        f"the suite would expand to {total:,} entries; a suite holds at most {MAX_ENTRIES:,} "
        "(narrow the sweeps or split the suite)",
    )
    return False


def _sweep_axes(
    index: int, block: Mapping[str, Any], problems: Problems
) -> list[tuple[str, list[Any]]]:
    """[(dotted key, values)] of an ablation's sweep, in file order."""
    sweep = block.get("sweep")
    if sweep is None:
        problems.add(("ablation", index), "an [[ablation]] needs an [ablation.sweep] table")
        return []
    if not isinstance(sweep, dict):
        problems.add(("ablation", index, "sweep"), "must be a table of lists")
        return []
    axes: list[tuple[str, list[Any]]] = []
    for key, values in sweep.items():
        if key in SWEEPABLE_TABLES and isinstance(values, dict):
            found = block.get(key)
            fixed: dict[str, Any] = found if isinstance(found, dict) else {}
            for sub, sub_values in values.items():
                where: tuple[Any, ...] = ("ablation", index, "sweep", key, sub)
                if sub in fixed:
                    problems.add(where, f"{key}.{sub} is both fixed and swept")
                elif _check_values(sub_values, where, problems):
                    axes.append((f"{key}.{sub}", sub_values))
            continue
        where = ("ablation", index, "sweep", key)
        if key not in ENTRY_KEYS or key in ("name",):
            problems.add(where, f"cannot be swept{suggest(key, ENTRY_KEYS)}")
        elif key in block:
            problems.add(where, f"{key} is both fixed and swept")
        elif _check_values(values, where, problems):
            axes.append((key, values))
    return axes


def _check_values(values: Any, where: tuple[Any, ...], problems: Problems) -> bool:
    if not isinstance(values, list):
        problems.add(where, "a swept key needs a list of values")
        return False
    if not values:
        problems.add(where, "a swept key needs at least one value")
        return False
    return True


def _expand_ablation(
    index: int,
    block: Mapping[str, Any],
    defaults: Mapping[str, Any],
    positions: Mapping[tuple[Any, ...], tuple[int, int]],
    problems: Problems,
) -> list[SuiteEntry]:
    axes = _sweep_axes(index, block, problems)
    if not axes:
        return []
    entries = []
    fixed = {k: v for k, v in block.items() if k != "sweep"}
    for combination in itertools.product(*(values for _, values in axes)):
        settings: dict[str, Any] = {}
        origins: dict[str, Origin] = {}
        _merge(settings, origins, defaults, "defaults", positions, ())
        _merge(settings, origins, fixed, "entry", positions, ("ablation", index))
        swept: dict[str, Any] = {}
        for (key, _), value in zip(axes, combination, strict=True):
            swept[key] = value
            if "." in key:
                table, sub = key.split(".", 1)
                settings[table] = {**(settings.get(table) or {}), sub: value}
                origins[key] = _origin(positions, "sweep", "ablation", index, "sweep", table, sub)
            else:
                settings[key] = value
                origins[key] = _origin(positions, "sweep", "ablation", index, "sweep", key)
        entries.append(SuiteEntry("", f"ablation[{index}]", settings, origins, swept))
    return entries


def name_entries(entries: list[SuiteEntry]) -> None:
    """Stable, readable names, unique within the suite (ignoring case): ``name`` if
    given, else the rollout (and, for ablations, a label per swept value); a clash gets
    the first free ``-2``, ``-3``…; ``suite`` is never an entry's name."""
    import hashlib

    taken = set(RESERVED_NAMES)
    for entry in entries:
        given = entry.settings.get("name")
        base = (
            given
            if isinstance(given, str) and given
            else slug(entry.settings.get("rollout") or "eval")
        )
        parts = [base, *(_label(k, v) for k, v in entry.sweep.items())]
        name = "-".join(parts)
        if len(name) > MAX_NAME - 4:  # room for a -NN suffix
            digest = hashlib.blake2b(name.encode(), digest_size=4).hexdigest()
            name = f"{name[: MAX_NAME - 14].rstrip('-.')}-{digest}"
        candidate, count = name, 1
        while candidate.lower() in taken:
            count += 1
            candidate = f"{name}-{count}"
        taken.add(candidate.lower())
        entry.name = candidate
