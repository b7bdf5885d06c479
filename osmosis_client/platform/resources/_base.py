"""The resource pattern: a resource method builds a :class:`Call` (request + parser);
the client executes it. Sync and async resources differ only in ``await``."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from osmosis_client.platform._transport import RequestOptions, encode_segment
from osmosis_client.platform.models import LogPage, parse

if TYPE_CHECKING:
    from osmosis_client.platform._client import AsyncClient, Client

T = TypeVar("T")


@dataclass(frozen=True)
class Call(Generic[T]):
    """A request and how to turn its JSON body into a typed result."""

    options: RequestOptions
    parse: Callable[[Any], T]


class SyncResource:
    def __init__(self, client: Client) -> None:
        self._client = client


class AsyncResource:
    def __init__(self, client: AsyncClient) -> None:
        self._client = client


def with_secrets(payload: dict[str, Any], secrets: Mapping[str, str] | None) -> dict[str, Any]:
    """A submit body with run-scoped secret values in ``secrets.provided`` (they override
    stored secrets of the same names), each of them also in ``secrets.required``."""
    if secrets:
        section = dict(payload.get("secrets") or {})
        required = list(section.get("required", []))
        section["required"] = required + [n for n in secrets if n not in required]
        section["provided"] = dict(secrets)
        payload["secrets"] = section
    return payload


#: the platform's most log entries per page
LOG_PAGE_LIMIT = 200


def log_page_call(route: str, name_or_id: str, limit: int, cursor: str | None,
                  what: str) -> Call[LogPage]:  # fmt: skip
    """``GET {route}/{name}/logs``: one page, the newest first (``direction=older``;
    ``cursor`` from the previous page reads older ones). Every log route is this one."""
    params: dict[str, Any] = {"limit": min(max(limit, 1), LOG_PAGE_LIMIT), "direction": "older"}
    if cursor:
        params["cursor"] = cursor
    return Call(
        RequestOptions("GET", f"{route}/{encode_segment(name_or_id)}/logs", params=params,
                       scope="required"),
        lambda data: parse(LogPage, data, what=what),
    )  # fmt: skip
