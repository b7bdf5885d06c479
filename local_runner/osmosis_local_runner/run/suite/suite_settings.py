"""A suite's settings and where its runs go: each entry's resolved settings and where
they came from (``--dry-run``, the suite document), flags that collapse a sweep, the
fingerprint a resumed suite must match, and its directory (new, or the latest
unfinished one) — one rule for ``osmosis eval run SUITE.toml`` and ``run_suite``."""

from __future__ import annotations

import json
import secrets
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from osmosis_client._redact import redact_url
from osmosis_client.errors import InvalidInputError
from osmosis_client.layout import SUITES
from osmosis_client.platform.eval.suite_config import Suite, SuiteEntry
from osmosis_local_runner.results.documents.sources import SUITE_DOCUMENT
from osmosis_local_runner.run.request.overrides import Overrides
from osmosis_local_runner.run.request.settings import RunSettings

SUITES_DIR = SUITES
#: the settings shown per entry (``--dry-run``, the suite document)
SHOWN = (
    "rollout",
    "entrypoint",
    "model_path",
    "endpoint_id",
    "dataset",
    "limit",
    "n",
    "batch_size",
    "pass_threshold",
    "agent_workflow_timeout_s",
    "grader_timeout_s",
    "sampling",
    "config",
)
FLAG_KEYS = {
    "limit": "limit",
    "n": "n",
    "batch_size": "batch_size",
    "pass_threshold": "pass_threshold",
    "model": "model_path",
    "base_url": "base_url",
    "seed": "seed",
}


def suite_flags(
    settings: RunSettings, server_echo: Callable[[str], None] | None = None
) -> Overrides:
    """A suite's settings, as every entry's flags (each entry gets its own output)."""
    from dataclasses import asdict

    return Overrides(**asdict(settings), output=Path("."), server_echo=server_echo)


def shown_header(line: str) -> str:
    """``Authorization: Bearer …`` → ``Authorization: ***`` (the value may be a credential)."""
    name = line.partition(":")[0].strip()
    return f"{name}: ***"


def default_directory(suite: Suite, base: Path = SUITES_DIR) -> Path:
    """``base/<suite>-<UTC stamp>-<random>``, not taken."""
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    while True:
        path = base / f"{suite.name}-{stamp}-{secrets.token_hex(2)}"
        if not path.exists():
            return path


def fingerprint(suite: Suite, flags: Overrides) -> dict[str, Any]:
    """What a resumed suite must share: the file's text and the flags that shape runs."""
    return {
        "file": str(suite.path.resolve()),
        "text": suite.text_digest,
        "flags": {
            k: v
            for k, v in {
                "limit": flags.limit,
                "n": flags.n,
                "batch_size": flags.batch_size,
                "pass_threshold": flags.pass_threshold,
                "model": flags.model,
                "base_url": redact_url(flags.base_url) if flags.base_url else None,
                "seed": flags.seed,
                "sampling": flags.sampling() or None,
                # header values may be credentials: the names shape nothing secret
                "headers": [shown_header(line) for line in flags.headers] or None,
            }.items()
            if v is not None
        },
    }


def find_incomplete(suite: Suite, flags: Overrides, base: Path = SUITES_DIR) -> Path | None:
    """The most recent suite directory of this file and settings that did not finish."""
    wanted = fingerprint(suite, flags)
    candidates = []
    for document in base.glob(f"*/{SUITE_DOCUMENT}"):
        try:
            data = json.loads(document.read_text())
        except (OSError, ValueError):
            continue
        if data.get("fingerprint") == wanted and data.get("status") != "finished":
            candidates.append((document.stat().st_mtime, document.parent))
    return max(candidates)[1] if candidates else None


def suite_directory(
    suite: Suite,
    flags: Overrides,
    *,
    output: Path | None,
    root: Path | None,
    resume: bool,
    on_note: Callable[[str], None] | None = None,
) -> Path:
    """Where a suite run goes: ``output``; with ``resume`` alone, the latest unfinished run
    of this suite and settings under ``root`` (``NOTHING_TO_RESUME`` when there is none);
    else a new directory."""
    base = root / SUITES_DIR if root is not None else SUITES_DIR
    if output is not None:
        return output
    if not resume:
        return default_directory(suite, base)
    found = find_incomplete(suite, flags, base)
    if found is None:
        raise InvalidInputError(
            f"nothing to resume: no unfinished run of suite {suite.name} with these "
            f"settings under {base}",
            hint="name the suite run's directory, or start a new run",
            code="NOTHING_TO_RESUME",
        )
    if on_note is not None:
        on_note(f"Resuming {found}")
    return found


def settings_of(entry: SuiteEntry, flags: Overrides) -> tuple[dict[str, Any], dict[str, str]]:
    """The entry's resolved settings (flags win over the file), and where each came
    from (the keys of ``sampling`` / ``config`` tables one by one)."""
    values: dict[str, Any] = {}
    origins: dict[str, str] = {}
    for key in SHOWN:
        if key not in entry.settings:
            continue
        values[key] = entry.settings[key]
        if isinstance(values[key], dict):
            for sub in values[key]:
                origin = entry.origins.get(f"{key}.{sub}")
                origins[f"{key}.{sub}"] = str(origin) if origin else "file"
        else:
            origins[key] = str(entry.origins.get(key, "file"))
    for flag, key in FLAG_KEYS.items():
        value = getattr(flags, flag)
        if value is not None:
            values[key] = redact_url(value) if key == "base_url" else value
            origins[key] = "flag"
    sampling = flags.sampling()
    if sampling:
        values["sampling"] = {**(entry.settings.get("sampling") or {}), **sampling}
        origins.update({f"sampling.{k}": "flag" for k in sampling})
    return values, origins


def collapsed(suite: Suite, flags: Overrides) -> list[tuple[str, list[str]]]:
    """Flags that override a setting a sweep varies make some entries identical: each
    such flag, with the entries that now run the same settings (first one kept in view)."""
    swept = {key.split(".")[0] for entry in suite.entries for key in entry.sweep}
    overriding = [
        flag for flag, key in FLAG_KEYS.items() if getattr(flags, flag) is not None and key in swept
    ]
    if flags.sampling() and "sampling" in swept:
        overriding.append("sampling")
    if not overriding:
        return []
    groups: dict[str, list[str]] = {}
    for entry in suite.entries:
        values = settings_of(entry, flags)[0]
        groups.setdefault(json.dumps(values, sort_keys=True, default=str), []).append(entry.name)
    same = [names for names in groups.values() if len(names) > 1]
    flag_names = [f"--{flag.replace('_', '-')}" for flag in overriding]
    return [(", ".join(flag_names), names) for names in same]
