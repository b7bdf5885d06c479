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

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from osmosis_client._toml import locate
from osmosis_client.errors import ConfigError, Problem
from osmosis_client.platform.config_check import Collector, suggest
from osmosis_client.platform.eval import eval_config as single
from osmosis_client.platform.eval.suite_expand import (
    ENTRY_KEYS,
    EVALUATION_KEYS,
    EXPERIMENT_KEYS,
    LOCAL_KEYS,
    MAX_NAME,
    RESERVED_NAMES,
    SUITE_KEYS,
    SUITE_TABLES,
    Origin,
    Problems,
    SuiteEntry,
    expand,
    name_entries,
    slug,
)

__all__ = ["Origin", "Suite", "SuiteEntry", "is_suite", "load_suite", "looks_like_suite"]


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


class _EntryCollector(Collector):
    """Maps a problem in an entry's sections back to where that setting was written."""

    def __init__(self, problems: Problems, entry: SuiteEntry) -> None:
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
    single.check_types(data, out)
    single._check_rules(data, root, out)


def parse_suite(text: str, data: Mapping[str, Any], *, path: Path, root: Path) -> Suite:
    """Expand and validate a suite; :class:`ConfigError` lists every problem."""
    import hashlib

    shown = str(path)
    positions = locate(text)
    problems = Problems(shown, positions)
    allowed = {*ENTRY_KEYS, *SUITE_KEYS, *SUITE_TABLES, "eval", "ablation"}
    for key in data:
        if key in ("experiment", "evaluation", "local"):
            problems.add((key,), "a suite sets defaults as top-level keys, not in this table")
        elif key not in allowed:
            problems.add((key,), f"unknown key{suggest(key, allowed)}")
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
                    problems.add((block_name, index, key), f"unknown key{suggest(key, ENTRY_KEYS)}")
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
        name=name if single.SAFE_SEGMENT.match(name) else slug(name),
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
    return parse_suite(text, data, path=path, root=root or single.find_root(path))
