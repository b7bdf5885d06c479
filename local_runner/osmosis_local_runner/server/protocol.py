"""The rollout server's side of the wire (rollout-protocol.md part B): the request
built from a dataset row, the routes, and the conversation read back from the
trajectory the server writes.

Routes: ``POST /rollout`` (202 + a polling lease), ``GET /rollout/{id}/result``
with ``X-Osmosis-Rollout-Lease`` (each poll renews the lease and blocks up to
``result_wait_timeout_sec`` for the next status change), ``POST /rollout/cancel``.
"""

from __future__ import annotations

import asyncio
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from osmosis_client._wire import BodyTooLarge, loads, read_body

if TYPE_CHECKING:
    import aiohttp

LEASE_HEADER = "X-Osmosis-Rollout-Lease"
TERMINAL = frozenset({"success", "failure", "cancelled"})
CATEGORIES = frozenset(
    {"timeout", "lease_expired", "validation_error", "http_error", "agent_error", "internal_error"}
)
DEFAULT_WAIT = 30.0
DEFAULT_LEASE = 120.0
POLL_SLACK = 15.0  # a long poll's read timeout: its wait plus this
MAX_BODY = 64 * 1024 * 1024


class Row(Protocol):
    """What a request is built from: a dataset row (the runner's, or any alike)."""

    @property
    def index(self) -> int: ...

    @property
    def ground_truth(self) -> str | None: ...

    @property
    def data(self) -> Mapping[str, Any]: ...

    def prompt(self) -> list[dict[str, Any]]: ...


def rollout_request(
    row: Row,
    run_index: int,
    *,
    rollout_id: str,
    chat_completions_url: str,
    api_key: str,
    agent_timeout: float | None,
    grader_timeout: float | None,
) -> dict[str, Any]:
    """``POST /rollout``'s body — every key, null where absent. ``metadata`` is the
    row's ``metadata`` column only, as the platform sends it."""
    metadata = row.data.get("metadata")
    if isinstance(metadata, str):
        try:
            metadata = json.loads(metadata)
        except ValueError:
            metadata = None
    return {
        "initial_messages": row.prompt(),
        "label": row.ground_truth,
        "metadata": metadata if isinstance(metadata, dict) else None,
        "rollout_id": rollout_id,
        "chat_completions_url": chat_completions_url,
        "llm_api_key": api_key or None,
        "grade": True,
        "agent_timeout_sec": _finite(agent_timeout),
        "grader_timeout_sec": _finite(grader_timeout),
        # the published protocol's row_index: the place among the chosen rows
        "extra_fields": {"row_index": _position(row), "run_index": run_index},
    }


def _position(row: Row) -> int:
    position = getattr(row, "position", None)
    return position if isinstance(position, int) else row.index


def _finite(value: float | None) -> float | None:
    return value if value is not None and math.isfinite(value) and value > 0 else None


# ------------------------------------------------------------------ replies


@dataclass(frozen=True)
class Accepted:
    """``POST /rollout`` → 202."""

    lease: str
    wait: float  # result_wait_timeout_sec
    lease_timeout: float  # polling_lease_timeout_sec


@dataclass(frozen=True)
class Result:
    status: str
    sample: dict[str, Any] | None
    err_message: str | None
    err_category: str | None

    @property
    def terminal(self) -> bool:
        return self.status in TERMINAL


class Refused(Exception):
    """The server answered a route with an error status."""

    def __init__(self, status: int, detail: str, retry_after: float | None = None) -> None:
        super().__init__(f"{status}: {detail}" if detail else str(status))
        self.status = status
        self.detail = detail
        self.retry_after = retry_after

    @property
    def transient(self) -> bool:
        return self.status in (409, 429, 502, 503, 504)


class BadAnswer(Exception):
    """A route answered success with a body that breaks the protocol (not JSON, nested
    too deeply, too large, a required key missing): the attempt fails, not retried."""

    def __init__(self, route: str, why: str) -> None:
        super().__init__(f"{route} answered with an unusable body ({why})")
        self.route = route
        self.why = why


def _number(value: Any, default: float) -> float:
    if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
        return float(value) if value > 0 else default
    return default


def _detail(body: Any) -> str:
    """FastAPI's ``detail`` (a string or a list of problems), shortened."""
    detail = body.get("detail", body.get("error", body)) if isinstance(body, dict) else body
    if isinstance(detail, list):
        parts = []
        for item in detail[:3]:
            if isinstance(item, dict):
                where = ".".join(str(p) for p in item.get("loc", []) if p != "body")
                parts.append(f"{where}: {item.get('msg', '')}".strip(": "))
            else:
                parts.append(str(item))
        detail = "; ".join(parts)
    if isinstance(detail, dict):
        detail = detail.get("message", json.dumps(detail)[:300])
    return str(detail)[:300]


def _retry_after(response: aiohttp.ClientResponse) -> float | None:
    value = response.headers.get("Retry-After")
    try:
        return min(60.0, max(0.0, float(value))) if value else None
    except ValueError:
        return None


class RolloutServerClient:
    """The three routes of one rollout server (aiohttp, loopback)."""

    def __init__(self, session: aiohttp.ClientSession, base_url: str) -> None:
        self.session = session
        self.base_url = base_url

    async def _json(self, response: aiohttp.ClientResponse, route: str) -> Any:
        """The whole answer, decoded. A success that is not JSON (or nests too deeply to
        read) is a :class:`BadAnswer`; an error's text is kept for its message."""
        try:
            raw = await read_body(response, MAX_BODY)
        except BodyTooLarge as exc:
            raise BadAnswer(route, str(exc)) from exc
        try:
            return loads(raw) if raw else None
        except ValueError as exc:
            if response.status < 300:
                raise BadAnswer(route, str(exc) if "nested" in str(exc) else "not JSON") from exc
            return raw[:300].decode("utf-8", "replace")

    async def submit(self, body: Mapping[str, Any]) -> Accepted:
        import aiohttp

        async with self.session.post(
            f"{self.base_url}/rollout",
            data=json.dumps(body, allow_nan=False),
            headers={"Content-Type": "application/json"},
            timeout=aiohttp.ClientTimeout(total=60.0),
        ) as response:
            data = await self._json(response, "POST /rollout")
            if response.status >= 300:
                raise Refused(response.status, _detail(data), _retry_after(response))
        if not isinstance(data, dict) or not isinstance(data.get("polling_lease_token"), str):
            raise BadAnswer("POST /rollout", "no polling_lease_token")
        return Accepted(
            lease=data["polling_lease_token"],
            wait=_number(data.get("result_wait_timeout_sec"), DEFAULT_WAIT),
            lease_timeout=_number(data.get("polling_lease_timeout_sec"), DEFAULT_LEASE),
        )

    async def result(self, rollout_id: str, lease: str, *, wait: float) -> Result:
        import aiohttp

        async with self.session.get(
            f"{self.base_url}/rollout/{rollout_id}/result",
            headers={LEASE_HEADER: lease},
            timeout=aiohttp.ClientTimeout(total=wait + POLL_SLACK),
        ) as response:
            data = await self._json(response, "GET /rollout/{id}/result")
            if response.status >= 300:
                raise Refused(response.status, _detail(data), _retry_after(response))
        if not isinstance(data, dict) or not isinstance(data.get("status"), str):
            raise BadAnswer("GET /rollout/{id}/result", "no status")
        sample = data.get("sample")
        message = data.get("err_message")
        category = data.get("err_category")
        return Result(
            status=data["status"],
            sample=sample if isinstance(sample, dict) else None,
            err_message=str(message) if message else None,
            err_category=str(category) if category else None,
        )

    async def cancel(self, *, ids: Sequence[str] | None = None, prefix: str | None = None) -> None:
        """Best effort: cancel rollouts by id or id prefix."""
        import aiohttp

        body: dict[str, Any] = {"ids": list(ids)} if ids is not None else {"prefix": prefix}
        try:
            async with self.session.post(
                f"{self.base_url}/rollout/cancel",
                json=body,
                timeout=aiohttp.ClientTimeout(total=10.0),
            ) as response:
                await response.read()
        except (aiohttp.ClientError, asyncio.TimeoutError, OSError):
            pass


# ------------------------------------------------------------------ trajectory


def trajectory_path(artifact_root: Path, rollout_id: str) -> Path:
    return artifact_root / rollout_id / "trajectory.json"


def read_trajectory(path: Path) -> dict[str, Any] | None:
    try:
        if path.stat().st_size > MAX_BODY:
            return None
        data = loads(path.read_bytes())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _content(value: Any) -> Any:
    """ATIF ``message``: a string, or content parts → OpenAI content parts."""
    if isinstance(value, str) or value is None:
        return value or ""
    if isinstance(value, list):
        parts: list[dict[str, Any]] = []
        for part in value:
            if not isinstance(part, dict):
                continue
            if part.get("type") == "text":
                parts.append({"type": "text", "text": str(part.get("text") or "")})
            elif part.get("type") == "image" and isinstance(part.get("source"), dict):
                parts.append(
                    {"type": "image_url", "image_url": {"url": part["source"].get("path")}}
                )
        return parts
    return str(value)


def _arguments(value: Any) -> str:
    if isinstance(value, dict) and set(value) == {"_raw"} and isinstance(value["_raw"], str):
        return value["_raw"]  # the original text was not a JSON object
    return json.dumps(value if value is not None else {}, ensure_ascii=False)


def trajectory_messages(trajectory: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The conversation in chat format from an ATIF trajectory: system/user/agent
    steps become messages; an agent step's tool calls and its observation's results
    become ``tool_calls`` and the ``tool`` messages that follow."""
    steps = trajectory.get("steps")
    messages: list[dict[str, Any]] = []
    if not isinstance(steps, list):
        return messages
    for step in steps:
        if not isinstance(step, dict):
            continue
        source = step.get("source")
        extra = step.get("extra") if isinstance(step.get("extra"), dict) else {}
        original = extra.get("original_role") if isinstance(extra, dict) else None
        observation = step.get("observation")
        results = observation.get("results") if isinstance(observation, dict) else None
        if source == "system" and original in ("tool", "function") and results:
            messages.extend(_tool_messages(results))
            continue
        role = {"system": "system", "user": "user", "agent": "assistant"}.get(str(source), "user")
        if isinstance(original, str) and original and source != "agent":
            role = original
        message: dict[str, Any] = {"role": role, "content": _content(step.get("message"))}
        if source == "agent":
            calls = step.get("tool_calls")
            if isinstance(calls, list) and calls:
                message["tool_calls"] = [
                    {
                        "id": str(call.get("tool_call_id") or f"call_{i}"),
                        "type": "function",
                        "function": {
                            "name": str(call.get("function_name") or ""),
                            "arguments": _arguments(call.get("arguments")),
                        },
                    }
                    for i, call in enumerate(calls)
                    if isinstance(call, dict)
                ]
                if message["content"] == "":
                    message["content"] = None
            if isinstance(step.get("reasoning_content"), str):
                message["reasoning_content"] = step["reasoning_content"]
        messages.append(message)
        if results:
            messages.extend(_tool_messages(results))
    return messages


def _tool_messages(results: Any) -> list[dict[str, Any]]:
    out = []
    for result in results if isinstance(results, list) else []:
        if not isinstance(result, dict):
            continue
        call_id = result.get("source_call_id")
        if call_id is None and isinstance(result.get("extra"), dict):
            call_id = result["extra"].get("tool_call_id")
        out.append(
            {"role": "tool", "tool_call_id": call_id, "content": _content(result.get("content"))}
        )
    return out


def sample_messages(sample: Mapping[str, Any] | None) -> list[dict[str, Any]] | None:
    """``sample.messages`` when they are chat messages (integrations may send other
    shapes, e.g. Responses-API items); else None."""
    messages = (sample or {}).get("messages")
    if isinstance(messages, list) and all(
        isinstance(m, dict) and isinstance(m.get("role"), str) for m in messages
    ):
        return [dict(m) for m in messages]
    return None
