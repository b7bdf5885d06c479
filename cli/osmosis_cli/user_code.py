"""Before loading user code (``eval -m``, ``serve``, ``validate``): the ``osmosis_ai`` 0.2
compatibility layer, unless ``--no-compat`` or a real 0.2 package is installed."""

from __future__ import annotations

from osmosis_cli.terminal.output import Output


def prepare_user_imports(out: Output, *, no_compat: bool) -> None:
    from osmosis_client.rollout import compat

    if no_compat:
        compat.without_startup_hook()  # only a real osmosis_ai, as Python alone would
        return
    decision = compat.decide()
    if decision.choice == "real":
        return
    if decision.message:
        out.warn(f"{decision.message} (--no-compat uses the installed package)")
    compat.install(on_first_use=lambda: out.note(compat.ANNOUNCEMENT))
