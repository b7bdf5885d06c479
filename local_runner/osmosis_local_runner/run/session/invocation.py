"""One invocation of a named run, whoever makes it — ``osmosis eval run CONFIG`` or
``run_eval(name=…)``: the same sequence, written once.

1. :func:`pick_run` — which run the call names: ``name``, else (``resume``) the newest
   unfinished run of this config, else a new generated name;
2. :class:`Invocation` — hold the run's lock, archive it (``fresh``), decide what naming
   it means now (:func:`~osmosis_local_runner.run.session.named.open_run`), and write the
   published files around the execution however it ends.

The caller builds and executes the run between the two (the CLI with a live display,
the library with a progress callback); nothing here prints.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from pathlib import Path

from osmosis_client.errors import InvalidInputError
from osmosis_local_runner.run.session.named import (
    Identity,
    Notes,
    Opening,
    RunFiles,
    check_root,
    open_run,
)
from osmosis_local_runner.run.session.rundir import (
    RunDirectory,
    check_name,
    generate_name,
    latest_unfinished,
)


def pick_run(
    runs: Path,
    *,
    name: str | None = None,
    resume: bool = False,
    config_path: str | None = None,
    label: str = "this config",
    rollout_dir: Path | None = None,
) -> RunDirectory:
    """The run a call names under ``runs`` (checked to be a directory outside the
    rollout). ``resume`` without a name: the newest unfinished run of ``config_path``
    (``label`` says which config in the refusal when there is none)."""
    check_root(runs, rollout_dir)
    if name is not None:
        return RunDirectory(runs, check_name(name))
    if resume:
        found = latest_unfinished(runs, config_path)
        if found is None:
            raise InvalidInputError(
                f"nothing to resume: no unfinished run of {label} under {runs}",
                hint="name the run to continue",
                code="NOTHING_TO_RESUME",
                data={"runs": str(runs)},
            )
        return found
    return RunDirectory(runs, generate_name(runs))


@dataclass
class Invocation:
    """``with Invocation(run, …) as inv:`` — the run locked (one invocation at a time),
    archived first when ``fresh``; ``inv.opening`` says whether it is ``new``, to
    ``continue``, or ``finished`` (shown again, nothing runs). ``inv.files(identity)``
    starts the published files, which are projected when the block ends."""

    run: RunDirectory
    fresh: bool = False
    retry_failed: bool = False
    notes: Notes = field(default_factory=Notes)
    opening: Opening = "new"
    _files: RunFiles | None = None
    _stack: contextlib.ExitStack = field(default_factory=contextlib.ExitStack)

    @property
    def resuming(self) -> bool:
        return self.opening == "continue"

    def __enter__(self) -> Invocation:
        with contextlib.ExitStack() as stack:
            stack.enter_context(self.run.locked())
            if self.fresh:
                archived = self.run.archive()
                if archived is not None:
                    self.notes.note(f"Archived the earlier run to {archived}")
            self.opening = open_run(self.run, retry_failed=self.retry_failed)
            self._stack = stack.pop_all()  # held until __exit__
        return self

    def files(self, identity: Identity) -> RunFiles:
        """The published files of this invocation (the manifest once rows are chosen:
        pass ``files.prepared`` to the runner)."""
        self._files = RunFiles(self.run, identity, resume=self.resuming, notes=self.notes)
        return self._files

    def __exit__(self, *exc: object) -> None:
        try:
            if self._files is not None:
                self._files.finish()  # however the run ended: its files tell the truth
        finally:
            self._stack.close()


__all__ = ["Invocation", "pick_run"]
