"""Eval suites: many evaluations and ablation sweeps from one TOML file.

A config file with an ``[experiment]`` table is one run (eval_config.py). A file with
``[[eval]]`` and/or ``[[ablation]]`` tables is a **suite**; its top-level keys are
defaults for every entry::

    suite = "calc-models"             # optional: the suite's name (default: the file stem)
    rollout = "calculator"            # defaults for every entry …
    entrypoint = "main.py"
    dataset = "arithmetic"
    limit = 20

    [[eval]]
    model_path = "mock/calculator"

    [[ablation]]                      # a cartesian sweep
    model_path = "mock/flaky-calculator"
    [ablation.sweep]
    n = [1, 3]
    [ablation.sweep.sampling]
    temperature = [0.0, 0.7]

Entry keys: everything of ``[experiment]`` and ``[evaluation]``, plus ``dataset_file``,
``base_url``, ``api_key_env``, ``endpoint_id``, ``headers`` / ``header``, ``sampling``,
``config`` (the rollout's workflow config), ``seed``, ``mode``, ``rollout_python`` and
``name``. Suite-level only: ``suite``, ``endpoints_path``, ``[env]``, ``[secrets]``,
``[advanced]``. Precedence: entry > top-level defaults > built-in defaults (CLI flags,
applied later, override all); the tables ``sampling``, ``config`` and ``headers``
merge key by key. Each expanded entry gets a stable, readable, unique name
(``calculator-n3-t0.7``): unique ignoring case (case-insensitive file systems), never
``suite`` (the suite's own document), at most ``MAX_NAME`` characters (a longer
generated name keeps its start and gains a digest of the whole). A suite expands to at
most ``MAX_ENTRIES`` entries, checked before anything is expanded. Every problem is
reported at once, with its position.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from osmosis_client.errors import ConfigError, Problem
from osmosis_client.platform import eval_config as single

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


@dataclass
class Suite:
    name: str
    path: Path
    root: Path
    entries: list[SuiteEntry]
    endpoints_path: str | None = None
    text_digest: str = ""


def is_suite(data: Mapping[str, Any]) -> bool:
    return "eval" in data or "ablation" in data


def looks_like_suite(path: Path) -> bool:
    """Whether a config file is a suite (``[[eval]]``/``[[ablation]]``), by a cheap scan."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return False
    return bool(re.search(r"^\s*\[\[\s*(eval|ablation)\s*\]\]", text, re.MULTILINE))


# ------------------------------------------------------------------ positions


def locate(text: str) -> dict[tuple[Any, ...], tuple[int, int]]:
    """Positions of keys, with arrays of tables indexed: ``("eval", 0, "limit")``,
    ``("ablation", 1, "sweep", "sampling", "temperature")``."""
    positions: dict[tuple[Any, ...], tuple[int, int]] = {}
    counters: dict[str, int] = {}
    table: tuple[Any, ...] = ()
    for lineno, line in enumerate(text.splitlines(), 1):
        stripped = line.lstrip()
        if not stripped or stripped.startswith("#"):
            continue
        col = len(line) - len(stripped) + 1
        match = re.match(r"^\s*\[\[\s*([^\]]+?)\s*\]\]", line)
        if match:
            name = match.group(1).strip()
            counters[name] = counters.get(name, -1) + 1
            table = (name, counters[name])
            positions.setdefault(table, (lineno, col))
            continue
        match = re.match(r"^\s*\[\s*([^\]]+?)\s*\]", line)
        if match:
            parts = single._split_key(match.group(1))
            head = parts[0]
            if head in counters and len(parts) > 1:
                table = (head, counters[head], *parts[1:])
            else:
                table = tuple(parts)
            positions.setdefault(table, (lineno, col))
            continue
        match = single._KEY_RE.match(line)
        if match:
            positions.setdefault((*table, *single._split_key(match.group(1))), (lineno, col))
    return positions


class _Problems:
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


def _slug(value: Any) -> str:
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
        return f"{short}{_slug(value)}"
    if isinstance(value, bool):
        return f"{key.rsplit('.', 1)[-1]}-{str(value).lower()}"
    return _slug(value)


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
    problems: _Problems,
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


def _within_cap(evals: Any, ablations: Any, problems: _Problems) -> bool:
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
    index: int, block: Mapping[str, Any], problems: _Problems
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
            problems.add(where, f"cannot be swept{single._suggest(key, ENTRY_KEYS)}")
        elif key in block:
            problems.add(where, f"{key} is both fixed and swept")
        elif _check_values(values, where, problems):
            axes.append((key, values))
    return axes


def _check_values(values: Any, where: tuple[Any, ...], problems: _Problems) -> bool:
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
    problems: _Problems,
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
            else _slug(entry.settings.get("rollout") or "eval")
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


# ------------------------------------------------------------------ validation


def _entry_data(entry: SuiteEntry, suite_tables: Mapping[str, Any]) -> dict[str, Any]:
    """The entry as the sections of a single eval config."""
    s = entry.settings
    experiment = {k: s[k] for k in EXPERIMENT_KEYS if k in s}
    if "model_path" not in experiment and isinstance(s.get("endpoint_id"), str):
        experiment["model_path"] = s["endpoint_id"]
    data: dict[str, Any] = {
        "experiment": experiment,
        "evaluation": {k: s[k] for k in EVALUATION_KEYS if k in s},
        "local": {k: s[k] for k in LOCAL_KEYS if k in s},
    }
    for table in SUITE_TABLES:
        if isinstance(suite_tables.get(table), dict):
            data[table] = suite_tables[table]
    if isinstance(suite_tables.get("endpoints_path"), str):
        data["local"]["endpoints_path"] = suite_tables["endpoints_path"]
    return data


class _EntryCollector(single._Collector):
    """Maps a problem in an entry's sections back to where that setting was written."""

    def __init__(self, problems: _Problems, entry: SuiteEntry) -> None:
        super().__init__(problems.file, {})
        self.suite_problems = problems
        self.entry = entry

    def add(self, path: Iterable[str | int], message: str) -> None:
        keys = [str(p) for p in path if not isinstance(p, int)]
        if keys and keys[0] in ("experiment", "evaluation", "local"):
            keys = keys[1:]
        if keys and keys[0] in SUITE_TABLES:
            self.suite_problems.add(tuple(keys), message)  # a suite-level table
            return
        origin = self.entry.origins.get(".".join(keys[:2])) or self.entry.origins.get(
            keys[0] if keys else ""
        )
        key = ".".join(keys) or "entry"
        if origin is None or origin.line is None:  # missing: at the entry's own table
            line, col = self.suite_problems.positions.get(_block_path(self.entry), (None, None))
            label = f"{self.entry.name}: {key}"
        else:
            line, col = origin.line, origin.col
            # a top-level default is one place, whichever entries it reaches
            label = key if origin.kind == "defaults" else f"{self.entry.name}: {key}"
        self.suite_problems.list.append(
            Problem(self.suite_problems.file, line, col, label, message)
        )


def _block_path(entry: SuiteEntry) -> tuple[Any, ...]:
    name, _, rest = entry.block.partition("[")
    return (name, int(rest.rstrip("]")))


def _check_entry(
    entry: SuiteEntry, data: Mapping[str, Any], root: Path, out: _EntryCollector
) -> None:
    s = entry.settings
    for key in ("rollout", "entrypoint", "dataset"):
        if key not in s:
            out.add([key], "is required (set it in the entry or at the top level)")
    if "model_path" not in s and "endpoint_id" not in s:
        out.add(["model_path"], "is required (or an endpoint_id)")
    config = s.get("config")
    if config is not None and not isinstance(config, dict):
        out.add(["config"], "must be a table")
    name = s.get("name")
    if name is not None and (not isinstance(name, str) or not single.SAFE_SEGMENT.match(name)):
        out.add(["name"], "must be a name of letters, digits, '.', '_' and '-'")
    elif isinstance(name, str) and len(name) > MAX_NAME - 4:
        out.add(["name"], f"is {len(name)} characters long; at most {MAX_NAME - 4}")
    elif isinstance(name, str) and name.lower() in RESERVED_NAMES:
        out.add(["name"], f"{name!r} is reserved (the suite's own document is suite.json)")
    for key, value in entry.sweep.items():
        if isinstance(value, float) and not math.isfinite(value):
            out.add(key.split("."), "swept values must be finite numbers")
    single._check_types(data, out)
    single._check_rules(data, root, out)


def parse_suite(text: str, data: Mapping[str, Any], *, path: Path, root: Path) -> Suite:
    """Expand and validate a suite; :class:`ConfigError` lists every problem."""
    import hashlib

    shown = str(path)
    positions = locate(text)
    problems = _Problems(shown, positions)
    allowed = {*ENTRY_KEYS, *SUITE_KEYS, *SUITE_TABLES, "eval", "ablation"}
    for key in data:
        if key in ("experiment", "evaluation", "local"):
            problems.add((key,), "a suite sets defaults as top-level keys, not in this table")
        elif key not in allowed:
            problems.add((key,), f"unknown key{single._suggest(key, allowed)}")
    for key in ("eval", "ablation"):
        if key in data and not isinstance(data[key], list):
            problems.add((key,), f"must be [[{key}]] tables")
    for block_name in ("eval", "ablation"):
        blocks = data.get(block_name)
        for index, block in enumerate(blocks if isinstance(blocks, list) else []):
            if not isinstance(block, dict):
                continue
            for key in block:
                if key not in ENTRY_KEYS and not (block_name == "ablation" and key == "sweep"):
                    problems.add(
                        (block_name, index, key), f"unknown key{single._suggest(key, ENTRY_KEYS)}"
                    )
    entries = expand(data, positions, problems)
    name_entries(entries)
    if not entries and not problems.list:
        problems.add(("eval",), "the suite has no entries")
    suite_tables = {k: data[k] for k in (*SUITE_TABLES, "endpoints_path") if k in data}
    for entry in entries:
        _check_entry(
            entry, _entry_data(entry, suite_tables), root, _EntryCollector(problems, entry)
        )
    if problems.list:
        unique = list(dict.fromkeys(problems.list))  # one problem per place, not per entry
        raise ConfigError(
            f"{shown} has {len(unique)} problem{'s' if len(unique) != 1 else ''}",
            unique,
            hint="fix the keys listed below",
        )
    for entry in entries:  # every entry passed: each becomes a single run's config
        entry.config = single.EvalConfig.model_validate(
            {**_entry_data(entry, suite_tables), "path": path, "root": root}
        )
    given = data.get("suite")
    name = given if isinstance(given, str) and given else path.stem
    endpoints_path = data.get("endpoints_path")
    return Suite(
        name=name if single.SAFE_SEGMENT.match(name) else _slug(name),
        path=path,
        root=root,
        entries=entries,
        endpoints_path=endpoints_path if isinstance(endpoints_path, str) else None,
        text_digest=hashlib.blake2b(text.encode(), digest_size=10).hexdigest(),
    )


def load_suite(path: str | Path, *, root: Path | None = None) -> Suite:
    """Read, expand and validate a suite file."""
    import tomlkit

    path = Path(path)
    text = single.read_config_text(path)
    try:
        data = tomlkit.parse(text).unwrap()
    except tomlkit.exceptions.TOMLKitError:
        single.parse_config(text, path=path, root=root)  # reports the syntax error, located
        raise
    return parse_suite(text, data, path=path, root=root or single._find_root(path))
