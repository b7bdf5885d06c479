"""``client.secrets``: values stored on the platform for a config's ``[secrets]``
(``/api/cli/environment-secrets``, published-cli-0.3.8.md §4.1). Scopes are
``personal`` (yours; ``user`` on the wire) and ``workspace`` (shared); a personal secret
overrides a workspace one of the same name. A value goes up and never comes back: the
platform lists names only, and an error that echoes a value is redacted here."""

from __future__ import annotations

import builtins
import contextlib
import re
from collections.abc import AsyncIterator, Iterable, Iterator, Mapping
from typing import Any, Literal

from pydantic import field_validator

from osmosis_client.errors import InvalidInputError, OsmosisError
from osmosis_client.platform._transport import RequestOptions
from osmosis_client.platform.models import Id, Page, WireModel, parse
from osmosis_client.platform.resources import _base as base

PAGE_LIMIT = 50
NAME = re.compile(r"^[A-Z][A-Z0-9_]*$")
PATH = "/api/cli/environment-secrets"

Scope = Literal["personal", "workspace"]
ListScope = Literal["all", "personal", "workspace"]
WIRE = {"personal": "user", "workspace": "workspace", "all": "all"}


class Secret(WireModel):
    """A stored secret's record (never its value)."""

    id: Id
    name: str | None = None
    scope: str | None = None  # personal | workspace (the wire's "user" is read as personal)
    created_at: str | None = None
    updated_at: str | None = None
    creator_name: str | None = None
    updater_name: str | None = None
    platform_url: str | None = None

    @field_validator("scope", mode="before")
    @classmethod
    def _ours(cls, value: Any) -> Any:
        return "personal" if value == "user" else value

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json", exclude={"platform_url"})


class SecretPage(Page):
    environment_secrets: list[Secret]
    platform_url: str | None = None


def check_name(name: str) -> str:
    if not (1 <= len(name) <= 255) or not NAME.match(name):
        raise InvalidInputError(
            f"invalid secret name {name!r}",
            hint="a name is upper case: a letter, then letters, digits or _ (e.g. OPENAI_API_KEY)",
            code="VALIDATION",
        )
    return name


def _scope(scope: str) -> str:
    if scope not in WIRE:
        raise InvalidInputError(
            f"unknown secret scope {scope!r}", hint="use personal or workspace", code="VALIDATION"
        )
    return WIRE[scope]


def list_call(scope: ListScope, limit: int, offset: int) -> base.Call[SecretPage]:
    read = base.reader(SecretPage, "secret list")
    return base.page_call(PATH, read, limit, offset, scope=_scope(scope))


def set_call(name: str, value: str, scope: Scope) -> base.Call[Secret | None]:
    if not value:
        raise InvalidInputError("a secret's value cannot be empty", code="VALIDATION")
    body = {"name": check_name(name), "value": value, "scope": _scope(scope)}
    return base.Call(
        RequestOptions("POST", PATH, json=body, scope="required"),  # an upsert: safe to retry
        lambda data: _record(data, name, scope),
    )


def delete_call(name: str, scope: Scope) -> base.Call[Any]:
    body = {"name": check_name(name), "scope": _scope(scope)}
    return base.Call(RequestOptions("DELETE", PATH, json=body, scope="required"), lambda data: data)


def _record(data: Any, name: str, scope: str) -> Secret | None:
    if isinstance(data, dict):
        inner = data.get("environment_secret", data)
        if isinstance(inner, dict) and "id" in inner:
            return parse(Secret, inner, what="secret")
    return None


def only_required(secrets: Mapping[str, str] | None, required: Iterable[str]) -> dict[str, str]:
    """The values among ``secrets`` a run requires (a submit never sends the others)."""
    wanted = set(required)
    return {name: value for name, value in (secrets or {}).items() if name in wanted}


@contextlib.contextmanager
def redacting(values: Iterable[str]) -> Iterator[None]:
    """Whatever a request in the block raises, with each of ``values`` (secrets the
    request carried) replaced wherever the platform echoed it — the same error, its own
    cause kept (never the unredacted one: it is the same object, cleaned)."""
    try:
        yield
    except OsmosisError as exc:
        for value in values:
            redacted(exc, value)
        raise


def redacted(exc: OsmosisError, value: str) -> OsmosisError:
    """``exc`` with ``value`` replaced by ``[REDACTED]`` wherever the platform echoed it,
    and keys named value / secret / secret_value masked."""
    if not value:
        return exc

    def clean(item: Any) -> Any:
        if isinstance(item, str):
            return item.replace(value, "[REDACTED]")
        if isinstance(item, dict):
            return {
                k: "[REDACTED]" if k in ("value", "secret", "secret_value") else clean(v)
                for k, v in item.items()
            }
        if isinstance(item, list):
            return [clean(v) for v in item]
        return item

    exc.message = clean(exc.message)
    exc.args = (exc.message,)
    exc.hint = clean(exc.hint)
    exc.data = clean(exc.data)
    if isinstance(getattr(exc, "body", None), dict):
        exc.body = clean(exc.body)  # type: ignore[attr-defined]
    return exc


class Secrets(base.SyncResource):
    def list(
        self, scope: ListScope = "all", limit: int = PAGE_LIMIT, offset: int = 0
    ) -> SecretPage:
        return self._client._execute(list_call(scope, limit, offset))

    def pages(self, scope: ListScope = "all", page_size: int = PAGE_LIMIT) -> Iterator[SecretPage]:
        return base.walk_pages(lambda offset: self.list(scope, page_size, offset), _next)

    def all(self, scope: ListScope = "all") -> builtins.list[Secret]:
        return [s for page in self.pages(scope) for s in page.environment_secrets]

    def set(self, name: str, value: str, scope: Scope = "personal") -> Secret | None:
        """Store (or replace) a secret; its record when the platform returns one."""
        with redacting([value]):
            return self._client._execute(set_call(name, value, scope))

    def delete(self, name: str, scope: Scope = "personal") -> None:
        self._client._execute(delete_call(name, scope))


class AsyncSecrets(base.AsyncResource):
    async def list(
        self, scope: ListScope = "all", limit: int = PAGE_LIMIT, offset: int = 0
    ) -> SecretPage:
        return await self._client._execute(list_call(scope, limit, offset))

    def pages(
        self, scope: ListScope = "all", page_size: int = PAGE_LIMIT
    ) -> AsyncIterator[SecretPage]:
        return base.awalk_pages(lambda offset: self.list(scope, page_size, offset), _next)

    async def all(self, scope: ListScope = "all") -> builtins.list[Secret]:
        return [s async for page in self.pages(scope) for s in page.environment_secrets]

    async def set(self, name: str, value: str, scope: Scope = "personal") -> Secret | None:
        with redacting([value]):
            return await self._client._execute(set_call(name, value, scope))

    async def delete(self, name: str, scope: Scope = "personal") -> None:
        await self._client._execute(delete_call(name, scope))


def _next(page: SecretPage) -> int | None:
    if not page.environment_secrets:
        return None
    return page.next_offset if page.has_more and page.next_offset is not None else None
