"""The resource pattern: a resource method builds a :class:`Call` (request + parser);
the client executes it. Sync and async resources differ only in ``await``."""

from __future__ import annotations

from collections.abc import (
    AsyncIterator,
    Awaitable,
    Callable,
    Generator,
    Iterable,
    Iterator,
    Mapping,
)
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

from pydantic import BaseModel

from osmosis_client._plan import drive_async, drive_sync
from osmosis_client.errors import APIConnectionError, APIStatusError, NotFoundError, OsmosisError
from osmosis_client.platform._transport import RequestOptions, encode_segment
from osmosis_client.platform.models import LogEntry, LogPage, parse

if TYPE_CHECKING:
    from osmosis_client.platform._client import AsyncClient, Client

T = TypeVar("T")


@dataclass(frozen=True)
class Call(Generic[T]):
    """A request and how to turn its JSON body into a typed result."""

    options: RequestOptions
    parse: Callable[[Any], T]


class Paged(Protocol):
    """A page of a platform list: whether more follow, and where."""

    @property
    def has_more(self) -> bool: ...
    @property
    def next_offset(self) -> int | None: ...


P = TypeVar("P", bound=Paged)
L = TypeVar("L")  # any listing
M = TypeVar("M", bound=BaseModel)
#: the platform's most items per page of a list
PAGE_LIMIT = 50


def page_params(limit: int, offset: int) -> dict[str, Any]:
    """``limit`` (clamped to 1..50) and ``offset`` (never negative) of one page."""
    return {"limit": min(max(limit, 1), PAGE_LIMIT), "offset": max(offset, 0)}


def page_call(
    route: str, read: Callable[[Any], T], limit: int, offset: int, **filters: str | None
) -> Call[T]:
    """``GET route``: one page of a list (``limit`` clamped to 1..50), the ``filters``
    given as query parameters. Every list route is this one."""
    params = page_params(limit, offset)
    params.update({key: value for key, value in filters.items() if value})
    return Call(RequestOptions("GET", route, params=params, scope="required"), read)


def reader(model: type[M], what: str) -> Callable[[Any], M]:
    """A wire model's reader, naming what it reads in its errors."""
    return lambda data: parse(model, data, what=what)


def next_offset(page: Paged) -> int | None:
    """Where the next page starts, or ``None`` when this was the last one."""
    if page.has_more and page.next_offset is not None:
        return page.next_offset
    return None


def walk_pages(
    fetch: Callable[[int], P], following: Callable[[P], int | None] = next_offset
) -> Iterator[P]:
    """Every page, ``fetch(offset)`` after ``fetch(offset)`` until the last one; a
    ``next_offset`` that does not move forward ends it with an error (never a loop)."""
    offset: int | None = 0
    while offset is not None:
        page = fetch(offset)
        yield page
        offset = _advanced(offset, following(page))


async def awalk_pages(
    fetch: Callable[[int], Awaitable[P]], following: Callable[[P], int | None] = next_offset
) -> AsyncIterator[P]:
    """:func:`walk_pages` for an async client."""
    offset: int | None = 0
    while offset is not None:
        page = await fetch(offset)
        yield page
        offset = _advanced(offset, following(page))


def _advanced(offset: int, following: int | None) -> int | None:
    """The next page's offset, checked: a platform whose paging is stuck (the same or an
    earlier ``next_offset``) would be read forever."""
    from osmosis_client.errors import ProtocolError

    if following is not None and following <= offset:
        raise ProtocolError(
            f"the platform's list did not advance (next_offset {following} after the page "
            f"at offset {offset}): stopped reading it",
            hint="try again later; if it persists, report it to the platform",
            data={"offset": offset, "next_offset": following},
        )
    return following


#: a follow's hand-over of new log entries
OnEntries = Callable[[list[LogEntry]], None]
#: what a follow survives between its polls (up to its own limit of failures in a row)
FOLLOW_SURVIVES = (APIStatusError, APIConnectionError)


def named_plan(
    name: str,
    get: Call[T],
    listing: Call[L],
    names: Callable[[L], Iterable[str | None]],
) -> Generator[Call[Any] | float, Any, T]:
    """``get``; when it is not found, the nearest name on ``listing``'s page is said
    (the not-found stands either way; the page is read only then)."""
    found = yield get
    if isinstance(found, NotFoundError):
        page = yield listing
        if not isinstance(page, BaseException):
            suggest_name(found, name, [n for n in names(page) if n])
    if isinstance(found, BaseException):
        raise found
    return found  # type: ignore[no-any-return]


def suggest_name(exc: OsmosisError, name: str, names: Iterable[str]) -> None:
    """Add the nearest of ``names`` to a not-found as ``did_you_mean`` (and its hint)."""
    import difflib

    close = difflib.get_close_matches(name, list(names), n=1, cutoff=0.6)
    if close and close[0] != name:
        exc.data = {**exc.data, "did_you_mean": close[0]}
        exc.hint = f"did you mean {close[0]!r}?"


class SyncResource:
    def __init__(self, client: Client) -> None:
        self._client = client

    def _drive(self, plan: Generator[Call[Any] | float, Any, T]) -> T:
        """Drive a plan that is sent its failures (a follow, a look-up that suggests)."""
        return drive_sync(plan, self._client._execute, self._client._sleep, FOLLOW_SURVIVES)


class AsyncResource:
    def __init__(self, client: AsyncClient) -> None:
        self._client = client

    async def _drive(self, plan: Generator[Call[Any] | float, Any, T]) -> T:
        return await drive_async(plan, self._client._execute, self._client._sleep, FOLLOW_SURVIVES)


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


def log_page_call(
    route: str, name_or_id: str, limit: int, cursor: str | None, what: str
) -> Call[LogPage]:
    """``GET {route}/{name}/logs``: one page, the newest first (``direction=older``;
    ``cursor`` from the previous page reads older ones). Every log route is this one."""
    params: dict[str, Any] = {"limit": min(max(limit, 1), LOG_PAGE_LIMIT), "direction": "older"}
    if cursor:
        params["cursor"] = cursor
    return Call(
        RequestOptions(
            "GET", f"{route}/{encode_segment(name_or_id)}/logs", params=params, scope="required"
        ),
        lambda data: parse(LogPage, data, what=what),
    )
