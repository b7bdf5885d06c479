"""Why a run stops before its end, as the error it ends with: finished attempts are kept
and the run resumes where it stopped (``status: stopped``)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from osmosis_client._fs import relative_to
from osmosis_client.errors import InvalidInputError, OsmosisError
from osmosis_client.llm.prices import PriceTable
from osmosis_client.llm.providers import ModelTarget
from osmosis_client.llm.usage import amount_of, count_of
from osmosis_local_runner.errors import RunAborted

_KEPT = "in-flight attempts were cancelled, finished ones kept"


def _stopped(message: str, hint: str, code: str, output: Path, **data: object) -> RunAborted:
    return RunAborted(message, hint=hint, code=code, data={"results": str(output), **data})


def deadline_reached(seconds: float, output: Path) -> RunAborted:
    message = f"the run reached its deadline of {seconds:g}s; {_KEPT}"
    return _stopped(message, "resume it to run the rest", "DEADLINE", output)


def journal_failed(exc: OSError, output: Path) -> RunAborted:
    message = f"cannot write the journal ({exc.strerror or exc}); the run stopped"
    hint = "free space or fix permissions, then resume the run"
    return _stopped(message, hint, "JOURNAL_WRITE_FAILED", output)


#: how many first calls refused alike make a request broken (``max_same_errors``)
SAME_ERRORS = 5


class SameErrors:
    """The run's first model calls, before any succeeded, refused alike — the same client
    error (4xx but 408 and 429: never retried), the same message: the request itself is
    broken (a model refusing ``temperature``, a field it does not know), and every other
    call would be refused too. After ``limit`` of them the run stops, saying which."""

    def __init__(self, limit: int | None, output: Path) -> None:
        self.limit = SAME_ERRORS if limit is None else limit
        self.output = output
        self.seen: tuple[int, str] | None = None
        self.count = 0

    def add(self, exc: OsmosisError) -> RunAborted | None:
        status = getattr(exc, "status_code", None)
        if not self.limit or not isinstance(status, int) or not 400 <= status < 500:
            return None
        if status in (408, 429):
            return None  # retried: the server's state, not the request's
        said = str(exc.data.get("detail") or exc.message)
        if (status, said) != self.seen:
            self.seen, self.count = (status, said), 0
        self.count += 1
        if self.count < self.limit:
            return None
        where = exc.data.get("endpoint")
        asked = f" by {where} (model {exc.data.get('model')})" if where else ""
        message = (
            f"the first {self.count} model calls were all refused{asked} with HTTP {status} "
            f"({said[:200]}): the request is broken, so the run stopped; {_KEPT}"
        )
        hint = "fix what the server names (a sampling parameter, a field), then resume"
        return _stopped(message, hint, "BROKEN_REQUEST", self.output, status=status, said=said)


@dataclass
class Budget:
    """A run's cost budget over every invocation of it: the resumed attempts' cost is
    counted first, then each attempt's as it ends — before the next attempt may start —,
    so a run goes past its budget by at most the attempts in flight when it was reached,
    however fast the answers come."""

    limit: float | None
    output: Path
    spent: float = 0.0
    reached: bool = False

    def count(self, usage: Mapping[str, Any] | None) -> RunAborted | None:
        """Count one finished attempt's cost; the error the run must stop with when that
        cost is unknown (nothing can keep the budget then)."""
        if self.limit is None or not isinstance(usage, Mapping) or not count_of(usage.get("calls")):
            return None
        cost = amount_of(usage.get("cost_usd"))
        if cost is None:
            return cost_unknown(self.output, usage)
        self.spent += cost
        self.reached = self.reached or self.spent >= self.limit
        return None

    def stopped(self, done: int, total: int) -> RunAborted:
        """The error of a run that stopped at its budget, ``done`` of ``total`` attempts
        finished (what a budget to finish would be follows from them)."""
        assert self.limit is not None
        error = over_budget(self.spent, self.limit, self.output)
        error.data.update(attempts_done=done, attempts_total=total)
        return error


def over_budget(spent: float, budget: float, output: Path) -> RunAborted:
    """The run's model calls have cost its ``max_cost``: no attempt started after that,
    the ones in flight finished (every call paid for is counted)."""
    return _stopped(
        f"the run has cost ${spent:.4f}, its budget is ${budget:g} (max_cost): it stopped "
        "(the attempts in flight finished; every finished attempt is kept)",
        "run it again with a higher max_cost (or none) to run the rest",
        "BUDGET",
        output,
        cost_usd=spent,
        max_cost=budget,
    )


_NO_PRICE = 'give a price table (prices) with a [models."NAME"] entry for it'


def cost_unknown(output: Path, usage: Mapping[str, Any]) -> RunAborted:
    """A cost budget, and a call whose cost nobody knows: its answer carried no usage (or
    usage outside any sane range), or its model (a judge's, say) has no price."""
    models = usage.get("by_model")
    names = ", ".join(str(m) for m in models) if isinstance(models, Mapping) else None
    model = names or str(usage.get("model") or "a model")
    unknown = count_of(usage.get("unreported_calls")) + count_of(usage.get("invalid_calls"))
    if unknown:
        return _stopped(
            f"{unknown} call(s) to {model} answered without usable token counts, so the "
            f"run's cost budget (max_cost) cannot be kept: it stopped; {_KEPT}",
            "count such calls as free (unknown_usage = free), or run without a budget",
            "USAGE_UNKNOWN",
            output,
            model=model,
        )
    return _stopped(
        f"{model} has no known price, so the run's cost budget (max_cost) cannot be kept: "
        f"it stopped; {_KEPT}",
        _NO_PRICE,
        "NO_PRICE",
        output,
        model=model,
    )


def check_budget(budget: float | None, prices: PriceTable, targets: Iterable[ModelTarget]) -> None:
    """A cost budget nobody could keep is refused before the run: each model needs a
    price (OpenRouter reports what each call cost)."""
    if budget is None:
        return
    for target in targets:
        if prices.price(target.model_path) is None and target.provider != "openrouter":
            raise InvalidInputError(
                f"no price is known for {target.model_path}: a run with a cost budget "
                "(max_cost) needs one",
                hint=_NO_PRICE,
                code="NO_PRICE",
                data={"model": target.model_path},
            )


def reason(status: str, fatal: OsmosisError | None) -> str | None:
    """Why a run stopped early (``summary.stopped_reason``): its error's code in lower
    case (``budget``, ``deadline``, ``usage_unknown``, ``no_price``…), else
    ``interrupted`` (Ctrl-C, a cancelled task)."""
    if status != "stopped":
        return None
    return fatal.code.lower() if fatal is not None else "interrupted"


def name_config(error: OsmosisError | None, config: Path | None) -> None:
    """The config a stopped run ran, in its error's data (as a command run from here
    names it): what the run is run again with."""
    if error is not None and config is not None:
        error.data.setdefault("config", str(relative_to(config) or config))
