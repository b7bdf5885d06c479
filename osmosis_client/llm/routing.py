"""The replicas of one model target as the client calls them: URL, headers, wire format
(chat completions, the Responses API or Anthropic Messages — each request and answer
converted to and from chat completions), and health — a replica that fails with a
connection error or a 5xx rests for ``REST_SECONDS`` while the others take its calls.

``reasoning_effort`` is mapped here for chat-completions servers (the other wires map it
in their own modules): OpenRouter's ``reasoning``, DeepSeek's ``thinking`` switch, and
for a server of your own (vLLM, SGLang) ``chat_template_kwargs.enable_thinking`` beside
it — Qwen3-style templates think unless told not to."""

from __future__ import annotations

import base64
import contextvars
import logging
from collections.abc import Mapping
from typing import Any
from urllib.parse import unquote, urlsplit, urlunsplit

from osmosis_client import _json
from osmosis_client._redact import redact_url
from osmosis_client._wire import loads
from osmosis_client.llm import anthropic, reasoning, responses
from osmosis_client.llm.endpoints import merge_headers
from osmosis_client.llm.providers import ModelTarget, Replica
from osmosis_client.llm.session import is_socks, proxy_for

logger = logging.getLogger("osmosis_client")

#: the session id of the attempt being run (sent as ``X-Session-ID`` for sticky routing
#: on multi-replica servers); the runner sets it per attempt
SESSION_ID: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "osmosis_session_id", default=None
)
REST_SECONDS = 10.0  # a failing replica is skipped this long
#: the path each wire posts to, under the base URL
PATHS = {"chat": "chat/completions", "responses": "responses", "anthropic": "messages"}
_WIRES = {"anthropic_messages": "anthropic", "openai_responses": "responses"}
#: providers whose chat API takes ``reasoning_effort`` as it is
_EFFORT_AS_IS = frozenset(
    {"openai", "xai", "gemini", "groq", "cerebras", "together", "fireworks", "mistral"}
)


class Route:
    """One replica as the client calls it: URL, headers, wire format, health."""

    def __init__(
        self, replica: Replica, target: ModelTarget, base: Mapping[str, str] | None = None
    ) -> None:
        self.replica = replica
        #: "chat", "responses" or "anthropic"
        self.wire = _WIRES.get(replica.api_client_type, "chat")
        self.anthropic = self.wire == "anthropic"
        self.provider = target.provider
        self.think_tags = replica.think_tags
        url = f"{replica.base_url}/{PATHS[self.wire]}"
        #: the URL requests go to: credentials written in it are sent as Basic auth
        self.url, basic = _without_credentials(url)
        self.shown = redact_url(replica.base_url)
        #: the proxy from the environment (credentials included: never print it)
        self.proxy = proxy_for(self.url)
        #: whether a TLS handshake happens on the way (the replica's or its proxy's)
        self.tls = self.url.startswith("https:") or bool(
            self.proxy and str(self.proxy).startswith("https:")
        )
        #: a SOCKS proxy is a connector of its own (a session per proxy), not a request's
        self.socks = is_socks(self.proxy)
        key = replica.api_key.get_secret_value() if replica.api_key else None
        own: dict[str, str] = {}
        if self.anthropic:
            own.update(anthropic.headers(key))
        elif key:
            own["Authorization"] = f"Bearer {key}"
        self._headers = merge_headers(base, own, replica.headers, target.headers)
        if basic and not any(k.lower() == "authorization" for k in self._headers):
            self._headers["Authorization"] = basic
        self._has_session = any(k.lower() == "x-session-id" for k in self._headers)
        self.resting_until = 0.0

    def headers(self) -> dict[str, str]:
        session = None if self._has_session else SESSION_ID.get()
        return {**self._headers, "X-Session-ID": session} if session else self._headers

    def request(self, payload: dict[str, Any]) -> bytes:
        body = {**payload, "model": self.replica.model}
        if self.wire == "anthropic":
            body = anthropic.to_messages_request(body)
        elif self.wire == "responses":
            body = responses.to_request(body)
        else:
            messages = body.get("messages")
            if isinstance(messages, list):
                body["messages"] = reasoning.for_chat(messages)
            if "reasoning_effort" in body:
                _chat_effort(body, self.provider)
        return _json.dumps(body)

    def answer(self, status: int, raw: bytes) -> bytes | dict[str, Any]:
        """A whole answer: a chat completion (converted from the route's wire), or the
        bytes as they came (an error, or a body that is not a JSON object)."""
        if self.wire == "chat" or status >= 300:
            return raw
        try:
            data = loads(raw)
        except ValueError:
            return raw
        if not isinstance(data, dict):
            return raw
        return self.completion(data)

    def assembler(self) -> Any:
        """What folds this wire's stream of events into one answer."""
        from osmosis_client.llm.streaming import ChunkAssembler

        if self.wire == "anthropic":
            return anthropic.MessagesAssembler(self.shown)
        if self.wire == "responses":
            from osmosis_client.llm.responses_stream import ResponsesAssembler

            return ResponsesAssembler(self.shown)
        return ChunkAssembler(self.shown)

    def completion(self, data: dict[str, Any]) -> dict[str, Any]:
        """This wire's answer (whole, or a stream assembled) as a chat completion."""
        if self.wire == "anthropic":
            return anthropic.from_messages_response(data, self.replica.model)
        if self.wire == "responses":
            return responses.to_completion(data, self.replica.model, self.shown)
        return data

    def finish(self, completion: dict[str, Any]) -> dict[str, Any]:
        """The answer as the caller gets it: thinking written inside the text (a server
        without a reasoning parser) moved beside it, when the endpoint says so."""
        if not self.think_tags:
            return completion
        for choice in completion.get("choices") or ():
            message = choice.get("message") if isinstance(choice, dict) else None
            if isinstance(message, dict):
                choice["message"] = reasoning.split_think_tags(message)
        return completion

    def rest(self, now: float) -> None:
        self.resting_until = now + REST_SECONDS
        logger.debug("model replica %s failed: resting it for %gs", self.shown, REST_SECONDS)

    def healthy(self) -> None:
        self.resting_until = 0.0


def _chat_effort(body: dict[str, Any], provider: str | None) -> None:
    """``reasoning_effort`` as a chat-completions provider takes it (in place)."""
    if provider in _EFFORT_AS_IS:
        return
    effort = body.pop("reasoning_effort")
    if provider == "openrouter":
        mapped = {"enabled": False} if effort == "none" else {"effort": effort}
        body["reasoning"] = {**mapped, **(body.get("reasoning") or {})}
    elif provider == "deepseek":
        if effort == "none":
            body.setdefault("thinking", {"type": "disabled"})
        else:
            body["reasoning_effort"] = effort
    else:  # a server of your own: vLLM, SGLang, Ollama…
        if effort in ("low", "medium", "high"):  # the values vLLM's request model takes
            body["reasoning_effort"] = effort
        wanted = {"enable_thinking": effort != "none"}
        body["chat_template_kwargs"] = {**wanted, **(body.get("chat_template_kwargs") or {})}


def _without_credentials(url: str) -> tuple[str, str | None]:
    """(the URL without ``user:password@``, the Basic authorization they make, if any)."""
    parts = urlsplit(url)
    if parts.username is None and parts.password is None:
        return url, None
    pair = f"{unquote(parts.username or '')}:{unquote(parts.password or '')}"
    netloc = parts.netloc.rpartition("@")[2]
    bare = urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))
    return bare, "Basic " + base64.b64encode(pair.encode()).decode()


class Routes:
    """Round-robin over a target's replicas, rested ones last."""

    def __init__(self, target: ModelTarget, base: Mapping[str, str] | None = None) -> None:
        """``base``: headers every request carries (a replica's or the target's win)."""
        endpoints = [] if target.is_mock else target.endpoints()
        self.all = [Route(r, target, base) for r in endpoints]
        self._next = 0

    def order(self, now: float) -> list[Route]:
        """Replicas to try for one request: round-robin over the rested-out ones first,
        then the resting ones (soonest back first) rather than none."""
        count = len(self.all)
        if count == 1:
            return self.all
        start = self._next
        self._next = (self._next + 1) % count
        rotated = self.all[start:] + self.all[:start]
        ready = [e for e in rotated if e.resting_until <= now]
        resting = sorted(
            (e for e in rotated if e.resting_until > now), key=lambda e: e.resting_until
        )
        return ready + resting
