"""An unfinished run's results so far: the attempts its journal holds, as a document's
head and rows — for a run that is running now (the viewer follows it), stopped or
killed before it wrote its document (``eval list/info --local``, ``load_run``).

The runner writes the document only when a run ends; until then the journal (the
resume log) is the truth. This reads it — never locking or writing it."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

from osmosis_client.errors import OsmosisError
from osmosis_local_runner.results.documents.document import document_head
from osmosis_local_runner.results.documents.records import AttemptRecord
from osmosis_local_runner.run.session.journal import journal_path, read_journal
from osmosis_local_runner.run.session.rundir import MANIFEST

Rows = dict[int, list[AttemptRecord]]


def journal_results(results: Path, status: str) -> tuple[dict[str, Any], Rows] | None:
    """The head (``status`` given: ``running`` or ``stopped``) and rows of what
    ``results``' journal has finished; None when there is no readable journal or nothing
    finished yet."""
    try:
        journal = read_journal(journal_path(results))
    except (OSError, ValueError, OsmosisError):  # unreadable, damaged, another version's
        return None
    if not journal.records:
        return None
    latest = {record.key: record for record in journal.records}  # the last one wins
    rows: Rows = defaultdict(list)
    for record in latest.values():
        rows[record.row_index].append(record)
    seen = journal.fingerprint
    fns = [str(f) for f in seen.get("eval_fns") or []] or sorted(
        {fn for r in latest.values() for fn in r.scores}
    )
    n = int(seen.get("n") or 1)
    threshold = float(seen.get("pass_threshold") or 1.0)
    config = {
        "model": str(seen.get("model") or "?"),
        "n_runs": n,
        "pass_threshold": threshold,
        "eval_fns": fns,
        "dataset": seen.get("dataset"),
    }
    head = document_head(
        config,
        rows,
        fns,
        n=n,
        pass_threshold=threshold,
        duration_ms=_elapsed_ms(results),
        status=status,
        # no document was written: the invocation never reached its end (killed), while
        # one that stops (Ctrl-C, its budget…) writes its document with its reason
        stopped_reason="killed",
    )
    return head, rows


def _elapsed_ms(results: Path) -> int:
    """From the run's start (its manifest, written first) to its last finished attempt
    (the journal's last write): wall time, as a finished document records it."""
    try:
        started = (results.parent / MANIFEST).stat().st_mtime
        last = journal_path(results).stat().st_mtime
    except OSError:
        return 0
    return max(0, int((last - started) * 1000))


__all__ = ["journal_results"]
