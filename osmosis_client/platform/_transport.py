"""Request building, the retry loop and error mapping — shared by ``Client`` and ``AsyncClient``.

The retry loop is written once, as a generator (:meth:`Transport.plan`) that
yields either an ``httpx.Request`` to send or a ``float`` to sleep, and is sent
back the response or the transport exception. The sync and async clients only
drive it (:func:`drive_sync` / :func:`drive_async`): no policy lives there.
"""

from __future__ import annotations

import logging
import platform
import time
from collections.abc import Callable, Generator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import quote

import httpx
from pydantic import SecretStr

from osmosis_client._redact import safe_text
from osmosis_client._retry import Failure, RetryPolicy, Success, retry_plan
from osmosis_client._tls import certificate_problem
from osmosis_client._version import __version__
from osmosis_client._wire import loads
from osmosis_client.errors import (
    APIConnectionError,
    APIStatusError,
    APITimeoutError,
    AuthenticationError,
    InvalidInputError,
    ProtocolError,
    UpgradeRequiredError,
    WorkspaceRequiredError,
    status_error_class,
)

logger = logging.getLogger("osmosis_client")

DEFAULT_TIMEOUT = httpx.Timeout(30.0, connect=5.0)
MAX_BODY_BYTES = 16 << 20  # one platform answer, decompressed
USER_AGENT = f"osmosis-client/{__version__} python/{platform.python_version()}"

Scope = Literal["none", "git", "required"]
NO_RETRY = RetryPolicy(max_retries=0)
Step = httpx.Request | float
Outcome = httpx.Response | httpx.TransportError | None
Plan = Generator[Step, Outcome, httpx.Response]

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

AMBIGUOUS_CREATE_HINT = "the run may have been created — list your runs before resubmitting"


MAX_SEGMENT = 256  # a run name, id or workspace in a URL path


def encode_segment(value: str) -> str:
    """Percent-encode one path segment with no safe characters (``a/b`` → ``a%2Fb``);
    refuse one no platform name or id could be."""
    if not value or len(value) > MAX_SEGMENT:
        raise InvalidInputError(
            f"{_shown(value)} is not a name or id ({len(value):,} characters; at most "
            f"{MAX_SEGMENT})",
            code="BAD_NAME",
        )
    return quote(value, safe="")


def _shown(value: str) -> str:
    return repr(value if len(value) <= 40 else value[:40] + "…")


def _header_value(value: str, what: str) -> str:
    """Header values are visible ASCII: anything else is a mistyped token or name."""
    if (
        not value
        or any(not "\x21" <= c <= "\x7e" and c != " " for c in value)
        or (value != value.strip())
    ):
        raise InvalidInputError(
            f"the {what} contains characters it can never have (non-ASCII, control "
            "characters or surrounding spaces)",
            hint=f"check the {what} (e.g. a stray newline when it was pasted)"
            + ("; a workspace can also be named by its id" if what == "workspace" else ""),
            code="BAD_HEADER_VALUE",
        )
    return value


@dataclass(frozen=True)
class RequestOptions:
    """One logical call to the platform (retries included)."""

    method: str
    path: str
    json: Any = None
    params: Mapping[str, Any] | None = None
    authenticated: bool = True
    scope: Scope = "none"
    idempotency_key: str | None = None
    retry: bool = True
    #: said on a failure after which the platform may still have acted (e.g. a create)
    ambiguous_hint: str | None = None
    #: seconds for this call (default: the client's timeout)
    timeout: float | None = None
    headers: Mapping[str, str] = field(default_factory=dict)


@dataclass
class Transport:
    """The platform connection settings and policy; no I/O of its own."""

    base_url: str
    token: SecretStr | None = None
    workspace: str | None = None
    git_repo: str | None = None
    retry_policy: RetryPolicy = field(default_factory=RetryPolicy)
    monotonic: Callable[[], float] = time.monotonic
    timeout: httpx.Timeout = field(default_factory=lambda: DEFAULT_TIMEOUT)
    _version_warned: bool = False

    def headers(self, options: RequestOptions) -> dict[str, str]:
        headers = {
            "User-Agent": USER_AGENT,
            "X-Osmosis-CLI-Version": __version__,
            "Accept": "application/json",
        }
        if options.authenticated:
            if self.token is None:
                from osmosis_client.errors import NotAuthenticatedError

                raise NotAuthenticatedError("not logged in", hint="log in, or set OSMOSIS_TOKEN")
            token = _header_value(self.token.get_secret_value(), "token")
            headers["Authorization"] = f"Bearer {token}"
        if options.scope == "required":
            if self.workspace:
                headers["X-Osmosis-Workspace"] = _header_value(self.workspace, "workspace")
            elif self.git_repo:
                headers["X-Osmosis-Git"] = self.git_repo
            else:
                raise WorkspaceRequiredError(
                    "no workspace selected and no git origin to pick one from",
                    hint="pick a workspace, or set OSMOSIS_WORKSPACE",
                )
        elif options.scope == "git" and self.git_repo:
            headers["X-Osmosis-Git"] = self.git_repo
        if options.idempotency_key:
            headers["Idempotency-Key"] = options.idempotency_key
        headers.update(options.headers)
        return headers

    def build_request(self, options: RequestOptions) -> httpx.Request:
        return httpx.Request(
            options.method,
            self.base_url + options.path,
            headers=self.headers(options),
            params=options.params,
            json=options.json,
            # explicit: httpx before 0.28 sends a bare Request with no timeout at all
            extensions={
                "timeout": (
                    httpx.Timeout(options.timeout) if options.timeout else self.timeout
                ).as_dict()
            },
        )

    def plan(self, options: RequestOptions) -> Plan:
        """The retry loop: yields requests and sleeps, returns the final 2xx response."""
        request = self.build_request(options)
        policy = self.retry_policy if options.retry else NO_RETRY

        def classify(outcome: Any) -> Success[httpx.Response] | Failure:
            if isinstance(outcome, httpx.Response):
                if outcome.is_success:
                    self._note_version_status(outcome)
                    return Success(outcome)
                return Failure(
                    self.status_error(outcome, options),
                    status=outcome.status_code,
                    retry_after=outcome.headers.get("Retry-After"),
                )
            error = self.connection_error(outcome, options)
            return Failure(error, retryable=error.code != "TLS_CERTIFICATE")

        return retry_plan(
            request,
            policy,
            classify,
            monotonic=self.monotonic,
            describe=f"{request.method} {request.url.copy_with(query=None)}",
        )

    def _note_version_status(self, response: httpx.Response) -> None:
        status = response.headers.get("X-Osmosis-Version-Status")
        if status in ("upgrade_available", "deprecated") and not self._version_warned:
            self._version_warned = True
            message = response.headers.get("X-Osmosis-Version-Message") or (
                "a newer osmosis-client is available: pip install -U osmosis-client"
            )
            logger.warning("%s", message)

    def connection_error(
        self, exc: httpx.TransportError, options: RequestOptions
    ) -> APIConnectionError:
        host = httpx.URL(self.base_url).host
        data: dict[str, Any] = {"maybe_created": options.ambiguous_hint is not None}
        problem = certificate_problem(exc)
        if problem is not None:
            error: APIConnectionError = APIConnectionError(
                f"the platform at {host} presented a certificate that is not trusted "
                f"({problem})",
                hint="trust its CA: set OSMOSIS_CA_BUNDLE or SSL_CERT_FILE to a PEM bundle "
                "holding it",
                code="TLS_CERTIFICATE",
                data={**data, "problem": problem},
            )
        elif isinstance(exc, httpx.TimeoutException):
            error = APITimeoutError(
                f"the platform at {host} did not answer in time",
                hint=options.ambiguous_hint or "check your network and try again",
                data=data,
            )
        else:
            error = APIConnectionError(
                f"cannot reach the platform at {host} ({type(exc).__name__})",
                hint=options.ambiguous_hint
                or "check your network and the platform URL (OSMOSIS_PLATFORM_URL)",
                data=data,
            )
        error.__cause__ = None
        return error

    def status_error(self, response: httpx.Response, options: RequestOptions) -> APIStatusError:
        return error_from_response(response, ambiguous_hint=options.ambiguous_hint)


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


def error_from_response(
    response: httpx.Response, *, ambiguous_hint: str | None = None
) -> APIStatusError:
    """Map a non-2xx response to the typed error hierarchy."""
    status = response.status_code
    body, code, message, issues = _error_fields(response)
    message, hint = _explain(status, code, message, body, ambiguous_hint)
    # a create that failed this way may still have happened on the platform
    maybe_created = ambiguous_hint is not None and (status >= 500 or status in (408, 429))
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
        data={"maybe_created": maybe_created} if maybe_created else None,
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
    except (UnicodeDecodeError, ValueError):
        snippet = " ".join(response.text.split())[:200]
        raise ProtocolError(
            f"the platform sent a response that is not JSON: {snippet!r}",
            hint="check that the platform URL (OSMOSIS_PLATFORM_URL) is the Osmosis platform",
            data={"not_json": True},
        ) from None


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
