"""Our typer classes: readable usage lines, and the ``eval`` group's seed form.

Start-up stays cheap: only typer's core is imported here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

from typer import Option
from typer.core import TyperArgument, TyperCommand, TyperGroup

HELP_FLAGS = ("-h", "--help")
#: the hidden name the seed form (``osmosis eval -m … -d …``) is registered under
SEED_COMMAND = "seed"

#: the ``--json`` flag of the commands that print one JSON document
JsonOpt = Annotated[bool, Option("--json", help="Print one JSON document on stdout.")]


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
        pieces = [self.options_metavar] if self.options_metavar else []
        for param in self.get_params(ctx):
            if not getattr(param, "hidden", False):  # a hidden argument stays out of usage
                pieces.extend(param.get_usage_pieces(ctx))
        return [_plain(p) for p in pieces]

    def get_params(self, ctx: Any) -> list[Any]:
        params = super().get_params(ctx)
        for param in params:
            if isinstance(param, TyperArgument) and param.metavar:
                param.display_type_rich = _no_type  # type: ignore[method-assign]
        return params

    def get_help_option(self, ctx: Any) -> Any:
        return _cheap_help(super().get_help_option(ctx))

    def format_options(self, ctx: Any, formatter: Any) -> None:
        """Arguments, then options under the headings their options object declares
        (``PANELS``: field name → heading; the rest under "Options"), in that order."""
        panels: dict[str, str] = getattr(self.callback, "__panels__", None) or {}
        sections: dict[str, list[tuple[str, str]]] = {"Arguments": []}
        sections.update({heading: [] for heading in panels.values()})
        sections["Options"] = []
        for param in self.get_params(ctx):
            record = param.get_help_record(ctx)
            if record is None:
                continue
            if param.param_type_name == "argument":
                sections["Arguments"].append(record)
            else:
                sections[panels.get(param.name or "", "Options")].append(record)
        for heading, records in sections.items():
            if records:
                with formatter.section(heading):
                    formatter.write_dl(records)

    def format_epilog(self, ctx: Any, formatter: Any) -> None:
        super().format_epilog(ctx, formatter)
        formatter.write_paragraph()
        with formatter.indentation():
            formatter.write_text(OUTPUT_NOTE)


#: the global flags every command takes, said on every command's help
OUTPUT_NOTE = (
    "For programs: --json (one JSON document on stdout) or --plain (plain lines), anywhere "
    "on the line. More detail: -v (before the command)."
)


class Group(TyperGroup):
    def collect_usage_pieces(self, ctx: Any) -> list[str]:
        return [_plain(p) for p in super().collect_usage_pieces(ctx)]

    def list_commands(self, ctx: Any) -> list[str]:
        return list(self.commands)  # names only: a lazy group loads nothing to list

    def format_commands(self, ctx: Any, formatter: Any) -> None:
        # a lazy group (terminal/lazy.py) lists its table's summaries without loading,
        # under its table's headings (in their order)
        summary = getattr(self.commands, "summary", lambda name: None)
        section_of = getattr(self.commands, "section", lambda name: "")
        rows: list[tuple[str, str, Any]] = []
        for name in self.list_commands(ctx):
            line = summary(name)
            command = None if line is not None else self.get_command(ctx, name)
            if line is None and (command is None or command.hidden):
                continue
            rows.append((section_of(name) or "Commands", name, line or command))
        if not rows:
            return
        limit = formatter.width - 6 - max(len(name) for _, name, _ in rows)
        sections: dict[str, list[tuple[str, str]]] = {}
        for section, name, what in rows:
            text = what if isinstance(what, str) else what.get_short_help_str(limit)
            sections.setdefault(section, []).append((name, text))
        for section, lines in sections.items():
            with formatter.section(section):
                formatter.write_dl(lines)

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


# ------------------------------------------------------------------ options objects


def options_command(options: type[Any], run: Callable[[Any, Any], Any]) -> Callable[..., Any]:
    """A typer command whose parameters are the fields of the dataclass ``options``
    (each declared with :func:`flag` / :func:`arg`, or annotated with a typer Option or
    Argument) and which calls ``run(ctx, opts)``.

    A command is then an options object (parsed once, testable alone) and a short run
    function, as gh does; a flag is added by declaring one field.
    """
    import dataclasses
    import inspect
    import typing

    import typer

    hints = typing.get_type_hints(options, include_extras=True)
    fields = dataclasses.fields(options)
    parameters = [
        inspect.Parameter("ctx", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=typer.Context)
    ]
    arguments: list[inspect.Parameter] = []
    flags: list[inspect.Parameter] = []
    for field in fields:
        if field.default is not dataclasses.MISSING:
            default: Any = field.default
        elif field.default_factory is not dataclasses.MISSING:
            default = field.default_factory()
        else:
            default = inspect.Parameter.empty
        annotation = hints[field.name]
        if PARAMETER in field.metadata:  # declared with flag() / arg()
            annotation = Annotated[annotation, field.metadata[PARAMETER]]
        parameter = inspect.Parameter(
            field.name,
            inspect.Parameter.KEYWORD_ONLY,
            default=default,
            annotation=annotation,
        )
        metadata = _metadata(annotation)
        is_argument = any(isinstance(m, typer.models.ArgumentInfo) for m in metadata)
        (arguments if is_argument else flags).append(parameter)
    parameters += arguments + flags

    def command(ctx: Any, **values: Any) -> Any:
        return run(ctx, options(**values))

    command.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
    command.__annotations__ = {p.name: p.annotation for p in parameters}
    command.__name__ = getattr(run, "__name__", "command")
    command.__doc__ = run.__doc__
    command.__module__ = getattr(run, "__module__", __name__)
    command.__panels__ = getattr(options, "PANELS", {})  # type: ignore[attr-defined]
    return command


def _metadata(annotation: Any) -> tuple[Any, ...]:
    return tuple(getattr(annotation, "__metadata__", ()))


#: the field metadata key that holds a field's typer Option or Argument
PARAMETER = "osmosis_cli.parameter"


def option(usage: str, help: str | None = None, **settings: Any) -> Any:
    """A typer option declared as its usage reads: ``option("-o --output PATH", "Results
    file.")`` — the names (the words that start with ``-``), then the metavar — and its
    ``help``; typer's other settings (``min``, ``hidden`` …) as keywords."""
    words = usage.split(" ")
    names = [w for w in words if w.startswith("-")]
    metavar = " ".join(words[len(names) :]) or None
    return Option(*names, metavar=metavar, help=help, **settings)


def flag(usage: str, help: str | None = None, *, default: Any = None, **settings: Any) -> Any:
    """A field of an options object that is a command-line option, declared once: its
    :func:`option` kept in the field's metadata, which :func:`options_command` turns
    into the flag."""
    import dataclasses

    metadata = {PARAMETER: option(usage, help, **settings)}
    if isinstance(default, list):  # a repeatable option's default: one list per object
        return dataclasses.field(default_factory=list(default).copy, metadata=metadata)
    return dataclasses.field(default=default, metadata=metadata)


def arg(*, default: Any = ..., **argument: Any) -> Any:
    """A field that is a positional argument (required unless ``default`` is given)."""
    import dataclasses

    from typer import Argument

    metadata = {PARAMETER: Argument(**argument)}
    if default is ...:
        return dataclasses.field(metadata=metadata)
    return dataclasses.field(default=default, metadata=metadata)


#: ``-y/--yes``: answer yes to the one confirmation a command asks (every command that asks)
YesOpt = Annotated[bool, Option("--yes", "-y", help="Do not ask for confirmation.")]
