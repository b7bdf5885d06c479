"""The rollouts a 0.2 rollout server knows, and its idempotency rule.

A request names its rollout (``rollout_id``) and, optionally, itself
(``idempotency_key``; absent, the rollout id stands in). While a rollout runs and for
an hour after it ends, a request with the same rollout id *and* the same key is a
repeat (the same 202, nothing started); the same rollout id with another key, or the
same key with another rollout id, is a :class:`Conflict` (409). At most
``MAX_FINISHED`` finished rollouts are remembered, the oldest forgotten first.
"""

from __future__ import annotations

import asyncio
import collections
from dataclasses import dataclass, field
from typing import Any

from osmosis_client.rollout.agent_loop.schemas import RolloutRequest, RolloutResult

MAX_FINISHED = 20_000


class Conflict(Exception):
    """An init whose rollout id and idempotency key point at different rollouts."""


@dataclass
class Record:
    rollout_id: str
    tools: list[dict[str, Any]]
    key: str = ""  # the idempotency key (the rollout id when none was given)
    task: asyncio.Task[None] | None = None
    finished_at: float | None = None
    result: RolloutResult | None = None


@dataclass
class ServerStats:
    active: int = 0  # running or queued
    completed: int = 0
    callbacks_failed: int = 0
    refused_busy: int = 0  # inits answered 429 (the queue was full)
    #: by rollout id: running ones, and finished ones for an hour
    rollouts: dict[str, Record] = field(default_factory=dict)
    #: the same records by idempotency key
    keys: dict[str, Record] = field(default_factory=dict)
    #: finished records, in finishing order (what expires first)
    finished: collections.deque[Record] = field(default_factory=collections.deque)

    def existing(self, request: RolloutRequest, now: float, ttl: float) -> Record | None:
        """A repeat of a running rollout, or of one finished less than ``ttl`` ago; None
        for a new one; :class:`Conflict` when the id and the key disagree."""
        self._expire(now, ttl)
        key = request.idempotency_key or request.rollout_id
        by_id = self.rollouts.get(request.rollout_id)
        by_key = self.keys.get(key)
        if by_id is None and by_key is None:
            return None
        if by_id is not None and by_id is by_key:
            return by_id
        if by_id is not None:
            raise Conflict(
                f"rollout {request.rollout_id!r} was started with another idempotency_key"
            )
        assert by_key is not None
        raise Conflict(f"idempotency_key {key!r} already started rollout {by_key.rollout_id!r}")

    def add(self, request: RolloutRequest, tools: list[dict[str, Any]]) -> Record:
        key = request.idempotency_key or request.rollout_id
        record = Record(request.rollout_id, tools, key)
        self.rollouts[request.rollout_id] = record
        self.keys[key] = record
        self.active += 1
        return record

    def finish(self, record: Record, now: float) -> None:
        record.finished_at = now
        self.finished.append(record)
        self.active -= 1
        self.completed += 1

    def _expire(self, now: float, ttl: float) -> None:
        """Forget finished rollouts after ``ttl``, and the oldest beyond MAX_FINISHED."""
        finished = self.finished
        while finished and (
            len(finished) > MAX_FINISHED or now - (finished[0].finished_at or now) > ttl
        ):
            record = finished.popleft()
            if self.rollouts.get(record.rollout_id) is record:
                del self.rollouts[record.rollout_id]
            if self.keys.get(record.key) is record:
                del self.keys[record.key]
