"""Command groups that import a command only when it runs or shows its own help.

``osmosis --help`` and ``osmosis eval --help`` list every command from a table of
one-line summaries; the module behind a command is imported (and its typer command
built) the first time that command is looked up. The summary in the table is the one
the command's group lists — it is set on the loaded command too, so a group's list
reads the same whether its commands were loaded or not.

Start-up stays cheap: only the standard library here; typer is imported on a load.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, MutableMapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Entry:
    """One command of a group: its name, ``module:function`` that registers it (with the
    commands next to it) on a typer app — or ``module``, whose attribute of the
    command's name is the command —, and the line its group lists."""

    name: str
    target: str
    summary: str
    #: a group's own commands, looked up on demand too
    commands: tuple[Entry, ...] = ()
    #: the heading it is listed under in its group's help ("" : "Commands")
    section: str = ""


class LazyCommands(MutableMapping[str, Any]):
    """A group's commands by name, in the table's order; a command is built on first
    look-up (every command its target registers is built then, once)."""

    def __init__(self, entries: list[Entry], loaded: dict[str, Any] | None = None) -> None:
        self._entries = {entry.name: entry for entry in entries}
        self._loaded: dict[str, Any] = dict(loaded or {})
        self._built: dict[str, dict[str, Any]] = {}

    def summary(self, name: str) -> str | None:
        entry = self._entries.get(name)
        return entry.summary if entry is not None else None

    def section(self, name: str) -> str:
        entry = self._entries.get(name)
        return entry.section if entry is not None else ""

    def __getitem__(self, name: str) -> Any:
        if name in self._loaded:
            return self._loaded[name]
        entry = self._entries[name]  # KeyError: no such command
        command = self._build(entry.target)[name]
        command.short_help = entry.summary
        if entry.commands:
            make_lazy(command, list(entry.commands))
        self._loaded[name] = command
        return command

    def _build(self, target: str) -> dict[str, Any]:
        if target not in self._built:
            import typer

            module, _, function = target.partition(":")
            app = typer.Typer(rich_markup_mode=None)  # a container: commands keep their class
            found = importlib.import_module(module)
            if function:
                getattr(found, function)(app)
            else:
                names = [e.name for e in self._entries.values() if e.target == target]
                _add_named(app, found, names)
            self._built[target] = dict(typer.main.get_group(app).commands)
        return self._built[target]

    def __setitem__(self, name: str, command: Any) -> None:
        self._loaded[name] = command

    def __delitem__(self, name: str) -> None:
        self._entries.pop(name, None)
        self._loaded.pop(name, None)

    def __iter__(self) -> Iterator[str]:
        yield from self._entries
        yield from (name for name in self._loaded if name not in self._entries)

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def __contains__(self, name: object) -> bool:
        return name in self._entries or name in self._loaded


def _add_named(app: Any, module: Any, names: list[str]) -> None:
    """A module's commands by their names (``list`` is ``list_``: a builtin's name);
    the module's ``__all__`` names its commands and nothing else."""
    from osmosis_cli.terminal.declare import Command

    for name in names:
        callback = getattr(module, name, None) or getattr(module, name + "_")
        app.command(name, cls=Command)(callback)


def table(text: str, **groups: list[Entry]) -> list[Entry]:
    """Entries from ``[module:function]`` lines, each followed by the ``name: summary``
    lines of the commands that function registers (a ``[module]`` line: the module's
    attributes of those names are the commands themselves); ``# Heading`` lines start a section
    of the group's help; ``groups`` names a group's own commands (``eval=EVAL``)."""
    entries: list[Entry] = []
    target = section = ""
    for line in text.strip().splitlines():
        if line.startswith("["):
            target = line.strip("[]")
            continue
        if line.startswith("# "):
            section = line[2:].strip()
            continue
        name, summary = line.split(": ", 1)
        entries.append(Entry(name, target, summary, tuple(groups.get(name, ())), section))
    return entries


def make_lazy(group: Any, entries: list[Entry]) -> Any:
    """``group`` (a built typer group) with ``entries`` looked up on demand."""
    for entry in entries:
        if entry.name in group.commands:  # built with the group: it lists the same line
            group.commands[entry.name].short_help = entry.summary
    group.commands = LazyCommands(entries, loaded=group.commands)
    return group
