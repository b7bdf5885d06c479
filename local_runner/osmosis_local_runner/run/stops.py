"""Why a run stops before its end, as the error it ends with: finished attempts are kept
and the run resumes where it stopped (``status: stopped``)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from osmosis_client.errors import InvalidInputError
from osmosis_client.llm.prices import PriceTable
from osmosis_client.llm.providers import ModelTarget
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


def spent(budget: float | None, cost: float | None, output: Path) -> RunAborted | None:
    """The error a run ends with when its calls reached its budget (None: they did not)."""
    if budget is None or cost is None or cost < budget:
        return None
    return over_budget(cost, budget, output)


def over_budget(spent: float, budget: float, output: Path) -> RunAborted:
    """The run's model calls have cost its ``max_cost``: no attempt started after that,
    the ones in flight finished (every call paid for is counted)."""
    return _stopped(
        f"the run has cost ${spent:.4f}, its budget is ${budget:g} (max_cost): it stopped "
        "(the attempts in flight finished; every finished attempt is kept)",
        "resume it with a higher max_cost (or none) to run the rest",
        "BUDGET",
        output,
        cost_usd=spent,
        max_cost=budget,
    )


_NO_PRICE = 'give a price table (prices) with a [models."NAME"] entry for it'


def cost_unknown(output: Path) -> RunAborted:
    """A cost budget, and a call (a judge's, say) whose price nobody knows."""
    return _stopped(
        "a model the run called has no known price, so its cost budget (max_cost) cannot "
        f"be kept: it stopped; {_KEPT}",
        _NO_PRICE,
        "NO_PRICE",
        output,
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
