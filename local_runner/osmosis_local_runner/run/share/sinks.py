"""Where a finished run's results go besides its own files — the platform (an upload) and
experiment trackers (MLflow, W&B, Trackio, the Hub) — behind one hook the run calls at
its events: ``start`` (before anything runs: a missing extra is said first) and ``end``
(the run ended: each sink sends what it is for, and records what became of it). A single
run's session, each entry of a suite and ``push_run`` all go through it; a sink's failure
is recorded, never raised (the run itself is kept).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from osmosis_client.errors import OsmosisError
from osmosis_local_runner.run.request.request import Uploader, UploadOutcome

if TYPE_CHECKING:
    from osmosis_local_runner.run.session.rundir import RunDirectory
    from osmosis_local_runner.trackers import Destination, Logged


@dataclass(frozen=True)
class Ended:
    """A run that ended, as a sink needs it: its results document, its named directory
    (None: one results file) and the status its published files say, the config it ran,
    where it stands in a training, and the name and metric prefix trackers file it under."""

    results: Path
    run: RunDirectory | None = None
    status: str | None = None
    config_path: str | None = None
    step: int | None = None
    name: str | None = None
    prefix: str = "eval/"


class Sink(Protocol):
    def start(self) -> None:
        """Before the run: what the sink needs is there (an installed extra…)."""

    def end(self, ended: Ended) -> None:
        """After it: send, and record what became of it."""


@dataclass
class TrackerSink:
    """Experiment trackers (``log_to``). ``finished_only``: a run that stopped early is
    not sent (a curve must not take a partial score for a step); pushed by hand it is."""

    destinations: tuple[Destination, ...]
    finished_only: bool = True
    logged: list[Logged] = field(default_factory=list)

    def start(self) -> None:
        from osmosis_local_runner.trackers import check_available

        check_available(list(self.destinations))

    def end(self, ended: Ended) -> None:
        from osmosis_local_runner.trackers import log_results

        if not self.destinations or not ended.results.exists():
            return
        self.logged = log_results(
            ended.results,
            self.destinations,
            step=ended.step,
            name=ended.name,
            prefix=ended.prefix,
            finished_only=self.finished_only,
        )


@dataclass
class UploadSink:
    """A finished named run imported into the platform (``send``: the caller's client)."""

    send: Uploader
    outcome: UploadOutcome | None = None

    def start(self) -> None:
        return None

    def end(self, ended: Ended) -> None:
        if ended.run is None:
            return
        self.outcome = upload(ended.run, self.send, ended.config_path, ended.status)


def upload(
    run: RunDirectory, send: Uploader, config_path: str | None, status: str | None
) -> UploadOutcome:
    """``run`` sent when its published files say it finished (``status``); else skipped."""
    from osmosis_local_runner.run.share.upload import RunUpload

    if status != "finished":
        return UploadOutcome("skipped", reason=f"the run is {status or 'not finished'}")
    try:
        with RunUpload(run.path, config_path=config_path, locked=False) as sending:
            return UploadOutcome("uploaded", session=send(sending))
    except OsmosisError as exc:
        return UploadOutcome("failed", error=exc)


__all__ = ["Ended", "Sink", "TrackerSink", "UploadSink", "upload"]
