"""Suites from Python: ``run_eval("configs/eval/suite.toml")`` runs every entry, as
``osmosis eval run SUITE.toml`` does (same runner, same ``.osmosis/suites/`` layout), and
returns a :class:`SuiteResult`: each entry's :class:`EvalResult` by name."""

from __future__ import annotations

import asyncio
import json
import logging
from pathlib import Path
from typing import Any

from osmosis_client.errors import InvalidInputError
from osmosis_local_runner.api.results import EvalResult
from osmosis_local_runner.api.spec import overrides

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
            output = Path(str(entry.get("output") or ""))
            if output.is_file():
                self.entries[str(entry.get("name"))] = EvalResult(output, str(entry.get("name")))

    def __repr__(self) -> str:
        return f"SuiteResult({self.name!r}, {self.status}, {len(self.entries)} entries)"

    def to_dict(self) -> dict[str, Any]:
        return dict(self.document)


async def arun_suite(
    path: Path,
    *,
    output: str | Path | None,
    root: str | Path | None,
    resume: bool,
    parallel: int,
    options: dict[str, Any],
) -> SuiteResult:
    from osmosis_client.platform.suite_config import load_suite
    from osmosis_local_runner.run.suite import SUITES_DIR, SuiteRunner, default_directory

    if options.keys() & {"workflow", "module", "agent_loop", "mcp", "eval_fns", "dataset"}:
        raise InvalidInputError("a suite names its own rollouts and datasets", code="USAGE")
    suite = load_suite(path)
    flags = overrides(Path("results.json"), options, resume=resume)
    base = Path(root) if root is not None else Path.cwd()
    directory = Path(output) if output is not None else base / default_directory(suite)
    if resume and output is None:
        from osmosis_local_runner.run.suite import find_incomplete

        found = find_incomplete(suite, flags, base / SUITES_DIR)
        if found is None:
            raise InvalidInputError(
                f"nothing to resume: no unfinished run of suite {suite.name} with these settings",
                hint="give the suite run's directory as output=",
                code="NOTHING_TO_RESUME",
            )
        directory = found
    runner = SuiteRunner(
        suite, flags, directory=directory, parallel=parallel, resume=resume, on_note=logger.info
    )
    runner.prepare()
    try:
        await runner.run()
    except asyncio.CancelledError:
        runner.interrupt()
        raise
    document = json.loads((directory / "suite.json").read_text())
    return SuiteResult(directory, document)
