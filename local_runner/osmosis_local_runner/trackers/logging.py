"""Sending a run to its trackers, and what became of each, kept beside the run
(``trackers.json`` in a run's directory, else ``<results>.trackers.json``): a tracker
that fails is recorded, never raised — the run is already safe on disk — and ``push``
sends it later; a destination the run was logged to already is not sent again."""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import logging
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Literal

from osmosis_client._fs import atomic_write, read_capped
from osmosis_client._redact import redact_url, redact_urls_in, safe_text
from osmosis_client.errors import OsmosisError
from osmosis_local_runner.results.documents.beside import beside
from osmosis_local_runner.results.documents.documents import ResultsFile
from osmosis_local_runner.trackers.destinations import Destination
from osmosis_local_runner.trackers.payload import Payload, payload_of, published_copy

#: the longest error text kept of a tracker's failure
MAX_ERROR = 500


@dataclass(frozen=True)
class Logged:
    """What became of one destination: ``logged`` (``into``: ``own`` run, the
    ``active`` one, or ``existing`` — the tracker had it already), ``already`` (the
    record says it was sent: nothing sent now), ``skipped`` (the run did not finish:
    ``error`` says so) or ``failed`` (``error``)."""

    destination: str
    status: Literal["logged", "already", "skipped", "failed"]
    run_id: str | None = None  # the tracker's run
    url: str | None = None
    into: str | None = None
    step: int | None = None
    error: str | None = None
    #: a failure's code when it is one of ours (``HUB_PUBLIC``, ``HUB_NO_TOKEN``…)
    code: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if v is not None}


def record_path(results: Path) -> Path:
    """Where a run's tracker record lives (beside its reviews)."""
    return beside(results, "trackers.json")


def read_record(results: Path) -> dict[str, Any]:
    """Destination → what was sent there (an unreadable record: nothing was)."""
    raw = read_capped(record_path(results), 1 << 20)
    with contextlib.suppress(ValueError):
        found = json.loads(raw) if raw else None
        if isinstance(found, dict) and isinstance(found.get("destinations"), dict):
            return dict(found["destinations"])
    return {}


def log_results(
    results: Path,
    destinations: Sequence[Destination],
    *,
    step: int | None = None,
    name: str | None = None,
    prefix: str = "eval/",
    finished_only: bool = False,
) -> list[Logged]:
    """Send a run's results to each destination (``finished_only``: not a run that
    stopped early — a curve must not take a partial score for a checkpoint's; pushed
    by hand it goes, its ``status`` parameter saying ``stopped``). Never raises for a
    tracker's failure: it is in the outcome and the record."""
    doc = ResultsFile(results)
    status = str(doc.summary.get("status") or "finished")
    if finished_only and status != "finished":
        why = f"the run is {status}: push it once it finishes"
        return [Logged(d.key, "skipped", step=step, error=why) for d in destinations]
    run_id, provenance = _identity(results)
    if step is None:  # the step the run recorded (a series'): where it goes on the curve
        recorded = doc.config.get("step")
        step = recorded if isinstance(recorded, int) and not isinstance(recorded, bool) else None
    name = name or (results.parent.name if results.name == "results.json" else results.stem)
    group = prefix.strip("/").partition("/")[2] or str(doc.config.get("config_name") or "eval")
    record = read_record(results)
    outcomes = []
    payload: Payload | Exception | None = None  # built once, when a destination needs it
    published = contextlib.ExitStack()  # the document as it may leave the machine
    with published:
        for destination in destinations:
            already = _already(destination, record.get(destination.key), run_id)
            if already is not None:
                outcomes.append(already)
                continue
            if payload is None:
                try:
                    payload = payload_of(
                        doc, name, run_id, prefix=prefix, provenance=provenance, group=group
                    )
                    copy = published.enter_context(published_copy(results))
                    payload = replace(payload, results=copy)
                except Exception as exc:  # never the run's end: said as each tracker's failure
                    payload = exc
            outcome = (
                _send(destination, payload, step)
                if isinstance(payload, Payload)
                else Logged(
                    destination.key, "failed", step=step, error=_error_text(payload, destination)
                )
            )
            outcomes.append(outcome)
            record[destination.key] = {**outcome.to_json(), "local_run_id": run_id}
    _write_record(results, record)
    return outcomes


def _already(destination: Destination, prior: Any, run_id: str | None) -> Logged | None:
    """The run was logged to ``destination`` before (this very run): said, not resent."""
    if not isinstance(prior, dict) or prior.get("status") != "logged":
        return None
    if prior.get("local_run_id") != run_id:
        return None
    return Logged(
        destination.key,
        "already",
        run_id=prior.get("run_id"),
        url=prior.get("url"),
        step=prior.get("step"),
    )


def _send(destination: Destination, payload: Payload, step: int | None) -> Logged:
    try:
        with _quiet(), _bounded_retries():
            found = SINKS[destination.kind](payload, destination, step)
    except Exception as exc:  # a tracker is someone else's code: it fails, the run stands
        code = exc.code if isinstance(exc, OsmosisError) else None
        error = _error_text(exc, destination)
        return Logged(destination.key, "failed", step=step, error=error, code=code)
    url = found.get("url")
    return Logged(
        destination.key,
        "logged",
        run_id=found.get("run_id"),
        url=redact_url(url) if url else None,  # a tracking URI's password: never
        into=found.get("into"),
        step=step,
    )


def _mlflow(payload: Payload, to: Destination, step: int | None) -> dict[str, Any]:
    from osmosis_local_runner.trackers import mlflow_sink

    return mlflow_sink.send(payload, to.target, step)


def _wandb(payload: Payload, to: Destination, step: int | None) -> dict[str, Any]:
    from osmosis_local_runner.trackers import wandb_sink

    return wandb_sink.send(payload, to.target, step)


def _trackio(payload: Payload, to: Destination, step: int | None) -> dict[str, Any]:
    from osmosis_local_runner.trackers import trackio_sink

    return trackio_sink.send(payload, to.target, step)


def _hf(payload: Payload, to: Destination, step: int | None) -> dict[str, Any]:
    from osmosis_local_runner.trackers import hub_sink

    return hub_sink.send(payload, to, step)


SINKS: dict[str, Callable[[Payload, Destination, int | None], dict[str, Any]]] = {
    "mlflow": _mlflow,
    "wandb": _wandb,
    "trackio": _trackio,
    "hf": _hf,
}


def _identity(results: Path) -> tuple[str, dict[str, Any]]:
    """The local run's id and where it came from (its manifest); a standalone document's
    id is its head's digest."""
    manifest_path = results.parent / "manifest.json"
    raw = read_capped(manifest_path, 16 << 20) if results.name == "results.json" else None
    with contextlib.suppress(ValueError):
        manifest = json.loads(raw) if raw else None
        if isinstance(manifest, dict) and isinstance(manifest.get("local_run_id"), str):
            provenance = dict(manifest.get("provenance") or {})
            provenance["created_at"] = manifest.get("created_at")
            dataset = ((manifest.get("inputs") or {}).get("dataset") or {}).get("sha256")
            if dataset:
                provenance["dataset_sha256"] = dataset
            return manifest["local_run_id"], provenance
    with open(results, "rb") as handle:  # the head: config and summary, not the rows
        head = handle.read(1 << 16)
    made = datetime.fromtimestamp(results.stat().st_mtime, timezone.utc)
    return "doc-" + hashlib.sha256(head).hexdigest()[:24], {
        "created_at": made.strftime("%Y-%m-%dT%H:%M:%SZ")
    }


def _write_record(results: Path, record: dict[str, Any]) -> None:
    text = json.dumps({"schema_version": 1, "destinations": record}, indent=2) + "\n"
    with contextlib.suppress(OSError):  # a convenience: the outcomes were returned anyway
        atomic_write(record_path(results), text.encode(), mode=0o600)


def _error_text(exc: Exception, destination: Destination) -> str:
    if isinstance(exc, OsmosisError):  # ours: its words and how to fix it
        text = exc.message + (f" ({exc.hint})" if exc.hint else "")
    else:
        text = f"{type(exc).__name__}: {exc}"
    text = " ".join(text.split())
    if destination.target:  # a URI's credentials never kept or shown
        text = text.replace(destination.target, str(destination).partition(":")[2])
    return redact_urls_in(text)[:MAX_ERROR]


#: where a tracker library's own lines go: debug lines (``-v`` shows them)
logger = logging.getLogger("osmosis_client.trackers")


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """A tracker library's prints and banners (W&B's ~35 lines a run, Trackio's) are
    kept off the user's terminal — and always off stdout, the command's (``--json``):
    held while it runs, then handed to the logger at debug level (``-v`` shows them)."""
    held = io.StringIO()
    try:
        with contextlib.redirect_stdout(held), contextlib.redirect_stderr(held):
            yield
    finally:
        for line in held.getvalue().splitlines():
            if line.strip():
                logger.debug("%s", safe_text(line))


#: an unreachable tracker fails in seconds, not after MLflow's minutes of retries; its
#: URL is said once, by us (only where the user set nothing)
_RETRIES = {
    "MLFLOW_HTTP_REQUEST_MAX_RETRIES": "2",
    "MLFLOW_HTTP_REQUEST_TIMEOUT": "20",
    "MLFLOW_HTTP_REQUEST_BACKOFF_FACTOR": "1",
    "MLFLOW_SUPPRESS_PRINTING_URL_TO_STDOUT": "true",
}


@contextlib.contextmanager
def _bounded_retries() -> Iterator[None]:
    added = [key for key in _RETRIES if key not in os.environ]
    os.environ.update({key: _RETRIES[key] for key in added})
    try:
        yield
    finally:
        for key in added:
            os.environ.pop(key, None)
