"""Our typer classes: readable usage lines, and the ``eval`` group's seed form.

Start-up stays cheap: only typer's core is imported here.
"""

from __future__ import annotations

from typing import Any

from typer.core import TyperArgument, TyperCommand, TyperGroup

HELP_FLAGS = ("-h", "--help")
#: the hidden name the seed form (``osmosis eval -m … -d …``) is registered under
SEED_COMMAND = "seed"


def _plain(piece: str) -> str:
    # typer marks required arguments as {NAME} in usage lines; people expect NAME
    if piece.startswith("{") and piece.endswith("}"):
        return piece[1:-1]
    return piece.replace("{", "").replace("}", "")


def _cheap_help(option: Any) -> Any:
    # typer's help flag defaults to None, and any non-bool value is coerced through
    # pydantic: a False default keeps `osmosis eval --help` from importing it
    if option is not None and option.default is None:
        option.default = False
    return option


def _no_type(ctx: Any) -> None:
    return None


class Command(TyperCommand):
    """A command whose usage line reads ``osmosis eval run [OPTIONS] CONFIG`` and whose
    arguments are listed by their metavar alone (no ``<path>`` type labels)."""

    def collect_usage_pieces(self, ctx: Any) -> list[str]:
        return [_plain(p) for p in super().collect_usage_pieces(ctx)]

    def get_params(self, ctx: Any) -> list[Any]:
        params = super().get_params(ctx)
        for param in params:
            if isinstance(param, TyperArgument) and param.metavar:
                param.display_type_rich = _no_type  # type: ignore[method-assign]
        return params

    def get_help_option(self, ctx: Any) -> Any:
        return _cheap_help(super().get_help_option(ctx))


class Group(TyperGroup):
    def collect_usage_pieces(self, ctx: Any) -> list[str]:
        return [_plain(p) for p in super().collect_usage_pieces(ctx)]

    def get_help_option(self, ctx: Any) -> Any:
        return _cheap_help(super().get_help_option(ctx))


class EvalGroup(Group):
    """``osmosis eval``: subcommands, plus the seed form ``osmosis eval -m … -d …``.

    Arguments that start with an option (other than ``--help``) are the seed form:
    they go, unchanged, to its own command — one parameter list, parsed once.
    """

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        if args and args[0].startswith("-") and args[0] not in HELP_FLAGS:
            args = [SEED_COMMAND, *args]
        return super().parse_args(ctx, args)
