"""A running run's page: the attempts its journal holds so far, as a results document.

The runner writes the document only when a run ends; until then the journal (the
resume log) is the truth. The viewer reads it — never locking or writing it — and renders
what finished with the report's code, marked running."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from osmosis_local_runner.results.document import document_head, write_document
from osmosis_local_runner.results.records import AttemptRecord
from osmosis_local_runner.run.journal import journal_path, read_journal
from osmosis_local_runner.run.rundir import MANIFEST

#: a running run's page reloads itself this often (seconds)
REFRESH_S = 5


def partial_document(results: Path, into: Path) -> Path | None:
    """The document of what ``results``' journal has finished, written at ``into``; None
    when there is no readable journal or nothing finished yet."""
    try:
        journal = read_journal(journal_path(results))
    except (OSError, ValueError):
        return None
    if not journal.records:
        return None
    rows: dict[int, list[AttemptRecord]] = defaultdict(list)
    for record in journal.records:
        rows[record.row_index].append(record)
    seen = journal.fingerprint
    fns = [str(f) for f in seen.get("eval_fns") or []] or sorted(
        {fn for r in journal.records for fn in r.scores}
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
    duration = _elapsed_ms(results)
    head = document_head(
        config, rows, fns, n=n, pass_threshold=threshold, duration_ms=duration, status="running"
    )
    write_document(into, head, rows)
    return into


def _elapsed_ms(results: Path) -> int:
    """From the run's start (its manifest, written first) to its last finished attempt
    (the journal's last write): wall time, as a finished document records it."""
    try:
        started = (results.parent / MANIFEST).stat().st_mtime
        last = journal_path(results).stat().st_mtime
    except OSError:
        return 0
    return max(0, int((last - started) * 1000))
