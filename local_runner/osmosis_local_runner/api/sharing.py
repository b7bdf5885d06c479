"""``push_run``: a kept run sent to experiment trackers now (``osmosis eval push``) —
the ones it could not reach when it ran, or new ones (``osmosis_local_runner.trackers``
does the sending and keeps the record)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from osmosis_client.errors import InvalidInputError
from osmosis_local_runner.api.keywords import destinations_of
from osmosis_local_runner.api.results import load_run
from osmosis_local_runner.results.documents.sources import SUITE_DOCUMENT, sources_of
from osmosis_local_runner.run.share.sinks import Ended, TrackerSink
from osmosis_local_runner.trackers import Destination, Logged


def push_run(
    ref: str | Path,
    to: str | Sequence[str],
    *,
    step: int | None = None,
    root: Path | None = None,
    public: bool = False,
) -> list[Logged]:
    """Send a run (a name under ``root/.osmosis/evals``, a run directory, a results
    document, or a suite run's directory: each entry) to each tracker in ``to``
    (``"mlflow[:URI]"``, ``"wandb[:PROJECT]"``, ``"trackio[:PROJECT]"``,
    ``"hf:ORG/NAME"``: a Hub dataset repository, private unless ``public``) at
    ``step``; what became of each. Sending it twice adds nothing (its record, and the
    local run's id the tracker run carries); a tracker's failure is in the outcome,
    never raised."""
    destinations = destinations_of(to)
    if public:
        if not any(d.kind == "hf" for d in destinations):
            raise InvalidInputError(
                "public= is for a Hub repository (hf:ORG/NAME)",
                hint="add an hf:ORG/NAME destination",
                code="USAGE",
            )
        destinations = tuple(replace(d, public=d.kind == "hf") for d in destinations)
    TrackerSink(destinations, finished_only=False).start()
    if Path(ref).is_dir() and (Path(ref) / SUITE_DOCUMENT).is_file():  # a suite's entries
        return [
            logged
            for entry in sources_of([Path(ref)])
            for logged in _sent(
                destinations,
                Ended(
                    entry.results.path, step=step, name=entry.label, prefix=f"eval/{entry.label}/"
                ),
            )
        ]
    result = load_run(ref, root=root)
    if not result.path.is_file():  # running, or killed before it wrote its document
        raise InvalidInputError(
            f"run {result.name!r} has no results document yet (it is {result.status})",
            hint="let it finish, or continue it (resume=True) first",
            code="RUN_NOT_FINISHED",
        )
    return _sent(destinations, Ended(result.path, step=step, name=result.name))


def _sent(destinations: tuple[Destination, ...], ended: Ended) -> list[Logged]:
    """A kept run through the one hook every run's results leave by (run/share/sinks.py)."""
    sink = TrackerSink(destinations, finished_only=False)
    sink.end(ended)
    return sink.logged
