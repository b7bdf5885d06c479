"""Every model call of one attempt's rollout: reasoning given back, tokens counted, a
token budget kept, and — with transcripts — what the viewer's and the report's
transcript depth show (each request and answer, raw JSON on demand, its usage).

An attempt's rollout gets a :class:`CallLog`'s ``env`` in place of the run's: its
``chat`` and ``complete`` give each request the reasoning its tool-calling turns were
answered with (:class:`~osmosis_client.llm.reasoning.Replay`: a rollout that rebuilds
its messages from the text alone — the OpenAI Agents SDK, a server-mode rollout — still
sends Anthropic its signed thinking), refuse a call once the attempt's rollout has used
``cap`` tokens, and count the rollout's usage (its last finish reason and truncation
are the attempt's). With transcripts they time each call and keep the raw answer. When
the attempt ends,
:meth:`CallLog.entries` gives the calls as the record keeps them
(``extra["model_calls"]``): how many messages a request sent — the start of the
attempt's final conversation, the usual (a conversation only grows); else they are kept —
its other parameters, and the answer as the rollout got it, as JSON text — and, under
``wire``, each try as it went over the wire: the request body exactly as sent and the
response exactly as received (osmosis_client/llm/wire.py), with status, the headers that
matter and its time. Bodies past 256 KiB are kept as their digest and size.

The calls themselves are kept with transcripts only (``--no-transcripts`` keeps
neither the conversation nor its calls).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Mapping, Sequence
from typing import Any

from osmosis_client.errors import OsmosisError
from osmosis_client.llm.answers import Message, parse_reply
from osmosis_client.llm.cache import HITS, SCOPE
from osmosis_client.llm.reasoning import Replay
from osmosis_client.llm.usage import COUNTED, METER, TRIES, Usage, call_usage, finish_reason
from osmosis_client.llm.wire import WIRE
from osmosis_local_runner.results.documents.records import compact
from osmosis_local_runner.run.kinds import RunEnv

#: a request or answer larger than this (as compact JSON) is kept as a note of its size
MAX_ANSWER_CHARS = 64_000
#: calls kept per attempt (an agent that loops for ever keeps its first ones)
MAX_CALLS = 200


#: one call as kept (see ``CallLog.calls``)
_Kept = tuple[
    float,
    float,
    list[Message],
    dict[str, Any],
    Any,
    "str | None",
    Any,
    list[str],
    list[dict[str, Any]],
    "dict[str, Any] | None",
]


class TokenBudgetReached(OsmosisError):
    """The attempt's rollout used its ``max_attempt_tokens``: no more model calls."""

    code = "TOKEN_BUDGET"


class CallLog:
    """The model calls of one attempt's rollout (see the module)."""

    __slots__ = (
        "_env",
        "_replay",
        "cached",
        "calls",
        "cap",
        "capped",
        "keep",
        "last_finish",
        "made",
        "scope",
        "started",
        "usage",
    )

    def __init__(
        self,
        env: RunEnv,
        started: float,
        *,
        keep: bool = True,
        cap: int | None = None,
        scope: tuple[Any, ...] | None = None,
    ) -> None:
        self._env = env
        #: the attempt's place (row digest, attempt index, model tag): with each call's
        #: index, what a cached answer is keyed by (osmosis_client/llm/cache.py)
        self.scope = scope
        self.made = 0  # calls asked for so far
        #: the calls answered from the cache or a replayed run: nothing spent on them
        self.cached = Usage()
        self.started = started  # the attempt's start (time.perf_counter())
        self.keep = keep  # the calls themselves (with transcripts)
        self.cap = cap
        self.capped = False  # a call was refused: the budget was used up
        self._replay = Replay()
        #: the rollout's own calls, added up; the finish reason of the last one
        self.usage = Usage()
        self.last_finish: str | None = None
        #: (offset ms, duration ms, request messages, params, answer or None, error or None,
        #: the call's usage, its failed tries, each try as it went over the wire)
        self.calls: list[_Kept] = []

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
        sent = list(self._replay.restore(messages))
        used = self.usage.total_tokens + self.cached.total_tokens  # an answer is an answer
        if self.cap is not None and used >= self.cap:
            self.capped = True
            raise TokenBudgetReached(
                f"the attempt used {self.usage.total_tokens:,} tokens, its budget is "
                f"{self.cap:,} (max_attempt_tokens): no more model calls",
                hint="raise max_attempt_tokens, or leave it unset",
            )
        counting = COUNTED.set(True)  # counted here, once (the client leaves it to us)
        failed: list[str] = []
        noting = TRIES.set(failed) if self.keep else None  # the call's failed tries
        tries: list[dict[str, Any]] = []
        wiring = WIRE.set(tries) if self.keep else None  # each try as sent and received
        hits: list[dict[str, Any]] = []  # what the cache made of the call
        hitting = HITS.set(hits)
        scoping = SCOPE.set(None if self.scope is None else (*self.scope, self.made))
        self.made += 1
        try:
            answer = await self._env.complete(sent, dict(params or {}))
        except Exception as exc:
            error = f"{type(exc).__name__}: {exc}"[:1000]
            self._keep(began, sent, params, None, error, None, failed, tries)
            raise
        finally:
            COUNTED.reset(counting)
            HITS.reset(hitting)
            SCOPE.reset(scoping)
            if noting is not None:
                TRIES.reset(noting)
            if wiring is not None:
                WIRE.reset(wiring)
        reason = finish_reason(answer)
        one = call_usage(answer, reason)
        cache = hits[0] if hits else None
        if cache is None or cache["from"] is None:
            self.usage.add(one)
            meter = METER.get()
            if meter is not None:
                meter.add(self._env.model_path or self._env.model, one)
        else:  # no call made: its tokens are counted apart, and it cost nothing
            self.cached.add(one)
        self.last_finish = reason or self.last_finish
        with contextlib.suppress(KeyError, IndexError, TypeError):  # no message: nothing
            self._replay.remember(answer["choices"][0]["message"])
        self._keep(began, sent, params, answer, None, one, failed, tries, cache)
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
        usage: Usage | None = None,
        failed: list[str] | None = None,
        tries: list[dict[str, Any]] | None = None,
        cache: dict[str, Any] | None = None,
    ) -> None:
        if not self.keep or len(self.calls) >= MAX_CALLS:
            return
        now = time.perf_counter()
        at, took = (began - self.started) * 1000, (now - began) * 1000
        shown = usage.to_json() if usage is not None else None
        self.calls.append(
            (
                at,
                took,
                messages,
                dict(params or {}),
                answer,
                error,
                shown,
                list(failed or ()),
                list(tries or ()),
                cache,
            )
        )

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
        usage: dict[str, Any] | None,
        failed: list[str],
        tries: list[dict[str, Any]],
        cache: dict[str, Any] | None,
        final: Sequence[Message],
    ) -> dict[str, Any]:
        n = len(messages)
        entry: dict[str, Any] = {"at_ms": round(at, 3), "duration_ms": round(took, 3), "sent": n}
        if usage is not None:
            entry["usage"] = usage
        if failed:  # tries that failed before the one that answered (or the last one)
            entry["retries"] = failed
        request = dict(params)
        if list(final[:n]) != messages:  # not the start of the final conversation: kept
            request["messages"] = messages
        if request:
            entry["request"] = _text(request)
        if error is not None:
            entry["error"] = error
        elif answer is not None:
            entry["response"] = _text(answer)
        if tries:  # what went over the wire, each try as sent and as received
            entry["wire"] = tries
        if cache is not None:  # what the cache made of it (explain reads it back)
            if cache["from"] is not None:  # answered without a call
                entry["cached"] = cache["from"]
            entry["cache"] = {k: v for k, v in cache.items() if k != "from"}
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


__all__ = ["MAX_ANSWER_CHARS", "MAX_CALLS", "CallLog", "TokenBudgetReached"]
