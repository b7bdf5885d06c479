"""A finished local run imported into the platform (``osmosis eval upload``, ``eval run
--upload``, or a program): the run's lock held, ``logs.txt`` scrubbed of this
environment's secret-like values, every platform rule checked
(:mod:`~osmosis_local_runner.run.share.import_plan`) before anything is sent, then sent.

``with RunUpload(run_dir) as upload:`` — ``upload.total`` is the bytes to send (a
progress bar's size); ``upload.send(client)`` imports them (an interrupted upload
resumes where it stopped: the SDK's ``import_run``).
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from osmosis_local_runner.run.session.rundir import RunDirectory
from osmosis_local_runner.run.share.import_plan import ImportPlan, plan_import

if TYPE_CHECKING:
    from osmosis_client import Client
    from osmosis_client.platform.eval.run_import import ImportSession
    from osmosis_client.platform.presigned import Progress


@dataclass
class RunUpload:
    """One upload of ``run_dir`` (see the module). ``locked=False``: the caller already
    holds the run's lock (``eval run --upload`` uploads the run it just finished)."""

    run_dir: Path
    replace: bool = False
    config_path: str | None = None
    locked: bool = True
    plan: ImportPlan | None = None
    _stack: contextlib.ExitStack = field(default_factory=contextlib.ExitStack)

    def __enter__(self) -> RunUpload:
        with contextlib.ExitStack() as stack:
            if self.locked:
                stack.enter_context(RunDirectory(self.run_dir.parent, self.run_dir.name).locked())
            scrub_log(self.run_dir)
            self.plan = plan_import(
                self.run_dir, replace=self.replace, config_path=self.config_path
            )
            self._stack = stack.pop_all()
        return self

    @property
    def total(self) -> int:
        """The bytes the upload sends."""
        assert self.plan is not None, "use RunUpload in a with block"
        return sum(f.size for f in self.plan.files)

    def send(self, client: Client, *, on_bytes: Progress | None = None) -> ImportSession:
        from osmosis_client.platform.eval.run_import import import_run

        assert self.plan is not None, "use RunUpload in a with block"
        return import_run(client, self.plan.body, self.plan.files, on_bytes=on_bytes)

    def __exit__(self, *exc: object) -> None:
        self._stack.close()


def scrub_log(run_dir: Path) -> None:
    """Before ``logs.txt`` leaves the machine: any secret-like value of this environment
    in it (a key a rollout printed into an error) is replaced, the file kept 0600."""
    from osmosis_client._fs import atomic_write
    from osmosis_local_runner.server.output import Redactor, secret_values

    log = run_dir / "logs.txt"
    if log.is_symlink() or not log.is_file():
        return
    text = log.read_text(encoding="utf-8", errors="replace")
    clean = Redactor(secret_values(os.environ))(text)
    if clean != text:
        atomic_write(log, clean.encode(), mode=0o600)


__all__ = ["RunUpload", "scrub_log"]
