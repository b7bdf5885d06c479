"""What a run's model calls cost and how far they may go — prices, a budget, how a call
without usage counts, an attempt's tokens — and where their answers may come from (the
call cache, a run replayed): each setting given, else the eval config's."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from osmosis_client.llm.prices import PriceTable

if TYPE_CHECKING:
    from osmosis_client.platform.eval.eval_config import EvalConfig
    from osmosis_local_runner.run.request.overrides import Overrides


def accounting(
    flags: Overrides, models: list[str], config: EvalConfig | None = None
) -> dict[str, Any]:
    """What a run's calls cost and how far they may go — each setting given, else the
    config's — and whether eval fns see the reasoning."""
    local = config.local if config is not None else None
    prices: Path | PriceTable | None = flags.prices
    if prices is None and local is not None and local.prices:
        root = config.root if config and config.root else Path.cwd()
        prices = PLATFORM if local.prices == "platform" else root / local.prices
    max_cost = flags.max_cost if flags.max_cost is not None else local and local.max_cost
    tokens = flags.max_attempt_tokens or (local.max_attempt_tokens if local else None)
    return {
        "prices": price_table(prices, models, flags.price_source),
        "max_cost": float(max_cost) if max_cost else None,
        "unknown_usage_free": _unknown_usage(
            flags.unknown_usage or (local.unknown_usage if local else None)
        )
        == "free",
        "max_attempt_tokens": tokens,
        "raw_answers": flags.raw_answers or bool(local and local.raw_answers),
    }


def _unknown_usage(given: str | None) -> str:
    from osmosis_client.errors import InvalidInputError

    if given not in (None, "unknown", "free"):
        raise InvalidInputError(
            f"unknown_usage must be unknown or free, not {given!r}", code="USAGE"
        )
    return given or "unknown"


#: ``prices = "platform"``: the platform's published inference prices
PLATFORM = Path("platform")


def price_table(
    prices: Path | PriceTable | None,
    models: list[str],
    source: Callable[[list[str]], PriceTable] | None,
) -> PriceTable:
    """The run's price table: a file's, one in memory, or the platform's for its models."""
    from osmosis_client.errors import InvalidInputError
    from osmosis_client.llm.prices import EMPTY, load_prices

    if prices is None:
        return EMPTY
    if isinstance(prices, PriceTable):
        return prices
    if prices == PLATFORM:
        if source is None:
            raise InvalidInputError(
                "the platform's prices need a logged-in client",
                hint="log in (the CLI), or pass a price table from client.models.prices()",
                code="NO_PRICE",
            )
        return source(models)
    return load_prices(prices)


def caching(flags: Overrides, config: EvalConfig | None = None) -> dict[str, Any]:
    """The call cache's :class:`RunSpec` fields: these settings over ``[cache]``."""
    from osmosis_local_runner.results.documents.sources import run_path

    table = config.cache if config is not None else None
    root = (config.root if config is not None else None) or Path.cwd()
    directory = table.dir if table is not None and table.dir else None
    return {
        "cache": flags.cache or bool(table and table.enabled),
        "cache_dir": root / Path(directory).expanduser() if directory else None,
        "cache_scope": flags.cache_scope or (table.scope if table is not None else None),
        "replay": run_path(flags.replay) if flags.replay else None,
    }


__all__ = ["PLATFORM", "accounting", "caching", "price_table"]
