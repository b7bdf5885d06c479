"""Suites from Python: ``run_suite("configs/eval/suite.toml")`` runs every entry, as
``osmosis eval run SUITE.toml`` does (same runner, same ``.osmosis/suites/`` layout, the
directory chosen by the same ``open_suite``), and returns a :class:`SuiteResult`:
each entry's :class:`EvalResult` by name."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

from typing_extensions import Unpack

from osmosis_client.errors import InvalidInputError
from osmosis_local_runner.api.blocking import run_blocking
from osmosis_local_runner.api.keywords import SuiteKeywords, destinations_of, settings_of
from osmosis_local_runner.api.results import EvalResult
from osmosis_local_runner.run.session.session import interruptible
from osmosis_local_runner.run.suite.suite_settings import suite_flags

logger = logging.getLogger("osmosis_local_runner")


class SuiteResult:
    """A suite run: ``name``, ``path`` (its directory), ``status``, ``entries`` (each an
    :class:`EvalResult`, by entry name), ``to_dict()`` (its ``suite.json``)."""

    def __init__(self, path: Path, document: dict[str, Any]) -> None:
        self.path = path
        self.document = document
        self.name = str(document.get("suite") or path.name)
        self.status = str(document.get("status") or "finished")
        self.entries: dict[str, EvalResult] = {}
        for entry in document.get("entries") or []:
            if not isinstance(entry, dict):
                continue
            output = Path(str(entry.get("output") or ""))
            if output.is_file():
                self.entries[str(entry.get("name"))] = EvalResult(output, str(entry.get("name")))

    def __repr__(self) -> str:
        return f"SuiteResult({self.name!r}, {self.status}, {len(self.entries)} entries)"

    def to_dict(self) -> dict[str, Any]:
        return dict(self.document)


def run_suite(config: str | Path, **options: Unpack[SuiteKeywords]) -> SuiteResult:
    """Run every entry of a suite config and return the :class:`SuiteResult` (keywords:
    :func:`arun_suite`); interrupted, it stops as :func:`run_eval` does."""
    return run_blocking(lambda: arun_suite(config, **options))


async def arun_suite(config: str | Path, **options: Unpack[SuiteKeywords]) -> SuiteResult:
    """Every entry of a suite, as ``osmosis eval run SUITE.toml`` runs them: ``parallel``
    entries at once; the settings override every entry's; ``resume=True`` continues the
    latest unfinished run of the same file and settings (``output``: its directory)."""
    from osmosis_client.platform.eval.suite_config import load_suite
    from osmosis_local_runner.run.suite.suite import SuiteRequest, open_suite

    settings = settings_of(options, ("output", "root", "resume", "parallel", "log_to", "step"))
    if settings.dataset is not None:
        raise InvalidInputError("a suite names its own datasets", code="USAGE")
    suite = load_suite(Path(config))
    flags = suite_flags(settings)
    output, root = options.get("output"), options.get("root")
    request = SuiteRequest(
        suite,
        flags,
        output=Path(output) if output is not None else None,
        root=Path(root) if root is not None else Path.cwd(),
        resume=bool(options.get("resume")),
        parallel=options.get("parallel") or 1,
        log_to=destinations_of(options.get("log_to")),
    )
    runner = open_suite(request, on_note=logger.info)
    runner.prepare()
    await interruptible(runner.run(), runner.interrupt)
    document = json.loads((runner.directory / "suite.json").read_text())
    return SuiteResult(runner.directory.absolute(), document)
