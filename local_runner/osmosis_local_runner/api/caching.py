"""The model-call cache from Python (``osmosis cache``; docs/cache.md): what it holds,
why a call of a run was or was not answered from it, and forgetting entries."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from osmosis_client.errors import InvalidInputError
from osmosis_client.llm.cache import CallCache, canonical_body, key_parts


def _store(directory: str | Path | None) -> CallCache:
    return CallCache.open(Path(directory) if directory is not None else None)


def cache_stats(directory: str | Path | None = None) -> dict[str, Any]:
    """Where the cache is, how many calls it holds and their size, the oldest and newest
    (UNIX times), and the entries per weights identity."""
    store = _store(directory)
    try:
        return store.stats()
    finally:
        store.close()


#: ``30d``, ``12h``, ``90m``, ``45s``, or seconds
_DURATION = re.compile(r"^(\d+(?:\.\d+)?)([smhdw]?)$")
_UNIT = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


def seconds_of(text: str) -> float:
    """A duration: ``30d``, ``12h``, ``90m``, ``45s`` or plain seconds."""
    found = _DURATION.match(text.strip())
    if found is None:
        raise InvalidInputError(
            f"{text!r} is not a duration", hint="e.g. 30d, 12h, 90m or 45s", code="USAGE"
        )
    return float(found.group(1)) * _UNIT[found.group(2)]


def cache_prune(older_than: str | float, directory: str | Path | None = None) -> int:
    """Forget the calls not used for ``older_than`` (seconds, or ``30d``); how many."""
    seconds = seconds_of(older_than) if isinstance(older_than, str) else float(older_than)
    store = _store(directory)
    try:
        return store.prune(seconds)
    finally:
        store.close()


def cache_clear(directory: str | Path | None = None) -> int:
    """Forget every call; how many there were."""
    store = _store(directory)
    try:
        return store.clear()
    finally:
        store.close()


def cache_explain(
    run: str | Path,
    row: int,
    attempt: int,
    *,
    directory: str | Path | None = None,
    root: Path | None = None,
) -> list[dict[str, Any]]:
    """Per model call of one attempt of a run: whether it was answered from the cache
    (or a replay), its key and the parts the key is made of, whether the cache holds it
    now, and — for a call that was made — the stored call nearest to it and what differs
    (the weights' identity, the endpoint, the place, which request fields)."""
    from osmosis_local_runner.results.documents.documents import ResultsFile
    from osmosis_local_runner.results.documents.sources import run_path

    found = next(iter(ResultsFile(run_path(run, root=root)).rows_at({row})), None)
    record = next((r for r in found.runs if r.run_index == attempt), None) if found else None
    if record is None:
        raise InvalidInputError(f"the run has no attempt {attempt} of row {row}", code="USAGE")
    calls = (record.extra or {}).get("model_calls") or []
    store = _store(directory)
    try:
        return [_explained(store, record, i, call) for i, call in enumerate(calls)]
    finally:
        store.close()


def _explained(store: CallCache, record: Any, index: int, call: dict[str, Any]) -> dict[str, Any]:
    said: dict[str, Any] = {"call": index, "from": call.get("cached") or "called"}
    cache = call.get("cache")
    if not isinstance(cache, dict) or "key" not in cache:
        said["why"] = "the run did not use the cache for it (no --cache, or weights unknown)"
        return said
    said.update(key=cache["key"], identity=cache.get("identity"), stored=False)
    said["stored"] = store.get(cache["key"]) is not None
    tries = call.get("wire") or []
    sent = tries[-1].get("sent") if tries and isinstance(tries[-1], dict) else None
    if not isinstance(sent, str):
        return said  # answered without a call: the key is all there is
    scope = [record.row_digest, record.run_index, record.model_tag or "", index]
    parts = key_parts(
        str(cache.get("endpoint")),
        str(cache.get("wire")),
        str(cache.get("identity")),
        canonical_body(sent.encode()),
        scope,
    )
    nearest = store.nearest(parts, besides=cache["key"])
    if nearest is not None:
        said["nearest"] = _differences(parts, nearest)
    return said


def _differences(mine: dict[str, Any], theirs: dict[str, Any]) -> list[str]:
    """What differs between a call's key parts and a stored call's."""
    found = [
        f"{part}: {theirs[part]!r} stored, {mine[part]!r} here"
        for part in ("endpoint", "identity", "scope")
        if theirs.get(part) != mine.get(part)
    ]
    if theirs.get("body") != mine.get("body"):
        a, b = json.loads(theirs["body"]), json.loads(mine["body"])
        keys = sorted(set(a) | set(b)) if isinstance(a, dict) and isinstance(b, dict) else []
        fields = [k for k in keys if a.get(k) != b.get(k)]
        found.append("request fields that differ: " + (", ".join(fields) or "the whole body"))
    return found


__all__ = ["cache_clear", "cache_explain", "cache_prune", "cache_stats", "seconds_of"]
