"""A platform list read as the published CLI reads it: one page (``--limit N``) or every
page (``--all``), and the list envelope's paging keys for what was read."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, Generic, Protocol, TypeVar

from osmosis_cli.terminal.declare import option

if TYPE_CHECKING:
    from osmosis_cli.terminal.output import Output

T = TypeVar("T")

#: ``--limit N`` and ``--all`` of the platform's list commands (pages of at most 50)
PageLimitOpt = Annotated[int | None, option("--limit N", "How many (1-50).", min=1, max=50)]
AllOpt = Annotated[bool, option("--all", "Every page.")]
#: a page's size when --limit is not given
PAGE = 50


def check_paging(every: bool, limit: int | None) -> None:
    """``--all`` with ``--limit`` is refused, as the published CLI refuses it."""
    if every and limit is not None:
        from osmosis_client.errors import InvalidInputError

        raise InvalidInputError("--all and --limit are mutually exclusive.", code="VALIDATION")


class Page(Protocol):
    @property
    def total_count(self) -> int | None: ...
    @property
    def has_more(self) -> bool: ...
    @property
    def next_offset(self) -> int | None: ...


P = TypeVar("P", bound=Page)


@dataclass
class Collected(Generic[T]):
    items: list[T]
    total_count: int | None
    next_offset: int | None  # of the page after the last one read; None: there is none

    def paging(self) -> dict[str, Any]:
        """``total_count``, ``has_more``, ``next_offset`` for ``Output.list_result``."""
        return {
            "total_count": self.total_count,
            "has_more": self.next_offset is not None,
            "next_offset": self.next_offset,
        }


@dataclass(kw_only=True)
class Paging:
    """The options of a platform list command (an options object: ``options_command``):
    ``--limit N`` (1-50) or ``--all``, never both (refused before any request)."""

    limit: PageLimitOpt = None
    all_: AllOpt = False

    def __post_init__(self) -> None:
        check_paging(self.all_, self.limit)

    def collect(
        self, pages: Callable[[int], Iterable[P]], records: Callable[[P], Sequence[T]]
    ) -> Collected[T]:
        """The first page's records (``--limit`` of them), or every page's (``--all``)."""
        return collect(pages(self.limit or PAGE), records, every=self.all_)


def show_list(
    out: Output,
    found: Collected[Any],
    *,
    items: list[Any],
    rows: list[list[str]],
    columns: list[str],
    empty: str,
    keep: Sequence[str] = (),
    extra: dict[str, Any] | None = None,
) -> bool:
    """A list command's output: the envelope (``--json``/``--plain``), else the table,
    or ``empty`` when there is nothing. Whether a table was shown (its hints follow)."""
    if out.list_result(items, rows=rows, **found.paging(), extra=extra):
        return False
    if not rows:
        out.info(empty)
        return False
    out.table(columns, rows, keep=keep)
    return True


def collect(
    pages: Iterable[P], records: Callable[[P], Sequence[T]], *, every: bool
) -> Collected[T]:
    """The first page's records, or every page's (``every``: ``has_more`` ends false)."""
    found = Collected[T]([], None, None)
    for page in pages:
        found.items += records(page)
        found.total_count = page.total_count
        found.next_offset = page.next_offset if page.has_more else None
        if not every:
            break
    if every:
        found.next_offset = None
    return found
