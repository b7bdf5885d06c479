"""Before loading user code (``eval -m``, ``serve``, ``validate``): the ``osmosis_ai`` 0.2
compatibility layer, unless ``--no-compat`` or a real 0.2 package is installed."""

from __future__ import annotations

from pathlib import Path

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


def check_agent_source(module: str | None, mcp: Path | None) -> None:
    """Exactly one of ``-m MODULE:ATTR`` and ``--mcp DIR`` (0.2's rule and words)."""
    from osmosis_client.errors import InvalidInputError

    if module and mcp is not None:
        raise InvalidInputError("--module and --mcp are mutually exclusive.", code="USAGE")
    if not module and mcp is None:
        raise InvalidInputError(
            "Either --module (-m) or --mcp is required.",
            hint="give -m MODULE:ATTR (a RolloutAgentLoop) or --mcp DIR (a FastMCP tool server)",
            code="USAGE",
        )
