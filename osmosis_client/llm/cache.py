"""A model-call cache that never lies (docs/cache.md).

A call is answered from the cache only when everything that decides its answer is the
same: the endpoint and its wire, the *identity of the weights* behind the model's name
(not the name: in RL the served name stays while the weights change), the whole request
body as it would be sent (only transport fields — streaming — dropped), and the call's
scope: for a rollout's call the row's digest, the attempt's index and the call's place
in the attempt, so ``n`` attempts stay ``n`` samples; for a judge's call nothing more
(its input is its key). Errors, content-filter refusals and answers with no finish
reason (cut short) are never stored.

The store is one SQLite file in WAL mode (``OSMOSIS_CACHE_DIR``, else
``~/.cache/osmosis/calls.sqlite``): writers in several processes or threads wait on
each other (a busy timeout) rather than corrupt it, and a key is written once (``INSERT
OR IGNORE``: the first answer stays). SQLite is the standard library's: no server, no
dependency, and its locking is what makes two processes safe.

A caller turns the cache on for the calls made in a context with :data:`CACHE` (a run
does, when asked: ``--cache``); :data:`SCOPE` names the call's place (a run's attempt
sets it); :data:`HITS` collects, per call, where an answer came from.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import threading
import time
from collections.abc import Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # sqlite3 is imported when a cache is opened, not with every client
    import sqlite3

#: the cache the model calls of this context use (None: no cache — the default)
CACHE: ContextVar[CacheUse | None] = ContextVar("osmosis_call_cache", default=None)
#: the place of the call being made: (row digest, attempt index, call index) for a
#: rollout's call; None for any other (a judge's: keyed by its input alone)
SCOPE: ContextVar[tuple[Any, ...] | None] = ContextVar("osmosis_call_scope", default=None)
#: what the cache made of each call in this context: ``from`` ("cache", "replay", None:
#: the call was made), its ``key``, ``identity``, ``endpoint`` and ``wire``
HITS: ContextVar[list[dict[str, Any]] | None] = ContextVar("osmosis_call_hits", default=None)
#: request fields that change how an answer travels, never what it is
TRANSPORT = frozenset({"stream", "stream_options"})
#: how long a writer waits for another's lock before giving up (seconds)
BUSY_TIMEOUT = 30.0
#: how many times opening a new cache is tried while another process sets it up
SETUP_TRIES = 50


def cache_dir() -> Path:
    """``$OSMOSIS_CACHE_DIR``, else ``$XDG_CACHE_HOME/osmosis``, else ``~/.cache/osmosis``."""
    given = os.environ.get("OSMOSIS_CACHE_DIR")
    if given:
        return Path(given).expanduser()
    base = os.environ.get("XDG_CACHE_HOME")
    return (Path(base).expanduser() if base else Path.home() / ".cache") / "osmosis"


def canonical_body(body: bytes | Mapping[str, Any]) -> str:
    """A request body as a key holds it: its JSON with sorted keys, transport fields
    dropped."""
    data = json.loads(body) if isinstance(body, bytes | str) else dict(body)
    if isinstance(data, dict):
        data = {k: v for k, v in data.items() if k not in TRANSPORT}
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def key_parts(
    endpoint: str, wire: str, identity: str, body: str, scope: Sequence[Any] | None
) -> dict[str, Any]:
    """What a call's key is made of (``explain`` shows them)."""
    return {
        "endpoint": endpoint,
        "wire": wire,
        "identity": identity,
        "scope": list(scope) if scope is not None else ["judge"],
        "body": body,
    }


def key_of(parts: Mapping[str, Any]) -> str:
    """The key of those parts: a SHA-256 of their canonical JSON."""
    text = json.dumps(parts, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


def storable(answer: Mapping[str, Any]) -> bool:
    """Whether an answer may be kept: it has choices, each finished for a reason, none
    refused by a content filter."""
    choices = answer.get("choices")
    if not isinstance(choices, list) or not choices:
        return False
    for choice in choices:
        reason = choice.get("finish_reason") if isinstance(choice, dict) else None
        if not isinstance(reason, str) or reason == "content_filter":
            return False
    return True


@dataclass
class CallCache:
    """The store (see the module). Safe to share between threads and processes."""

    path: Path
    _db: sqlite3.Connection = field(init=False, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    #: identical calls in flight: the second waits for the first's answer
    _flying: dict[str, asyncio.Future[dict[str, Any]]] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        import sqlite3

        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        self._db = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT, check_same_thread=False)
        # switching a new file to WAL takes a lock no busy handler waits for: two processes
        # opening one new cache at once retry briefly (bounded) rather than fail
        for attempt in range(SETUP_TRIES):
            try:
                self._setup()
                break
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or attempt == SETUP_TRIES - 1:
                    self._db.close()
                    from osmosis_client.errors import OsmosisError

                    raise OsmosisError(
                        f"the model-call cache {self.path} cannot be opened: {exc}",
                        hint="another process holds it; try again, or use another cache dir",
                        code="CACHE_UNAVAILABLE",
                    ) from exc
                time.sleep(0.02 * (attempt + 1))
        os.chmod(self.path, 0o600)

    def _setup(self) -> None:
        with self._lock:
            (mode,) = self._db.execute("PRAGMA journal_mode").fetchone()
            if str(mode).lower() != "wal":
                self._db.execute("PRAGMA journal_mode=WAL")
            # each hit notes when it was used: in WAL, NORMAL syncs at checkpoints rather
            # than on every commit (a crash may lose the last notes, never the file)
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS calls (key TEXT PRIMARY KEY, created REAL, "
                "used REAL, endpoint TEXT, identity TEXT, scope TEXT, body TEXT, "
                "answer TEXT)"
            )
            self._db.commit()

    @classmethod
    def open(cls, directory: Path | None = None) -> CallCache:
        return cls((directory or cache_dir()) / "calls.sqlite")

    def get(self, key: str) -> dict[str, Any] | None:
        with self._lock:
            row = self._db.execute("SELECT answer FROM calls WHERE key = ?", (key,)).fetchone()
            if row is None:
                return None
            self._db.execute("UPDATE calls SET used = ? WHERE key = ?", (time.time(), key))
            self._db.commit()
        found = json.loads(row[0])
        return found if isinstance(found, dict) else None

    def put(self, key: str, parts: Mapping[str, Any], answer: Mapping[str, Any]) -> None:
        """Keep ``answer`` under ``key`` (the first answer of a key stays)."""
        now = time.time()
        values = (
            key,
            now,
            now,
            parts["endpoint"],
            parts["identity"],
            json.dumps(parts["scope"]),
            parts["body"],
            json.dumps(answer, ensure_ascii=False),
        )
        with self._lock:
            self._db.execute("INSERT OR IGNORE INTO calls VALUES (?, ?, ?, ?, ?, ?, ?, ?)", values)
            self._db.commit()

    def stats(self) -> dict[str, Any]:
        """Entries, their size, the oldest and newest, and the entries per identity."""
        with self._lock:
            count, size, oldest, newest = self._db.execute(
                "SELECT COUNT(*), COALESCE(SUM(LENGTH(answer) + LENGTH(body)), 0), "
                "MIN(created), MAX(created) FROM calls"
            ).fetchone()
            identities = self._db.execute(
                "SELECT identity, COUNT(*) FROM calls GROUP BY identity ORDER BY 2 DESC LIMIT 20"
            ).fetchall()
        return {
            "path": str(self.path),
            "entries": count,
            "bytes": size,
            "oldest": oldest,
            "newest": newest,
            "identities": {identity: n for identity, n in identities},
        }

    def nearest(self, parts: Mapping[str, Any], besides: str = "") -> dict[str, Any] | None:
        """The stored call most like ``parts`` (a miss explained), other than the key
        ``besides``: the same scope and endpoint first, then the same scope, then the same
        identity; its parts."""
        scope = json.dumps(parts["scope"])
        queries = (
            ("scope = ? AND endpoint = ?", (scope, parts["endpoint"])),
            ("scope = ?", (scope,)),
            ("identity = ?", (parts["identity"],)),
        )
        with self._lock:
            for where, args in queries:
                row = self._db.execute(
                    f"SELECT endpoint, identity, scope, body FROM calls WHERE {where} "
                    "AND key != ? ORDER BY created DESC LIMIT 1",
                    (*args, besides),
                ).fetchone()
                if row is not None:
                    endpoint, identity, stored_scope, body = row
                    return {
                        "endpoint": endpoint,
                        "identity": identity,
                        "scope": json.loads(stored_scope),
                        "body": body,
                    }
        return None

    def prune(self, older_than: float) -> int:
        """Forget the entries not used for ``older_than`` seconds; how many went."""
        with self._lock:
            gone = self._db.execute(
                "DELETE FROM calls WHERE used < ?", (time.time() - older_than,)
            ).rowcount
            self._db.commit()
        return int(gone)

    def clear(self) -> int:
        with self._lock:
            gone = self._db.execute("DELETE FROM calls").rowcount
            self._db.commit()
            self._db.execute("VACUUM")
        return int(gone)

    def close(self) -> None:
        with self._lock:
            self._db.close()


def replay_key(scope: Sequence[Any] | None, body: str) -> str:
    """A recorded call's place and request, as a replay looks it up."""
    return json.dumps([list(scope) if scope is not None else None, body], separators=(",", ":"))


@dataclass(eq=False)  # one run's use: compared (and hashed) by identity
class CacheUse:
    """How the calls of one run use the cache: the store (None: replay only), the scope
    a user named for weights nobody can identify, the run's own weights (a checkpoint's
    digest, its series and step), a previous run's recorded answers to replay, and what
    happened (``hits``, ``misses``, ``replayed``, the endpoints not cached)."""

    store: CallCache | None
    named: str | None = None
    weights: str | None = None
    replay: dict[str, dict[str, Any]] = field(default_factory=dict)
    note: Any = None  # Callable[[str], None]: said once per endpoint not cached
    hits: int = 0
    misses: int = 0
    replayed: int = 0
    unidentified: set[str] = field(default_factory=set)

    def not_cached(self, endpoint: str) -> None:
        if endpoint not in self.unidentified:
            self.unidentified.add(endpoint)
            if self.note is not None:
                self.note(
                    f"calls to {endpoint} are not cached: which weights answer there cannot "
                    "be told (no root in its /models) — name them with cache_scope"
                )


__all__ = [
    "CACHE",
    "HITS",
    "SCOPE",
    "CacheUse",
    "CallCache",
    "cache_dir",
    "canonical_body",
    "key_of",
    "key_parts",
    "replay_key",
    "storable",
]
