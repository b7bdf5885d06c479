"""``osmosis eval``: hosted runs (submit, list, info, logs, stop), local runs (run, the
seed form), suites, the results commands (compare, rescore, report) and ``init``.

The group's commands are registered by ``hosted``, ``local`` and ``results``, each
imported only when one of its commands is looked up (the table is in
:mod:`osmosis_cli.main`)."""

from __future__ import annotations

import typer

from osmosis_cli.terminal.declare import EvalGroup

eval_app = typer.Typer(
    cls=EvalGroup,
    no_args_is_help=True,
    help=(
        "Run evals locally or on the platform, and look at their results.\n\n"
        "Seed form: osmosis eval -m MODULE:ATTR -d DATASET --model M --eval-fn MODULE:FN "
        "[OPTIONS] (its options: `osmosis eval seed --help`)."
    ),
)


def register(root: typer.Typer) -> None:
    root.add_typer(eval_app, name="eval")


__all__ = ["eval_app", "register"]
