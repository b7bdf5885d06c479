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

from osmosis_client._retry import Failure, RetryPolicy, Success, retry_plan
from osmosis_client._tls import certificate_problem
from osmosis_client._version import __version__
from osmosis_client.errors import (
    APIConnectionError,
    APIStatusError,
    APITimeoutError,
    InvalidInputError,
    WorkspaceRequiredError,
)
from osmosis_client.platform._answers import AMBIGUOUS_HINTS, decode_json, error_from_response

logger = logging.getLogger("osmosis_client")

DEFAULT_TIMEOUT = httpx.Timeout(30.0, connect=5.0)
USER_AGENT = f"osmosis-client/{__version__} python/{platform.python_version()}"

Scope = Literal["none", "git", "required"]
NO_RETRY = RetryPolicy(max_retries=0)
Step = httpx.Request | float
Outcome = httpx.Response | httpx.TransportError | None
Plan = Generator[Step, Outcome, httpx.Response]


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
    #: what the platform may still have done after a failure ("run", "dataset",
    #: "retry": a create or a retry whose answer was lost); None for a plain call
    ambiguous: str | None = None
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
        # a connection never made carried nothing: the platform cannot have acted
        ambiguous = None if isinstance(exc, httpx.ConnectError) else options.ambiguous
        ambiguous_hint = AMBIGUOUS_HINTS.get(ambiguous or "")
        data: dict[str, Any] = {"maybe_created": ambiguous} if ambiguous else {}
        problem = certificate_problem(exc)
        if problem is not None:
            error: APIConnectionError = APIConnectionError(
                f"the platform at {host} presented a certificate that is not trusted ({problem})",
                hint="trust its CA: set OSMOSIS_CA_BUNDLE or SSL_CERT_FILE to a PEM bundle "
                "holding it",
                code="TLS_CERTIFICATE",
                data={**data, "problem": problem},
            )
        elif isinstance(exc, httpx.TimeoutException):
            error = APITimeoutError(
                f"the platform at {host} did not answer in time",
                hint=ambiguous_hint or "check your network and try again",
                data=data,
            )
        else:
            error = APIConnectionError(
                f"cannot reach the platform at {host} ({type(exc).__name__})",
                hint=ambiguous_hint
                or "check your network and the platform URL (OSMOSIS_PLATFORM_URL)",
                data=data,
            )
        error.__cause__ = exc  # a library user's traceback shows httpx's error beneath
        return error

    def status_error(self, response: httpx.Response, options: RequestOptions) -> APIStatusError:
        return error_from_response(response, ambiguous=options.ambiguous)


__all__ = ["DEFAULT_TIMEOUT", "RequestOptions", "Transport", "decode_json", "error_from_response"]
