"""Every error the SDK raises, rooted in :class:`OsmosisError`.

Each error carries a stable ``code`` (for scripts and ``--json``), a message for
humans, an optional ``hint`` saying how to fix it in SDK terms, and ``data`` (the
facts behind it: which variable, which model, which run). The SDK never names a
CLI flag; the CLI turns codes and data into flag-level hints
(``osmosis_cli/hints.py``) and maps classes to exit codes (``osmosis_cli/errors.py``).

    OsmosisError
    ├── InvalidInputError            bad input the user can fix locally
    │   ├── ConfigError              a config file with one or more problems
    │   ├── InsecureURLError         plain http to a non-loopback platform
    │   └── WorkspaceRequiredError   no workspace and no git origin to scope a call
    ├── AuthError                    not logged in / token unusable / denied
    │   ├── NotAuthenticatedError
    │   └── DeviceFlowError          login denied or expired
    ├── CredentialStoreError         the credential store cannot be read or written
    ├── ProtocolError                the platform answered something we cannot parse
    ├── ModelEndpointError           a model endpoint (OpenAI-compatible) failed
    │   ├── EndpointUnreachableError no answer from the endpoint
    │   └── ProviderRequestError     the provider answered with an error
    │       └── ModelNotFoundError   (also an InvalidInputError) no such model there
    ├── MissingAPIKeyError           (an InvalidInputError) the key's env var is unset
    ├── APIConnectionError           no HTTP response (DNS, refused, reset)
    │   └── APITimeoutError
    └── APIStatusError               the platform answered with a non-2xx status
        ├── BadRequestError          400 / 422
        ├── AuthenticationError      401 (also an AuthError)
        ├── PermissionDeniedError    403 (also an AuthError)
        ├── NotFoundError            404
        ├── ConflictError            409
        ├── UpgradeRequiredError     426
        ├── RateLimitError           429
        └── ServerError              5xx
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any


class OsmosisError(Exception):
    """Base of every error raised by ``osmosis_client``."""

    code: str = "ERROR"

    def __init__(
        self,
        message: str,
        *,
        hint: str | None = None,
        code: str | None = None,
        data: Mapping[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint
        self.data: dict[str, Any] = dict(data or {})
        if code is not None:
            self.code = code

    def __str__(self) -> str:
        return self.message

    @property
    def detail(self) -> str:
        """What went wrong, as the published SDK's errors expose it."""
        return str(self.data.get("detail") or self.message)

    def to_dict(self) -> dict[str, Any]:
        """The ``{"code", "message", "hint"}`` shape of cli.md's ``--json`` errors."""
        return {"code": self.code, "message": self.message, "hint": self.hint}


class InvalidInputError(OsmosisError):
    code = "INVALID_INPUT"


@dataclass(frozen=True)
class Problem:
    """One located problem in an input file (``FILE:LINE:COL: key: message``)."""

    file: str
    line: int | None
    column: int | None
    key: str
    message: str

    def __str__(self) -> str:
        where = self.file
        if self.line is not None:
            where += f":{self.line}"
            if self.column is not None:
                where += f":{self.column}"
        key = f"{self.key}: " if self.key else ""
        return f"{where}: {key}{self.message}"


class ConfigError(InvalidInputError):
    """An input file with one or more problems, all reported at once."""

    code = "INVALID_CONFIG"

    def __init__(
        self,
        message: str,
        problems: Sequence[Problem] = (),
        *,
        hint: str | None = None,
        code: str | None = None,
        data: Mapping[str, Any] | None = None,
    ) -> None:
        super().__init__(message, hint=hint, code=code, data=data)
        self.problems = list(problems)

    def to_dict(self) -> dict[str, Any]:
        data = super().to_dict()
        data["problems"] = [str(p) for p in self.problems]
        return data


class InsecureURLError(InvalidInputError):
    code = "INSECURE_URL"


class WorkspaceRequiredError(InvalidInputError):
    code = "WORKSPACE_REQUIRED"


class AuthError(OsmosisError):
    code = "AUTH"


class NotAuthenticatedError(AuthError):
    code = "TOKEN_MISSING"


class DeviceFlowError(AuthError):
    """The device login ended without a token (``access_denied``, ``expired_token``)."""

    code = "DEVICE_FLOW"


class CredentialStoreError(OsmosisError):
    code = "CREDENTIAL_STORE"


class ProtocolError(OsmosisError):
    """The platform's answer does not match the wire contract."""

    code = "PROTOCOL"


class ModelEndpointError(OsmosisError):
    code = "MODEL_ENDPOINT"


class EndpointUnreachableError(ModelEndpointError):
    code = "ENDPOINT_UNREACHABLE"


class ProviderRequestError(ModelEndpointError):
    """The model provider answered with an error status (after retries)."""

    code = "PROVIDER_ERROR"

    def __init__(
        self,
        message: str,
        *,
        status_code: int | None = None,
        hint: str | None = None,
        code: str | None = None,
        data: Mapping[str, Any] | None = None,
    ) -> None:
        super().__init__(message, hint=hint, code=code, data=data)
        self.status_code = status_code


class ModelNotFoundError(ProviderRequestError, InvalidInputError):
    """The endpoint does not serve the model (a ``ProviderRequestError``; exit 2 in the CLI)."""

    code = "MODEL_NOT_FOUND"


class MissingAPIKeyError(InvalidInputError):
    """The variable that should hold an API key is unset (``data["env_var"]`` names it)."""

    code = "MISSING_API_KEY"

    @property
    def env_var(self) -> str | None:
        value = self.data.get("env_var")
        return value if isinstance(value, str) else None


class APIConnectionError(OsmosisError):
    code = "CONNECTION"


class APITimeoutError(APIConnectionError):
    code = "TIMEOUT"


class APIStatusError(OsmosisError):
    """A non-2xx answer. ``body`` is the decoded JSON object (or ``{}``)."""

    code = "HTTP_ERROR"

    def __init__(
        self,
        message: str,
        *,
        status_code: int,
        code: str | None = None,
        hint: str | None = None,
        body: dict[str, Any] | None = None,
        issues: Sequence[str] = (),
        retry_after: str | None = None,
        data: Mapping[str, Any] | None = None,
    ) -> None:
        super().__init__(message, hint=hint, code=code, data=data)
        self.status_code = status_code
        self.retry_after = retry_after
        self.body = body or {}
        self.issues = list(issues)

    def to_dict(self) -> dict[str, Any]:
        data = super().to_dict()
        data["status"] = self.status_code
        if self.issues:
            data["issues"] = self.issues
        return data


class BadRequestError(APIStatusError):
    code = "VALIDATION"


class AuthenticationError(APIStatusError, AuthError):
    code = "TOKEN_INVALID"


class PermissionDeniedError(APIStatusError, AuthError):
    code = "FORBIDDEN"


class NotFoundError(APIStatusError):
    code = "NOT_FOUND"


class ConflictError(APIStatusError):
    code = "CONFLICT"


class UpgradeRequiredError(APIStatusError):
    code = "UPGRADE_REQUIRED"


class RateLimitError(APIStatusError):
    code = "RATE_LIMITED"


class ServerError(APIStatusError):
    code = "SERVER_ERROR"


STATUS_ERRORS: dict[int, type[APIStatusError]] = {
    400: BadRequestError,
    401: AuthenticationError,
    403: PermissionDeniedError,
    404: NotFoundError,
    409: ConflictError,
    422: BadRequestError,
    426: UpgradeRequiredError,
    429: RateLimitError,
}


def status_error_class(status: int) -> type[APIStatusError]:
    if status in STATUS_ERRORS:
        return STATUS_ERRORS[status]
    if status >= 500:
        return ServerError
    return APIStatusError
