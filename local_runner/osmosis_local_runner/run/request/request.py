"""What one invocation of a local run asks for (:class:`RunRequest`) — and what it cannot
ask for together (:meth:`RunRequest.check`: refused alike whoever asks) — and what became
of its upload (:class:`UploadOutcome`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from osmosis_client.errors import InvalidInputError, OsmosisError
from osmosis_local_runner.run.request.seed import SeedSource
from osmosis_local_runner.run.request.settings import RunSettings

if TYPE_CHECKING:
    from osmosis_client.llm.prices import PriceTable
    from osmosis_client.platform.eval.run_import import ImportSession
    from osmosis_local_runner.run.share.upload import RunUpload
    from osmosis_local_runner.trackers import Destination

#: sends a checked upload (``RunUpload.send`` with the caller's client and progress)
Uploader = Callable[["RunUpload"], "ImportSession"]


@dataclass
class RunRequest:
    """What one invocation asks for: an eval config or the seed form's source, the
    settings, where the run goes, and how an existing run is treated."""

    settings: RunSettings = field(default_factory=RunSettings)
    config: Path | None = None
    seed: SeedSource | None = None
    #: the run's name under ``.osmosis/evals`` (None: generated; with ``resume``, the
    #: newest unfinished run of the config)
    name: str | None = None
    #: a ``.json`` file: one results document, no run directory; else where runs live
    output: Path | None = None
    #: the project (default: the config's, else the current directory)
    root: Path | None = None
    resume: bool = False
    fresh: bool = False  # archive the named run first
    retry_failed: bool = False  # continue, running again the attempts that errored
    #: an unfinished run named without ``resume`` continues (the published CLI's
    #: ``--name``) rather than being refused (``RESULTS_EXIST``: the library's rule)
    continue_named: bool = False
    dry_run: bool = False  # the plan only: nothing locked, archived or written
    upload: Uploader | None = None  # a finished named run goes to the platform
    server_echo: Callable[[str], None] | None = None  # the rollout server's output, live
    #: the platform's published prices of some models (``prices="platform"``)
    price_source: Callable[[list[str]], PriceTable] | None = None
    #: experiment trackers the results go to when the run ends (``trackers``), at the
    #: run's step (``settings.step``): sharing, not part of what the run means
    log_to: tuple[Destination, ...] = ()
    #: the served weights' identity (a checkpoint's path and digest, a vLLM model's
    #: root/parent), recorded with the run when the caller knows it
    weights: dict[str, Any] | None = None
    #: the values of the config's ``[secrets]`` (``resolve_secrets``: the CLI asks for
    #: them); None: read from this process's environment. Never kept in the run.
    secrets: Mapping[str, str] | None = field(default=None, repr=False)

    @property
    def to_file(self) -> bool:
        return self.output is not None and self.output.suffix == ".json"

    def check(self) -> None:
        """What cannot be asked together — refused alike whoever asks (the CLI's flags or
        ``run_eval``'s keywords), never silently ignored."""
        if self.to_file:
            named = [k for k in ("name", "fresh", "upload") if getattr(self, k)]
            if named:
                raise InvalidInputError(
                    f"{', '.join(named)} belong to a named run's directory; the output "
                    f"{self.output} is one results document",
                    hint="leave out the output file (runs live in .osmosis/evals/NAME/), or "
                    "give a directory",
                    code="RUN_FILE_CONFLICT",
                    data={"given": named},
                )


@dataclass(frozen=True)
class UploadOutcome:
    """What became of ``upload``: ``uploaded`` (``session``), ``skipped`` (the run did
    not finish: ``reason``) or ``failed`` (``error``; the run itself is kept)."""

    status: Literal["uploaded", "skipped", "failed"]
    session: ImportSession | None = None
    error: OsmosisError | None = None
    reason: str | None = None


__all__ = ["RunRequest", "UploadOutcome", "Uploader"]
