"""One invocation of a local run, from what was asked to what is on disk — the only code
that chooses, opens, checks, resumes, executes and finishes a run, whoever asks:
``osmosis eval run`` and the seed form (the CLI adds its live display and renders) or
``run_eval`` (the library adds a progress callback)::

    with RunSession(request, on_progress=…, on_note=…) as session:
        if session.opening == "finished":     # a finished run named again: nothing runs
            ...
        plan = session.prepare()               # rows chosen, model resolved; no model call
        result = await session.execute()       # cancelling it stops the run cleanly
        session.finish()                       # published files projected; the upload;
                                               # the trackers
    session.upload, session.tracked            # what became of the upload and trackers

A run goes to one results document (``output="x.json"``) or to a named run directory
(``.osmosis/evals/NAME/``, the published layout): a new one, an unfinished one continued
(its settings adopted from the journal), or a finished one returned as it is — refused
(``RESUME_MISMATCH``) when asked for with settings that would make it another run.
Nothing here prints: notes and warnings go to the callbacks.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from osmosis_client._fs import relative_to
from osmosis_client.errors import InvalidInputError, OsmosisError
from osmosis_client.layout import EVALS
from osmosis_local_runner.run.request.request import RunRequest, Uploader, UploadOutcome
from osmosis_local_runner.run.request.seed import SeedSource
from osmosis_local_runner.run.session.named import Identity, Note, Notes, Opening, RunFiles

if TYPE_CHECKING:
    from osmosis_client.platform.eval.eval_config import EvalConfig
    from osmosis_local_runner.run.execute.runner import Runner
    from osmosis_local_runner.run.request.spec import Progress, RunPlan, RunResult, RunSpec
    from osmosis_local_runner.run.session.invocation import Invocation
    from osmosis_local_runner.run.session.rundir import RunDirectory
    from osmosis_local_runner.run.share.sinks import Sink
    from osmosis_local_runner.trackers import Logged


T = TypeVar("T")
#: where named runs live, under the project
RUNS = EVALS


def sinks_of(request: RunRequest) -> list[Sink]:
    """The sinks a request asks for: the upload (a named run's), then the trackers."""
    from osmosis_local_runner.run.share.sinks import TrackerSink, UploadSink

    sinks: list[Sink] = []
    if request.upload is not None:
        sinks.append(UploadSink(request.upload))
    if request.log_to:
        sinks.append(TrackerSink(tuple(request.log_to)))
    return sinks


class RunSession:
    """One invocation of a run (see the module)."""

    def __init__(
        self,
        request: RunRequest,
        *,
        on_progress: Callable[[Progress], None] | None = None,
        on_note: Note | None = None,
        on_warning: Note | None = None,
    ) -> None:
        self.request = request
        self.on_progress = on_progress
        self.notes = Notes(on_note, on_warning)
        self.config: EvalConfig | None = None
        self.run: RunDirectory | None = None  # a named run's directory
        self.results = request.output or Path("results.json")
        self.opening: Opening = "new"
        self.adopted: list[tuple[str, Any]] = []  # settings taken from the journal
        self.runner: Runner | None = None
        self.plan: RunPlan | None = None
        self.files: RunFiles | None = None
        #: where the results go when the run ends (run/share/sinks.py): trackers, the upload
        self.sinks = sinks_of(request)
        self._invocation: Invocation | None = None
        self._finished = False

    @property
    def resuming(self) -> bool:
        return self.opening == "continue"

    # ------------------------------------------------------------ opening

    def __enter__(self) -> RunSession:
        request = self.request
        request.check()
        for sink in self.sinks:  # a missing extra is said before anything runs
            sink.start()
        if request.config is not None:
            from osmosis_client.platform.eval.eval_config import load_config

            self.config = load_config(request.config, replaced=request.settings.replaced_keys())
        if request.to_file:
            if request.resume or request.retry_failed:
                self.opening = "continue"
                self._adopt()
            return self
        try:
            self._open_named()
        except BaseException:
            self.close()
            raise
        return self

    def _open_named(self) -> None:
        from osmosis_local_runner.run.session.invocation import Invocation, pick_run
        from osmosis_local_runner.run.session.named import config_path, open_run

        request, config = self.request, self.config
        runs = request.output or _relative(self.project / RUNS)
        self.run = pick_run(
            runs,
            name=request.name,
            resume=request.resume and not request.fresh,
            config_path=config_path(config) if config else None,
            label=config.name if config else "this evaluation",
            rollout_dir=config.rollout_dir if config else None,
        )
        self.results = self.run.results
        if request.dry_run:  # the plan of the run it would be; nothing locked or written
            self.opening = open_run(self.run, retry_failed=request.retry_failed)
        else:
            self._invocation = Invocation(
                self.run, fresh=request.fresh, retry_failed=request.retry_failed, notes=self.notes
            ).__enter__()
            self.opening = self._invocation.opening
        if self.opening == "finished":
            self._check_unchanged()
        elif self.resuming:
            if not (request.resume or request.retry_failed or request.continue_named):
                raise InvalidInputError(
                    f"run {self.run.name!r} is unfinished",
                    hint="continue it (resume), or start it over (fresh)",
                    code="RESULTS_EXIST",
                    data={"run": self.run.name},
                )
            self._adopt()

    @property
    def project(self) -> Path:
        if self.request.root is not None:
            return self.request.root
        if self.config is not None and self.config.root is not None:
            return self.config.root
        return Path.cwd()

    def _adopt(self) -> None:
        """A continued run: the settings (and the seed form's source) not given again
        are the run's own, from its journal."""
        from osmosis_local_runner.run.session.journal import saved_settings

        saved = saved_settings(self.results)
        self.adopted = self.request.settings.adopt(saved)
        if self.request.seed is not None:
            self.adopted += self.request.seed.adopt(saved)

    def _check_unchanged(self) -> None:
        """A finished run asked for with settings that would make it another run is
        refused: its results would silently answer the wrong question. One asked for
        with more attempts per row or more rows grows when resumed (a top-up: only what
        is missing runs, ``run/session/topup.py``)."""
        from osmosis_local_runner.run.request.settings import GROWABLE
        from osmosis_local_runner.run.session.journal import journal_path, read_journal
        from osmosis_local_runner.run.session.topup import adds

        assert self.run is not None
        recorded = read_journal(journal_path(self.results)).fingerprint
        settings = self.request.settings
        changed = settings.changes_from(recorded)
        fixed = settings.changes_from(recorded, ignore=GROWABLE)
        if changed and not fixed and self.request.resume:
            self.opening = "continue"
            if self._invocation is not None:
                self._invocation.opening = "continue"
            self._adopt()
            return
        if changed:
            grows = not fixed and adds(recorded, settings)
            raise InvalidInputError(
                f"run {self.run.name!r} is complete with other settings ("
                + "; ".join(changed)
                + ")",
                hint="resume it to top it up (only the missing attempts run)"
                if grows
                else "start it over (it is archived: fresh), or use another name",
                code="RESUME_MISMATCH",
                data={"run": self.run.name, "changed": changed, "grows": grows},
            )

    # ------------------------------------------------------------ running

    def prepare(self) -> RunPlan:
        """Build the run and choose its rows (every check that needs no model call); a
        named run's manifest is written and the run marked running."""
        from osmosis_local_runner.run.execute.runner import Runner

        spec, identity = self._spec()
        self.runner = Runner(spec, on_progress=self.on_progress, on_note=self.notes.on_note)
        self.plan = self.runner.prepare()
        if self._invocation is not None:
            self.files = self._invocation.files(identity)
            self.files.prepared(self.runner)
        return self.plan

    def _spec(self) -> tuple[RunSpec, Identity]:
        from dataclasses import asdict

        from osmosis_local_runner.run.request.overrides import Overrides, config_spec, seed_run_spec

        request = self.request
        flags = Overrides(
            **asdict(request.settings),
            output=self.results,
            run_dir=self.run.path if self.run else None,
            resume=self.resuming,
            retry_failed=request.retry_failed,
            server_echo=request.server_echo,
            source=request.seed.kept() if request.seed else {},
            price_source=request.price_source,
            weights=request.weights,
            secrets=request.secrets,
        )
        if self.config is not None:
            if request.seed is not None:
                raise InvalidInputError("give an eval config or a rollout, not both", code="USAGE")
            return config_spec(self.config, flags), Identity.of(self.config)
        seed = request.seed or SeedSource()
        rollout = seed.rollout(flags)
        dataset = seed.dataset(flags.dataset, self.results)
        spec = seed_run_spec(rollout, dataset, seed.fns(), flags)
        return spec, Identity(dataset=dataset.stem, rollout=seed.label())

    async def execute(self) -> RunResult:
        """Run it (after :meth:`prepare`); cancelled, it stops as an interrupt stops it
        (:func:`interruptible`)."""
        assert self.runner is not None, "prepare() first"
        return await interruptible(self.runner.run(), self.runner.interrupt)

    def interrupt(self) -> None:
        """Stop cleanly (Ctrl-C): in-flight attempts cancelled, finished ones kept."""
        if self.runner is not None:
            self.runner.interrupt()

    # ------------------------------------------------------------ finishing

    def finish(self) -> None:
        """A named run's published files projected from its document, then its sinks: the
        upload and the trackers asked for (a finished run only; a failure is recorded,
        never raised)."""
        if self._finished:
            return
        self._finished = True
        if self.files is not None:
            self.files.finish()
        from osmosis_local_runner.run.session.named import config_path
        from osmosis_local_runner.run.share.sinks import Ended

        metrics = (self.files.metrics if self.files is not None else None) or {}
        ended = Ended(
            self.results,
            run=self.run if self.files is not None else None,
            status=(metrics.get("eval_run") or {}).get("status"),
            config_path=config_path(self.config) if self.config else None,
            step=self.request.settings.step,
            name=self.run.name if self.run is not None else None,
        )
        for sink in self.sinks:
            sink.end(ended)

    @property
    def upload(self) -> UploadOutcome | None:
        """What became of the upload asked for (None: none was, or the run is a file)."""
        from osmosis_local_runner.run.share.sinks import UploadSink

        return next((s.outcome for s in self.sinks if isinstance(s, UploadSink)), None)

    @property
    def tracked(self) -> list[Logged]:
        """What became of each tracker asked for (``log_to``)."""
        from osmosis_local_runner.run.share.sinks import TrackerSink

        return [logged for s in self.sinks if isinstance(s, TrackerSink) for logged in s.logged]

    def close(self) -> None:
        """The published files tell the truth however the run ended; the lock goes."""
        invocation, self._invocation = self._invocation, None
        if invocation is not None:
            invocation.__exit__(None, None, None)

    def __exit__(self, *exc: object) -> None:
        self.close()


async def interruptible(work: Coroutine[Any, Any, T], interrupt: Callable[[], None]) -> T:
    """``work`` awaited. Cancelled — a task's ``cancel()``, Ctrl-C in ``asyncio.run`` — it
    stops as an interrupt stops a run: ``interrupt()``, in-flight attempts cancelled, the
    document of what finished written (status ``stopped``); then the cancellation goes
    on. Cancelled again while stopping, it stops at once."""
    task = asyncio.ensure_future(work)
    try:
        return await asyncio.shield(task)
    except asyncio.CancelledError:
        interrupt()
        try:
            await task
        except asyncio.CancelledError:
            task.cancel()
        except OsmosisError:
            pass  # what stopped it is the cancellation, which goes on
        raise


def unnamed_results(stem: str) -> Path:
    """``.osmosis/evals/<stem>-<UTC timestamp>-<random>.json``: where the seed form's
    results go without ``-o`` (as 0.2 wrote them) — unique even for runs started in the
    same second."""
    import secrets
    from datetime import datetime, timezone

    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    while True:  # the random part makes a clash unlikely; checking makes it impossible
        path = EVALS / f"{stem}-{stamp}-{secrets.token_hex(2)}.json"
        if not path.exists() and not path.with_name(path.name + ".journal.jsonl").exists():
            return path
        stamp = f"{stamp[:16]}{secrets.token_hex(1)}"  # a new name, even if token_hex repeats


def _relative(path: Path) -> Path:
    """``path`` relative to the current directory when it is below it (shorter to read)."""
    return relative_to(path) or path


__all__ = [
    "RUNS",
    "RunRequest",
    "RunSession",
    "UploadOutcome",
    "Uploader",
    "interruptible",
    "unnamed_results",
]
