"""The platform's answers made sense of: a 2xx body decoded (JSON proper, depth-safe),
a non-2xx mapped to the typed error tree with a message and hint a person can act on,
and an answer collected whole (:class:`Body`: capped in size and total time)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import httpx

from osmosis_client._redact import safe_text
from osmosis_client._wire import loads
from osmosis_client.errors import (
    APIStatusError,
    AuthenticationError,
    ProtocolError,
    UpgradeRequiredError,
    status_error_class,
)

MAX_BODY_BYTES = 16 << 20  # one platform answer, decompressed

SCOPE_CODE_HINTS = {
    "WORKSPACE_SCOPE_HEADER_CONFLICT": (
        "the request named both a workspace and a git repository",
        "this is a client bug; please report it",
    ),
    "WORKSPACE_SCOPE_HEADER_ACCESS_DENIED": (
        "your account is not a member of the selected workspace",
        "list your workspaces and pick one you belong to",
    ),
    "GIT_SCOPE_HEADER_REQUIRED": (
        "the platform needs to know which workspace to use",
        "pick a workspace, or set OSMOSIS_WORKSPACE",
    ),
    "GIT_REPOSITORY_NOT_CONNECTED": (
        "no workspace is connected to this git repository",
        "connect the repository on the platform, or pick a workspace",
    ),
    "GIT_REPOSITORY_ACCESS_DENIED": (
        "you have no access to the workspace connected to this git repository",
        "ask a workspace admin for access, or pick another workspace",
    ),
}


def _issue_text(issue: Any) -> str:
    if isinstance(issue, Mapping):
        key = issue.get("key")
        message = str(issue.get("message", ""))
        correction = issue.get("key_correction")
        text = f"{key}: {message}" if key else message
        if correction:
            text += f" (did you mean {correction!r}?)"
        return text
    return str(issue)


#: what to do when a call may have acted on the platform though it failed, by what it did
AMBIGUOUS_HINTS = {
    "run": "the run may have been created — list your runs before resubmitting",
    "dataset": "the dataset may have been registered — list your datasets before uploading again",
    "retry": "the retry may have started — check the run's status first",
    "training_run": "the training run may have been created — list them before resubmitting",
    "benchmark_run": "the benchmark run may have been created — list them before resubmitting",
}


def error_from_response(
    response: httpx.Response, *, ambiguous: str | None = None
) -> APIStatusError:
    """Map a non-2xx response to the typed error hierarchy."""
    status = response.status_code
    body, code, message, issues = _error_fields(response)
    message, hint = _explain(status, code, message, body, AMBIGUOUS_HINTS.get(ambiguous or ""))
    # a create that failed this way may still have happened on the platform
    maybe_created = ambiguous is not None and (status >= 500 or status in (408, 429))
    cls = status_error_class(status)
    if status == 426:
        cls = UpgradeRequiredError
    elif status == 401:
        cls = AuthenticationError
    return cls(
        message,
        status_code=status,
        code=code,
        hint=hint,
        body=body,
        issues=issues,
        retry_after=response.headers.get("Retry-After"),
        data={"maybe_created": ambiguous} if maybe_created else None,
    )


def _error_fields(response: httpx.Response) -> tuple[dict[str, Any], str | None, str, list[str]]:
    """(body, code, message, issues) of an error response; text a server sent is made
    safe to print (no terminal control sequences)."""
    body: dict[str, Any] = {}
    raw_text = ""
    try:
        decoded = loads(response.content)
        if isinstance(decoded, dict):
            body = decoded
        else:
            raw_text = response.text
    except (UnicodeDecodeError, ValueError):
        raw_text = response.text
    code = body.get("code") if isinstance(body.get("code"), str) else None
    message = body.get("message") if isinstance(body.get("message"), str) else None
    if message is None and isinstance(body.get("error"), str):
        message = body["error"]
    if code is None and message and message.replace("_", "").isalnum() and message.isupper():
        code = message  # older servers put a code in `error`
    issues = (
        [safe_text(_issue_text(i))[:300] for i in body.get("issues") or [] if i][:20]
        if isinstance(body.get("issues"), list)
        else []
    )
    if message is None:
        snippet = " ".join(raw_text.split())[:200]
        message = f"HTTP {response.status_code}" + (f": {snippet}" if snippet else "")
    return body, safe_text(code)[:100] if code else None, safe_text(message)[:1000], issues


def _explain(
    status: int,
    code: str | None,
    message: str,
    body: Mapping[str, Any],
    ambiguous_hint: str | None,
) -> tuple[str, str | None]:
    """A plain-words message and an SDK-level hint for a status or a known code."""
    if code in SCOPE_CODE_HINTS:
        plain, hint = SCOPE_CODE_HINTS[code]
        return (f"{plain} ({message})" if message != code else plain), hint
    if status == 401:
        if code == "TOKEN_EXPIRED":
            message = "your login has expired"
        elif code == "TOKEN_REVOKED":
            message = "your token was revoked"
        return message, "log in again (or check OSMOSIS_TOKEN)"
    if status == 403:
        return message, "ask a workspace admin for access, or pick another workspace"
    if status == 426:
        detail = body.get("message") or body.get("status")
        shown = f": {safe_text(str(detail))[:300]}" if detail else ""
        return (
            f"this osmosis-client is too old for the platform{shown}",
            "upgrade osmosis-client: pip install -U osmosis-client",
        )
    if status == 429:
        return message, "the platform is rate limiting requests; wait a minute and try again"
    if status >= 500 or status == 408:
        return message, ambiguous_hint or "the platform is having trouble; try again later"
    return message, None


def decode_json(response: httpx.Response) -> Any:
    """The JSON body of a 2xx response; anything else is a ``ProtocolError``."""
    if response.status_code == 204 or not response.content:
        return None
    try:
        return loads(response.content)
    except (UnicodeDecodeError, ValueError) as exc:
        snippet = " ".join(response.text.split())[:200]
        raise ProtocolError(
            f"the platform sent a response that is not JSON: {snippet!r}",
            hint="check that the platform URL (OSMOSIS_PLATFORM_URL) is the Osmosis platform",
            data={"not_json": True},
        ) from exc


class Body:
    """Collects an answer's bytes (decompressed) with two bounds: its size, and the
    whole answer's time — a server trickling bytes just under the read timeout still
    ends. Then rebuilds it as an ordinary, fully read response."""

    def __init__(self, request: httpx.Request, monotonic: Any) -> None:
        self.request = request
        self.monotonic = monotonic
        timeout = request.extensions.get("timeout") or {}
        self.limit = max(60.0, 2 * float(timeout.get("read") or 30.0))
        self.started = monotonic()
        self.parts: list[bytes] = []
        self.size = 0

    def add(self, chunk: bytes) -> None:
        self.size += len(chunk)
        if self.size > MAX_BODY_BYTES:
            raise ProtocolError(
                f"the platform's answer is larger than {MAX_BODY_BYTES >> 20} MiB",
                hint="check the platform URL (OSMOSIS_PLATFORM_URL)",
            )
        if self.monotonic() - self.started > self.limit:
            raise httpx.ReadTimeout(
                f"the answer did not finish within {self.limit:g}s", request=self.request
            )
        self.parts.append(chunk)

    def response(self, streamed: httpx.Response) -> httpx.Response:
        skip = {"content-encoding", "content-length", "transfer-encoding"}
        headers = [(k, v) for k, v in streamed.headers.multi_items() if k.lower() not in skip]
        return httpx.Response(
            streamed.status_code,
            headers=headers,
            content=b"".join(self.parts),
            request=self.request,
        )
