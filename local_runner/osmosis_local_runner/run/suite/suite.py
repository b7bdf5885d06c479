"""Running a suite: its entries one after another (or ``parallel`` at once, sharing one
in-flight cap), each an ordinary run with its own results document and journal under
one suite directory, plus the suite's own document (``suite.json``).

Layout (``-o DIR``, default ``.osmosis/suites/<suite>-<UTC stamp>-<random>/``)::

    suite.json               the suite document: entries, settings, status, summaries
    <entry>.json             each entry's results document (+ .journal.jsonl, .run/)

Resuming continues the directory: an entry whose document says ``finished`` is never
run again, one with a journal resumes, the rest start. Without a directory, the latest
incomplete suite of the same file and settings is found under ``.osmosis/suites``.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from osmosis_client._fs import atomic_write
from osmosis_client.errors import InvalidInputError, OsmosisError
from osmosis_client.platform.eval.suite_config import Suite, SuiteEntry
from osmosis_local_runner.results.documents.document import read_head
from osmosis_local_runner.results.documents.sources import SUITE_DOCUMENT
from osmosis_local_runner.run.execute.runner import Runner
from osmosis_local_runner.run.request.overrides import Overrides, config_spec
from osmosis_local_runner.run.request.spec import Progress, RunPlan, RunResult, RunSpec
from osmosis_local_runner.run.session.journal import journal_path
from osmosis_local_runner.run.suite.suite_settings import (
    fingerprint,
    settings_of,
)

if TYPE_CHECKING:
    from osmosis_local_runner.trackers import Destination, Logged


@dataclass
class EntryRun:
    """One entry of a suite being run."""

    entry: SuiteEntry
    output: Path
    spec: RunSpec | None = None
    plan: RunPlan | None = None
    state: str = "new"  # new | resume | done
    status: str = "pending"  # pending | running | finished | stopped | failed
    summary: dict[str, Any] | None = None
    error: str | None = None
    progress: Progress = field(default_factory=Progress)
    runner: Runner | None = None
    tracked: list[Logged] = field(default_factory=list)  # what became of each tracker


@dataclass
class SuiteRequest:
    """What one invocation of a suite asks for — ``osmosis eval run SUITE.toml`` and
    ``run_suite`` alike: the suite, the settings over every entry, where it goes (a
    directory; None: a new one under ``root``, or with ``resume`` the latest unfinished
    run of this suite and settings), how many entries at once, and the trackers."""

    suite: Suite
    flags: Overrides
    output: Path | None = None
    root: Path | None = None
    resume: bool = False
    parallel: int = 1
    log_to: tuple[Destination, ...] = ()


def open_suite(
    request: SuiteRequest,
    *,
    on_progress: Callable[[EntryRun], None] | None = None,
    on_note: Callable[[str], None] | None = None,
) -> SuiteRunner:
    """The suite run a request names, its directory chosen (both doors' one way to a
    :class:`SuiteRunner`)."""
    from osmosis_local_runner.run.suite.suite_settings import suite_directory

    directory = suite_directory(
        request.suite,
        request.flags,
        output=request.output,
        root=request.root,
        resume=request.resume,
        on_note=on_note,
    )
    return SuiteRunner(request, directory, on_progress=on_progress, on_note=on_note)


class SuiteRunner:
    """Plans and runs a suite's entries; the CLI renders its progress and documents."""

    def __init__(
        self,
        request: SuiteRequest,
        directory: Path,
        *,
        on_progress: Callable[[EntryRun], None] | None = None,
        on_note: Callable[[str], None] | None = None,
    ) -> None:
        """The request's suite run in ``directory``; its trackers (``log_to``) get each
        finished entry as a run of its own (metrics under ``eval/ENTRY/``), at the
        suite's step (``flags.step``)."""
        suite, flags = request.suite, request.flags
        self.suite = suite
        self.flags = flags
        self.directory = directory
        self.parallel = max(1, request.parallel)
        self.resume = request.resume
        self.on_progress = on_progress
        self.on_note = on_note
        self.log_to, self.log_step = request.log_to, flags.step
        self.runs = [EntryRun(entry, directory / f"{entry.name}.json") for entry in suite.entries]
        self.fingerprint = fingerprint(suite, flags)
        self.started = time.monotonic()
        self._stopping = False

    # ------------------------------------------------------------ preparing

    def prepare(self) -> list[EntryRun]:
        """Every entry's spec and plan (no model call): all problems before anything runs."""
        if self.log_to:
            from osmosis_local_runner.run.share.sinks import TrackerSink

            TrackerSink(self.log_to).start()
        document = self.directory / SUITE_DOCUMENT
        if document.exists():
            if not self.resume:
                raise InvalidInputError(
                    f"{self.directory} holds an earlier suite run",
                    hint="resume it, or choose another suite directory",
                    code="RESULTS_EXIST",
                )
            try:
                previous = json.loads(document.read_text())
            except (OSError, ValueError):
                previous = {}
            if previous.get("fingerprint") != self.fingerprint:
                raise InvalidInputError(
                    f"cannot resume {self.directory}: the suite file or its settings changed",
                    hint="rerun with the original file and flags, or start a new suite run",
                    code="RESUME_MISMATCH",
                )
        elif self.resume:
            raise InvalidInputError(
                f"nothing to resume: {document} does not exist",
                hint="resume with the directory of the suite run it continues",
                code="NOTHING_TO_RESUME",
            )
        for run in self.runs:
            run.state = self._state_of(run)
            if run.state == "done":
                run.status = "finished"
                run.summary = _summary_of(run.output)
                continue
            assert run.entry.config is not None
            overrides = replace(self.flags, output=run.output, resume=run.state == "resume")
            run.spec = config_spec(
                run.entry.config,
                overrides,
                workflow_config=run.entry.settings.get("config") or None,
            )
            run.runner = Runner(run.spec, on_progress=self._progress_of(run), on_note=self.on_note)
            run.plan = run.runner.prepare()
            run.progress = run.runner.progress
        return self.runs

    def _state_of(self, run: EntryRun) -> str:
        if not self.resume:
            return "new"
        summary = _summary_of(run.output)
        if summary is not None and summary.get("status") == "finished":
            return "done"
        return "resume" if journal_path(run.output).exists() else "new"

    def _progress_of(self, run: EntryRun) -> Callable[[Progress], None]:
        return lambda progress: self._progress(run, progress)

    def _progress(self, run: EntryRun, progress: Progress) -> None:
        if self.on_progress is not None:
            self.on_progress(run)

    # ------------------------------------------------------------ running

    def interrupt(self) -> None:
        self._stopping = True
        for run in self.runs:
            if run.runner is not None and run.status == "running":
                run.runner.interrupt()

    async def run(self) -> dict[str, Any]:
        """Run every entry that is not done; the suite document, written after each."""
        self.directory.mkdir(parents=True, exist_ok=True)
        self._write()
        widest = max((r.spec.batch_size for r in self.runs if r.spec), default=1)
        slots = asyncio.Semaphore(widest) if self.parallel > 1 else None
        pending = [r for r in self.runs if r.state != "done"]
        queue: asyncio.Queue[EntryRun] = asyncio.Queue()
        for run in pending:
            queue.put_nowait(run)

        async def worker() -> None:
            while not queue.empty() and not self._stopping:
                run = queue.get_nowait()
                await self._run_entry(run, slots)

        await asyncio.gather(*(worker() for _ in range(min(self.parallel, len(pending)) or 1)))
        return self._write()

    async def _run_entry(self, run: EntryRun, slots: asyncio.Semaphore | None) -> None:
        assert run.runner is not None and run.spec is not None
        if self._stopping:  # stopped before this entry began: it stays to do
            run.status = "stopped"
            return
        run.spec.slots = slots
        run.status = "running"
        self._progress(run, run.progress)
        try:
            result: RunResult = await run.runner.run()
        except OsmosisError as exc:
            run.status = "failed"
            run.error = exc.message
            run.summary = _summary_of(run.output)
            if self.on_note is not None:
                self.on_note(f"{run.entry.name}: {exc.message}")
        else:
            run.summary = result.summary
            run.status = result.summary["status"]
            if self.log_to:  # each entry a run of its own, through the one hook
                from osmosis_local_runner.run.share.sinks import Ended, TrackerSink

                sink = TrackerSink(self.log_to)
                name = run.entry.name
                ended = Ended(run.output, step=self.log_step, name=name, prefix=f"eval/{name}/")
                await asyncio.to_thread(sink.end, ended)
                run.tracked = sink.logged
        self._progress(run, run.progress)
        self._write()

    # ------------------------------------------------------------ the document

    def document(self) -> dict[str, Any]:
        statuses = {r.status for r in self.runs}
        if statuses == {"finished"}:
            status = "finished"
        elif "running" in statuses:
            status = "running"
        elif self._stopping or "stopped" in statuses:
            status = "stopped"  # resumable
        elif "pending" in statuses:
            status = "running"  # not all started yet
        else:
            status = "failed"
        return {
            "suite": self.suite.name,
            "file": str(self.suite.path),
            "directory": str(self.directory),
            "status": status,
            "fingerprint": self.fingerprint,
            "entries": [
                {
                    "name": r.entry.name,
                    "settings": settings_of(r.entry, self.flags)[0],
                    "sweep": r.entry.sweep,
                    "output": str(r.output),
                    "status": r.status,
                    "error": r.error,
                    "summary": r.summary,
                    **({"trackers": [t.to_json() for t in r.tracked]} if r.tracked else {}),
                }
                for r in self.runs
            ],
        }

    def _write(self) -> dict[str, Any]:
        document = self.document()
        atomic_write(
            self.directory / SUITE_DOCUMENT,
            (json.dumps(document, indent=2, allow_nan=False) + "\n").encode(),
            mode=0o600,
        )
        return document


def _summary_of(output: Path) -> dict[str, Any] | None:
    """An entry's summary from its results document (None when there is none)."""
    head = read_head(output)
    summary = head.get("summary") if head else None
    return summary if isinstance(summary, dict) else None
