"""Every model call of one attempt, with its timing: what the viewer's and the report's
transcript depth show (each request and answer, raw JSON on demand).

An attempt's rollout gets a :class:`CallLog`'s ``env`` in place of the run's: its
``chat`` and ``complete`` time each call and keep the raw answer. When the attempt ends,
:meth:`CallLog.entries` gives the calls as the record keeps them
(``extra["model_calls"]``): how many messages a request sent — the start of the
attempt's final conversation, the usual (a conversation only grows); else they are kept —
its other parameters, and the raw answer, as JSON text: a call costs its answer and a
few numbers, never a copy of the conversation.

Kept with transcripts only (``--no-transcripts`` keeps neither).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any

from osmosis_client.llm.answers import Message, parse_reply
from osmosis_local_runner.results.records import compact
from osmosis_local_runner.run.kinds import RunEnv

#: a request or answer larger than this (as compact JSON) is kept as a note of its size
MAX_ANSWER_CHARS = 64_000
#: calls kept per attempt (an agent that loops for ever keeps its first ones)
MAX_CALLS = 200


class CallLog:
    """The model calls of one attempt (see the module)."""

    __slots__ = ("_env", "calls", "started")

    def __init__(self, env: RunEnv, started: float) -> None:
        self._env = env
        self.started = started  # the attempt's start (time.perf_counter())
        #: (offset ms, duration ms, request messages, params, answer or None, error or None)
        self.calls: list[tuple[float, float, list[Message], dict[str, Any], Any, str | None]] = []

    def env(self) -> RunEnv:
        """The run's env, its model calls recorded here. (A shallow copy by hand: an
        attempt's own env costs a fifth of ``dataclasses.replace``'s checks.)"""
        clone = object.__new__(RunEnv)
        clone.__dict__.update(self._env.__dict__, chat=self.chat, complete=self.complete)
        return clone

    async def complete(
        self, messages: Sequence[Message], params: Mapping[str, Any] | None = None
    ) -> dict[str, Any]:
        began = time.perf_counter()
        sent = list(messages)
        try:
            answer = await self._env.complete(sent, dict(params or {}))
        except Exception as exc:
            self._keep(began, sent, params, None, f"{type(exc).__name__}: {exc}"[:1000])
            raise
        self._keep(began, sent, params, answer, None)
        return answer

    async def chat(
        self, messages: Sequence[Message], params: Mapping[str, Any] | None = None
    ) -> tuple[Message, int]:
        return parse_reply(await self.complete(messages, params))

    def _keep(
        self,
        began: float,
        messages: list[Message],
        params: Mapping[str, Any] | None,
        answer: Any,
        error: str | None,
    ) -> None:
        if len(self.calls) >= MAX_CALLS:
            return
        now = time.perf_counter()
        at, took = (began - self.started) * 1000, (now - began) * 1000
        self.calls.append((at, took, messages, dict(params or {}), answer, error))

    def entries(self, final: Sequence[Message]) -> list[dict[str, Any]]:
        """The calls as the record keeps them (see the module). What user code or a peer
        wrote — parameters, messages, answers — is kept as JSON text, never as nested
        objects: a results line's layout stays ours whatever an answer holds."""
        return [self._entry(*call, final) for call in self.calls]

    @staticmethod
    def _entry(
        at: float,
        took: float,
        messages: list[Message],
        params: dict[str, Any],
        answer: Any,
        error: str | None,
        final: Sequence[Message],
    ) -> dict[str, Any]:
        n = len(messages)
        entry: dict[str, Any] = {"at_ms": round(at, 3), "duration_ms": round(took, 3), "sent": n}
        request = dict(params)
        if list(final[:n]) != messages:  # not the start of the final conversation: kept
            request["messages"] = messages
        if request:
            entry["request"] = _text(request)
        if error is not None:
            entry["error"] = error
        elif answer is not None:
            entry["response"] = _text(answer)
        return entry


def _text(value: Any) -> str:
    """``value`` as compact JSON text, or a note of why it is not kept."""
    try:
        text = compact(value)
    except (TypeError, ValueError, RecursionError):
        return '{"omitted": "not JSON"}'
    if len(text) > MAX_ANSWER_CHARS:
        return f'{{"omitted": "{len(text):,} characters"}}'
    return text


__all__ = ["MAX_ANSWER_CHARS", "MAX_CALLS", "CallLog"]
