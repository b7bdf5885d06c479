"""Top-ups: a run grows — more attempts per row (``n``) or more rows (``limit``,
``rows``, ``offset``) — and only what is missing runs.

A resumed run whose fingerprint differs from its journal's only in those keys is a
top-up when it *adds*: ``n`` no smaller, and every row the run chose before still
chosen. Every other difference (the model, the dataset, the prompt's source, sampling,
thresholds, eval fns…) would change what its finished attempts mean, and is refused.
Attempt indices are kept: attempt ``k`` of a row is the same attempt before and after,
so a top-up from ``n = 2`` to ``n = 4`` runs attempts 2 and 3 of each row and nothing
else. The journal appends a line saying what changed (:func:`update_line`), which a
later resume adopts and the results document lists under ``config.top_ups``.
"""

from __future__ import annotations

from collections.abc import Callable, Container, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from osmosis_client.errors import InvalidInputError
from osmosis_local_runner.results.documents.records import AttemptRecord
from osmosis_local_runner.run.session.journal import (
    UPDATE_KEY,
    Journal,
    forget_finished,
    journal_path,
    resumable,
)

if TYPE_CHECKING:
    from osmosis_local_runner.run.request.settings import RunSettings
    from osmosis_local_runner.run.request.spec import RunSpec


def adds(recorded: Mapping[str, Any], settings: RunSettings) -> bool:
    """Whether settings changed only in what a top-up may change add to a run: no fewer
    attempts per row, no smaller limit (the rows a row list adds are checked when it
    runs: ``run/session/topup.py``)."""
    for name in ("n", "limit"):
        was, now = recorded.get(name), getattr(settings, name)
        if now is not None and (was is None or now < was):
            return False  # fewer, or a limit where every row ran
    return settings.offset == recorded.get("offset", 0) or not settings.offset


def check_growth(
    old: Mapping[str, Any],
    new: Mapping[str, Any],
    total_rows: int,
    selected: Container[int],
) -> None:
    """Refuse (``RESUME_MISMATCH``) a change that would drop finished attempts: fewer
    attempts per row, or a row chosen before and not now."""
    from osmosis_local_runner.run.execute.dataset import select_rows
    from osmosis_local_runner.run.request.row_lists import parse_rows

    was, now = old.get("n"), new.get("n")
    if isinstance(was, int) and isinstance(now, int) and now < was:
        raise InvalidInputError(
            f"a run grows, it never shrinks: n {was} → {now} would drop finished attempts",
            hint=f"give n of at least {was}, or start a new run",
            code="RESUME_MISMATCH",
            data={"changed": {"n": [was, now]}, "shrinks": True},
        )
    rows = old.get("rows")
    before = select_rows(
        total_rows,
        old.get("limit"),
        sample=bool(old.get("sample")),
        seed=int(old.get("seed") or 0),
        offset=int(old.get("offset") or 0),
        rows=parse_rows(rows) if isinstance(rows, str) else None,
    )
    dropped = [i for i in _members(before, total_rows) if i not in selected]
    if dropped:
        shown = ", ".join(map(str, dropped[:5])) + (", …" if len(dropped) > 5 else "")
        raise InvalidInputError(
            f"a run grows, it never shrinks: rows {shown} were chosen before and are not now",
            hint="choose every row the run had (and more), or start a new run",
            code="RESUME_MISMATCH",
            data={"dropped_rows": dropped[:100], "shrinks": True},
        )


def _members(selected: Container[int], total: int) -> list[int]:
    if isinstance(selected, range | frozenset | set):
        return sorted(selected)
    return [i for i in range(total) if i in selected]


def update_line(
    fingerprint: Mapping[str, Any], settings: Mapping[str, Any], what: Mapping[str, Any]
) -> dict[str, Any]:
    """The journal line recording a top-up: the run's fingerprint and settings from now
    on, what changed and when."""
    at = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    return {
        UPDATE_KEY: {
            "fingerprint": dict(fingerprint),
            "settings": dict(settings),
            "changed": dict(what),
            "at": at,
        }
    }


@dataclass
class Continuation:
    """What a resumed run starts from."""

    #: the latest record of each finished attempt
    records: list[AttemptRecord]
    #: where the journal's last complete line ends (a torn tail is cut there)
    resume_from: int
    #: this invocation's top-up line for the journal (None: the run is as it was)
    update: dict[str, Any] | None = None
    #: every top-up of the run, this one included, for the results document
    top_ups: list[dict[str, Any]] = field(default_factory=list)


def continuation(
    output: Path,
    resume: bool,
    current: Mapping[str, Any],
    settings: Mapping[str, Any],
    total_rows: int,
    selected: Container[int],
    on_note: Callable[[str], None] | None = None,
) -> Continuation | None:
    """The run a resume continues — grown when ``current`` adds attempts or rows —
    or None for a new run (a finished one at ``output`` is replaced when the new one
    runs, never before: a plan deletes nothing; an unfinished one is refused:
    :func:`~osmosis_local_runner.run.session.journal.resumable`)."""
    from osmosis_local_runner.results.documents.document import finished

    if not resume and journal_path(output).exists() and finished(output):
        return None
    contents = resumable(journal_path(output), resume, current)
    if contents is None:
        return None
    latest = {record.key: record for record in contents.records}  # the last one wins
    found = Continuation(list(latest.values()), contents.valid_bytes, top_ups=contents.top_ups)
    if contents.growing:
        check_growth(contents.fingerprint, current, total_rows, selected)
        found.update = update_line(current, settings, contents.growing)
        found.top_ups = [*found.top_ups, _said(found.update)]
        if on_note is not None:
            what = ", ".join(f"{k} {was} → {now}" for k, (was, now) in contents.growing.items())
            on_note(f"topping up the run ({what}): only the missing attempts run")
    return found


def open_journal(
    spec: RunSpec,
    fingerprint: Mapping[str, Any],
    continued: Continuation | None,
    on_failure: Callable[[OSError], None],
    on_note: Callable[[str], None] | None,
) -> Journal:
    """The run's journal, as it starts running: a new one (a finished run at its path
    is replaced now, not when planned), or the one a resume continues — its torn tail
    cut, this top-up's line written."""
    forget_finished(spec.output, continued is not None, on_note)
    return Journal(
        journal_path(spec.output),
        fingerprint,
        spec.settings,
        resume_from=continued.resume_from if continued else None,
        update=continued.update if continued else None,
        on_failure=on_failure,
    )


def _said(update: Mapping[str, Any]) -> dict[str, Any]:
    body = update[UPDATE_KEY]
    return {"changed": body["changed"], "at": body["at"]}


__all__ = ["Continuation", "adds", "check_growth", "continuation", "open_journal", "update_line"]
