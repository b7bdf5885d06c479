"""The ``--json`` envelopes every command speaks: the published CLI's (``schema_version:
1``; list / detail / operation on stdout, error / warning as JSON lines on stderr), with
our own fields inside them and never a published key renamed.

Builders only: :class:`~osmosis_cli.terminal.output.Output` writes them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from osmosis_client._version import __version__
from osmosis_client.errors import (
    APIConnectionError,
    APIStatusError,
    AuthError,
    CredentialStoreError,
    EndpointUnreachableError,
    InvalidInputError,
    OsmosisError,
    PermissionDeniedError,
    ProtocolError,
)

SCHEMA_VERSION = 1

#: the published CLI's error codes; scripts switch on these
PUBLISHED_CODES = frozenset(
    {
        "VALIDATION",
        "AUTH_REQUIRED",
        "NOT_FOUND",
        "CONFLICT",
        "UPGRADE_REQUIRED",
        "RATE_LIMITED",
        "PLATFORM_ERROR",
        "INTERNAL",
        "INTERACTIVE_REQUIRED",
        "WORKSPACE_REQUIRED",
        "NETWORK",
        "SUBSCRIPTION_REQUIRED",
        "BILLING_REQUIRED",
        "KEYRING_UNAVAILABLE",
        "CREDENTIALS_UNAVAILABLE",
        "CREDENTIALS_PARSE_FAILED",
        "CREDENTIALS_VERSION_CHANGED",
        "ENV_TOKEN_PLATFORM_REQUIRED",
        "ENV_TOKEN_PLATFORM_MISMATCH",
        "TOKEN_NOT_FOUND",
        "KEYRING_CLEANUP_FAILED",
        "TOKEN_REVOKE_FAILED",
    }
)

#: codes of ours with no published counterpart (documented in docs/cli.md)
OWN_CODES = frozenset({"NOT_PASSED", "RUN_FAILED", "INTERRUPTED"})
#: codes of ours the published CLI reports under one of its own
AS_PUBLISHED = {
    "DOCTOR_FAILED": "VALIDATION",
    "CONFLICT": "CONFLICT",
    "UPLOAD_FAILED": "PLATFORM_ERROR",
    "DOWNLOAD_FAILED": "PLATFORM_ERROR",
    "FILE_CHANGED": "VALIDATION",
}

_BY_STATUS = {
    400: "VALIDATION",
    401: "AUTH_REQUIRED",
    404: "NOT_FOUND",
    409: "CONFLICT",
    422: "VALIDATION",
    426: "UPGRADE_REQUIRED",
    429: "RATE_LIMITED",
}


def published_code(exc: OsmosisError) -> str:
    """The published vocabulary's code for ``exc`` (our finer code stays in ``reason``)."""
    code = exc.code
    if code in PUBLISHED_CODES or code in OWN_CODES:
        return code
    if code == "CONFIRMATION_REQUIRED":
        return "INTERACTIVE_REQUIRED"
    if code in AS_PUBLISHED:
        return AS_PUBLISHED[code]
    if isinstance(exc, APIStatusError):
        if isinstance(exc, PermissionDeniedError):
            return "PLATFORM_ERROR"  # as published: a 403 is not "log in again"
        return _BY_STATUS.get(exc.status_code, "PLATFORM_ERROR")
    if isinstance(exc, AuthError):
        return "AUTH_REQUIRED"
    if isinstance(exc, InvalidInputError):
        return "VALIDATION"
    if isinstance(exc, CredentialStoreError):
        return "CREDENTIALS_UNAVAILABLE"
    if isinstance(exc, APIConnectionError | EndpointUnreachableError):
        return "NETWORK"
    if isinstance(exc, ProtocolError):
        return "PLATFORM_ERROR"
    return "PLATFORM_ERROR" if exc.code in ("PROVIDER_ERROR", "MODEL_ENDPOINT") else "INTERNAL"


def list_document(
    items: Sequence[Any],
    *,
    total_count: int | None = None,
    has_more: bool = False,
    next_offset: int | None = None,
    extra: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    document: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "items": list(items),
        "total_count": len(items) if total_count is None else total_count,
        "has_more": has_more,
        "next_offset": next_offset,
    }
    return _with_extra(document, extra)


def detail_document(data: Mapping[str, Any]) -> dict[str, Any]:
    return {"schema_version": SCHEMA_VERSION, "data": dict(data)}


def operation_document(
    operation: str,
    *,
    status: str = "success",
    resource: Mapping[str, Any] | None = None,
    message: str | None = None,
    next_steps: Sequence[Mapping[str, Any]] = (),
    extra: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    document: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "status": status,
        "operation": operation,
    }
    if resource:
        document["resource"] = dict(resource)
    if message:
        document["message"] = message
    if next_steps:
        document["next_steps_structured"] = [dict(step) for step in next_steps]
    return _with_extra(document, extra)


def error_document(command: str, exc: OsmosisError, hint: str | None) -> dict[str, Any]:
    details: dict[str, Any] = dict(exc.data)
    if isinstance(exc, APIStatusError):
        details.setdefault("status_code", exc.status_code)
        platform_code = exc.body.get("code") if isinstance(exc.body, dict) else None
        if isinstance(platform_code, str):
            details.setdefault("platform_code", platform_code)
    problems = getattr(exc, "problems", ()) or getattr(exc, "issues", ())
    if problems:
        details.setdefault("issues", [str(problem) for problem in problems])
    error: dict[str, Any] = {
        "code": published_code(exc),
        "message": exc.message,
        "details": details,
        "reason": exc.code,
    }
    for key, value in exc.to_dict().items():  # ours: problems, status, issues
        error.setdefault(key, value)
    error["hint"] = hint
    return {
        "schema_version": SCHEMA_VERSION,
        "command": command_name(command),
        "cli_version": __version__,
        "error": error,
    }


def usage_error_document(command: str, message: str, hint: str) -> dict[str, Any]:
    return {
        "schema_version": SCHEMA_VERSION,
        "command": command_name(command),
        "cli_version": __version__,
        "error": {
            "code": "VALIDATION",
            "message": message,
            "details": {},
            "reason": "USAGE",
            "hint": hint,
        },
    }


def warning_document(message: str, code: str | None = None) -> dict[str, Any]:
    return {
        "schema_version": SCHEMA_VERSION,
        "cli_version": __version__,
        "warning": {"code": code, "message": message},
    }


def command_name(command_path: str) -> str:
    """``osmosis eval run`` → ``eval run``; the bare program → ``<root>``."""
    words = command_path.split()
    return " ".join(words[1:]) or "<root>"


def _with_extra(document: dict[str, Any], extra: Mapping[str, Any] | None) -> dict[str, Any]:
    for key, value in (extra or {}).items():
        document.setdefault(key, value)  # extra keys never overwrite the envelope's own
    return document
