"""A run's use of the model-call cache (osmosis_client/llm/cache.py, docs/cache.md): the
store it opens when asked (``cache``), the identity of its own weights (a checkpoint's,
a series' step) added to every key, and a previous run's recorded answers (``replay``)."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from osmosis_client.llm.cache import CACHE, CacheUse, CallCache, canonical_body, replay_key
from osmosis_local_runner.results.documents.records import AttemptRecord
from osmosis_local_runner.run.request.spec import RunSpec


@contextlib.contextmanager
def cache_for(spec: RunSpec, note: Callable[[str], None] | None) -> Iterator[CacheUse | None]:
    """The cache the run's model calls use (None: neither a cache nor a replay), set for
    the calls made inside the block; closed after it."""
    if not spec.cache and spec.replay is None:
        yield None
        return
    if spec.cache and note is not None and _mock(spec):
        note("the mock model's calls are not cached: they cost nothing and call no one")
    replay = recorded_answers(spec.replay) if spec.replay is not None else {}
    with using_cache(
        spec.cache,
        spec.cache_dir,
        named=spec.cache_scope,
        weights=_weights(spec),
        replay=replay,
        note=note,
    ) as use:
        yield use


@contextlib.contextmanager
def using_cache(
    store: bool,
    directory: Path | None = None,
    *,
    named: str | None = None,
    weights: str | None = None,
    replay: dict[str, dict[str, Any]] | None = None,
    note: Callable[[str], None] | None = None,
) -> Iterator[CacheUse]:
    """The model calls made inside the block use the cache (``store``: the one in
    ``directory``, else the user's) and answer from ``replay``; closed after it. A
    rescore uses it for its judges' calls (keyed by their input)."""
    opened = CallCache.open(directory) if store else None
    use = CacheUse(opened, named=named, weights=weights, replay=replay or {}, note=note)
    token = CACHE.set(use)
    try:
        yield use
    finally:
        CACHE.reset(token)
        if opened is not None:
            opened.close()


def _mock(spec: RunSpec) -> bool:
    """Whether the run's model is the offline mock (``mock/…``), never called."""
    from osmosis_client.llm.providers import MOCK_PROVIDER

    model = spec.model
    is_mock = getattr(model, "is_mock", None)
    if isinstance(is_mock, bool):
        return is_mock
    return str(getattr(model, "model_path", "")).startswith(MOCK_PROVIDER + "/")


def cache_summary(use: CacheUse) -> dict[str, Any]:
    """What the run's calls got from the cache (``summary.cache``): hits, misses (calls
    made and stored when they could be), replayed answers, endpoints not cached."""
    found: dict[str, Any] = {"hits": use.hits, "misses": use.misses, "replayed": use.replayed}
    if use.unidentified:
        found["not_cached"] = sorted(use.unidentified)
    if use.store is not None:
        found["path"] = str(use.store.path)
    return found


def _weights(spec: RunSpec) -> str | None:
    """The run's own weights, as a key holds them: what the caller recorded of them (a
    checkpoint's path and digest) and where they stand in a training."""
    known = {
        "weights": spec.weights,
        "series": spec.series,
        "step": spec.step,
    }
    known = {k: v for k, v in known.items() if v is not None}
    return json.dumps(known, sort_keys=True, separators=(",", ":")) if known else None


def scope_of(record_digest: str, run_index: int, tag: str | None) -> tuple[Any, ...]:
    """An attempt's place, as its calls' keys hold it (each call adds its index)."""
    return (record_digest, run_index, tag or "")


def recorded_answers(path: Any) -> dict[str, dict[str, Any]]:
    """A run's recorded answers by the place and request of their call: every call that
    was answered and whose request was kept whole (its last try's body as sent)."""
    from osmosis_local_runner.results.documents.documents import ResultsFile

    found: dict[str, dict[str, Any]] = {}
    for row in ResultsFile(path).rows():
        for record in row.runs:
            found.update(_answers(record))
    return found


def _answers(record: AttemptRecord) -> dict[str, dict[str, Any]]:
    calls = (record.extra or {}).get("model_calls")
    found: dict[str, dict[str, Any]] = {}
    for index, call in enumerate(calls if isinstance(calls, list) else []):
        tries = call.get("wire") if isinstance(call, dict) else None
        text = call.get("response") if isinstance(call, dict) else None
        if not tries or not isinstance(text, str) or not isinstance(tries[-1], dict):
            continue
        sent = tries[-1].get("sent")
        try:
            answer = json.loads(text)
            body = canonical_body(sent.encode()) if isinstance(sent, str) else None
        except ValueError:
            continue
        if body is None or not isinstance(answer, dict) or "choices" not in answer:
            continue  # too large to have been kept whole
        scope = (*scope_of(record.row_digest, record.run_index, record.model_tag), index)
        found[replay_key(scope, body)] = answer
    return found


__all__ = [
    "CacheUse",
    "cache_for",
    "cache_summary",
    "recorded_answers",
    "scope_of",
    "using_cache",
]
