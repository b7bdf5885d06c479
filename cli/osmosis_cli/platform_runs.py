"""The commands every kind of platform run has — ``list``, ``info``, ``logs``, ``stop`` —
made by one factory for training and benchmark runs: the words differ (:class:`RunKind`),
the behaviour is one (``info`` is each kind's own: what a run of it shows differs).
``stop`` looks the run up before asking (``NOT_FOUND`` before any question, nothing
sent) and says the state the platform reports afterwards.

No ``from __future__ import annotations`` here: typer reads the commands' annotations,
which name this call's ``kind``; they must be objects, not strings."""

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any

import typer

from osmosis_cli.context import result_scope, state
from osmosis_cli.terminal.commands import runnable
from osmosis_cli.terminal.declare import Command, YesOpt, options_command
from osmosis_cli.terminal.errors import command, current_output, handle_errors
from osmosis_cli.terminal.log_lines import CursorOpt, FollowOpt, LogLimitOpt
from osmosis_cli.terminal.pages import Paging, show_list

if TYPE_CHECKING:
    from osmosis_client import Client


@dataclass(frozen=True)
class RunKind:
    """One kind of platform run, as its commands speak of it."""

    #: "training run" — in questions, messages and help
    noun: str
    #: the command's words before the subcommand: ("train",), ("benchmark", "runs")
    words: tuple[str, ...]
    #: the ``--json`` operation's prefix: "train" → "train.stop"
    operation: str
    #: the client's resource, a page's records and (singular) a detail's run:
    #: ``client.training_runs``, ``page.training_runs``, ``detail.training_run``
    resources: str

    @property
    def title(self) -> str:
        return self.noun[0].upper() + self.noun[1:]

    def command(self, *tail: str) -> str:
        return runnable("osmosis", *self.words, *tail)

    def resource(self, client: "Client") -> Any:
        return getattr(client, self.resources)

    def records(self, page: Any) -> list[Any]:
        return list(getattr(page, self.resources))

    def run_of(self, detail: Any) -> Any:
        return getattr(detail, self.resources.removesuffix("s"))


def name_arg(kind: RunKind) -> Any:
    """The ``NAME`` argument of a run command."""
    return typer.Argument(metavar="NAME", help=f"A {kind.noun}'s name or id.")


@dataclass(frozen=True)
class ListView:
    """What ``list`` shows of a kind: the columns, the two renderings of a run (the
    ``--json`` item and the table row) and how to make the first one."""

    columns: list[str]
    item: Callable[[Any], dict[str, Any]]
    row: Callable[[Any], list[str]]
    submit_hint: str


def add_run_commands(
    app: typer.Typer, kind: RunKind, view: ListView, info: Callable[..., None]
) -> None:
    """A kind's ``list``, its own ``info`` (what a run of it shows differs), ``logs`` and
    ``stop``, in the order its group's help lists them."""
    add_list(app, kind, view)
    command(app, "info")(info)
    add_logs(app, kind)
    add_stop(app, kind)


def add_list(app: typer.Typer, kind: RunKind, view: ListView) -> None:
    """``list``: the workspace's runs of ``kind``, newest first (``--limit``/``--all``)."""

    def list_(ctx: typer.Context, opts: Paging) -> None:
        client, workspace = state(ctx).scoped_client()
        with client:
            found = opts.collect(kind.resource(client).pages, kind.records)
        if show_list(
            current_output(),
            found,
            items=[view.item(r) for r in found.items],
            rows=[view.row(r) for r in found.items],
            columns=view.columns,
            keep=("Name",),
            extra=result_scope(workspace),
            empty=f"No {kind.noun}s yet: {view.submit_hint}.",
        ):
            current_output().info(f"Use {kind.command('info', '<name>')} for details.")

    list_.__doc__ = f"The workspace's {kind.noun}s, newest first."
    app.command("list", cls=Command)(options_command(Paging, handle_errors(list_)))


def add_logs(app: typer.Typer, kind: RunKind) -> None:
    """``logs NAME``: one page (the newest first; ``--cursor`` for older ones), or
    ``--follow``: new entries as they come until the run ends."""

    def logs(
        ctx: typer.Context,
        name: Annotated[str, name_arg(kind)],
        limit: LogLimitOpt = 50,
        cursor: CursorOpt = None,
        follow: FollowOpt = False,
    ) -> None:
        from osmosis_cli.terminal.log_lines import run_logs

        def tail(c: "Client", show: Callable[[Any], None]) -> Any:
            return kind.run_of(kind.resource(c).follow_logs(name, show, limit))

        run_logs(
            current_output(),
            state(ctx).scoped_client()[0],
            name=name,
            cursor=cursor,
            what=kind.title,
            command=kind.command("logs", name),
            fetch=lambda c: kind.resource(c).logs(name, limit, cursor),
            follow=tail if follow else None,
        )

    logs.__doc__ = (
        f"One page of a {kind.noun}'s logs (the newest first; --cursor for older ones), "
        "or --follow: new entries as they come until the run ends."
    )
    command(app, "logs")(logs)


def add_stop(app: typer.Typer, kind: RunKind) -> None:
    """``stop NAME``: looked up first, asked, stopped; says the state it is in after."""

    def stop(
        ctx: typer.Context,
        name: Annotated[str, name_arg(kind)],
        yes: YesOpt = False,
    ) -> None:
        out = current_output()
        operation = f"{kind.operation}.stop"
        client, workspace = state(ctx).scoped_client()
        with client:
            run = kind.run_of(kind.resource(client).get(name))  # NOT_FOUND before asking
            if not out.confirm(f'Stop {kind.noun} "{run.name}"?', yes=yes):
                out.cancelled(operation)
                return
            after = kind.run_of(kind.resource(client).stop(str(run.id)))
        message = f'{kind.title} "{run.name}" stopped.'
        if after.status != "stopped":
            message = f'{kind.title} "{run.name}": stop requested; it is {after.status}.'
        resource = {"name": run.name, "id": run.id, "status": after.status}
        resource.update(result_scope(workspace))
        if not out.operation_result(operation, resource=resource, message=message):
            out.info(message)

    stop.__doc__ = f"Stop a {kind.noun} (looked up first; says the state the platform reports)."
    command(app, "stop")(stop)


__all__ = [
    "ListView",
    "RunKind",
    "add_list",
    "add_logs",
    "add_run_commands",
    "add_stop",
    "name_arg",
]
