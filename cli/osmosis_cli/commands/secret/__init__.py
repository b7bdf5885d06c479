"""``osmosis secret list / set / delete``: values stored on the platform for a config's
``[secrets]`` (published-cli-0.3.8.md §4.1). A value comes from ``--env VAR``, from
standard input when it is piped, or from a hidden prompt — never from argv — and never
appears in output, errors or logs."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any

import typer

from osmosis_cli.context import state
from osmosis_cli.terminal.commands import runnable
from osmosis_cli.terminal.declare import Command, Group, YesOpt, flag, option, options_command
from osmosis_cli.terminal.errors import command, current_output, handle_errors
from osmosis_cli.terminal.pages import Paging, show_list
from osmosis_cli.terminal.times import when
from osmosis_client.errors import InvalidInputError

if TYPE_CHECKING:
    from osmosis_cli.terminal.output import Output
    from osmosis_client.platform.resources.secrets import Secret, SecretPage

app = typer.Typer(
    cls=Group,
    help="Secrets stored on the platform for your configs' [secrets].",
    no_args_is_help=True,
)

SCOPE_HELP = "personal (yours; overrides a workspace secret of the same name) or workspace."


def _scope(value: str, allowed: tuple[str, ...]) -> Any:
    if value not in allowed:
        raise InvalidInputError(
            f"unknown --scope {value!r}", hint=f"use one of: {', '.join(allowed)}", code="USAGE"
        )
    return value


@dataclass(kw_only=True)
class ListOptions(Paging):
    scope: str = flag("--scope all|personal|workspace", "Which secrets.", default="all")


@handle_errors
def list_(ctx: typer.Context, opts: ListOptions) -> None:
    """The secrets you can use: names and scopes (never values)."""
    wanted = _scope(opts.scope, ("all", "personal", "workspace"))
    client, _ = state(ctx).scoped_client()
    urls: list[str] = []

    def secrets_of(page: SecretPage) -> list[Secret]:
        urls.extend([page.platform_url] if page.platform_url else [])
        return page.environment_secrets

    with client:
        found = opts.collect(lambda size: client.secrets.pages(wanted, size), secrets_of)
    rows = [
        [s.name or "", s.scope or "", when(s.updated_at), s.updater_name or ""] for s in found.items
    ]
    show_list(
        current_output(),
        found,
        items=[s.to_json() for s in found.items],
        rows=rows,
        columns=["name", "scope", "updated", "by"],
        keep=("name",),
        extra={"platform_url": urls[0]} if urls else None,
        empty="No secrets yet: `osmosis secret set NAME`",
    )


app.command("list", cls=Command)(options_command(ListOptions, list_))


@command(app, "set")
def set_(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(metavar="NAME", help="e.g. OPENAI_API_KEY")],
    scope: Annotated[str, option("--scope personal|workspace", SCOPE_HELP)] = ("personal"),
    env: Annotated[
        str | None, option("--env VAR", "Take the value from this environment variable.")
    ] = None,
) -> None:
    """Store a secret (or replace its value). The value comes from --env VAR, from
    standard input when piped, or from a hidden prompt — never from the command line."""
    from osmosis_client.platform.resources.secrets import check_name

    out = current_output()
    check_name(name)
    where = _scope(scope, ("personal", "workspace"))
    value = _value(out, name, env)
    if value is None:
        out.cancelled("secret.set")
        return
    client, _ = state(ctx).scoped_client()
    with client:
        record = client.secrets.set(name, value, where)
    del value
    resource: dict[str, Any] = record.to_json() if record else {"name": name, "scope": where}
    resource["scope"] = where
    url = record.platform_url if record else None
    message = f'Secret "{name}" saved in {where} scope.'
    steps = [{"action": "view_secrets", "url": url}] if url else []
    if not out.operation_result(
        "secret.set",
        resource=resource,
        message=message,
        next_steps=steps,
        extra={"platform_url": url} if url else None,
    ):
        out.info(message)


def _value(out: Output, name: str, env: str | None) -> str | None:
    """The value from ``--env``, piped stdin or a hidden prompt (None: prompt cancelled)."""
    if env is not None:
        value = os.environ.get(env)
        if not value:
            raise InvalidInputError(
                f"environment variable {env} is not set or empty",
                hint=f"export {env}=… first, or pipe the value on standard input",
                code="VALIDATION",
            )
        return value
    if not out.stdin_is_tty:
        value = _piped_text(out)
        value = value[:-1] if value.endswith("\n") else value
        value = value[:-1] if value.endswith("\r") else value
        if value:
            return value
    elif out.interactive:
        import getpass

        try:
            value = getpass.getpass(f"Value for {name} (hidden): ")
        except (EOFError, KeyboardInterrupt):
            return None
        if value:
            return value
        raise InvalidInputError("the value is empty; nothing saved", code="VALIDATION")
    raise InvalidInputError(
        "Secret value required.",
        hint="pass --env VAR, pipe it on standard input, or run at a terminal to be prompted",
        code="INTERACTIVE_REQUIRED",
        data={"flags": ["--env"]},
    )


def _piped_text(out: Output) -> str:
    """Standard input as UTF-8 text, strictly (a secret is text: bytes that are not would
    be mangled, or fail deep in the request)."""
    raw = getattr(out.stdin, "buffer", None)
    try:
        text: str = raw.read().decode("utf-8") if raw is not None else out.stdin.read()
        text.encode("utf-8")  # no lone surrogates (a stream decoded with surrogateescape)
    except UnicodeError as exc:
        raise InvalidInputError(
            "the value on standard input is not UTF-8 text; nothing saved",
            hint="pipe the secret as UTF-8 text (base64-encode binary values)",
            code="VALIDATION",
        ) from exc
    return text


@command(app, "delete")
def delete(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(metavar="NAME")],
    scope: Annotated[str, option("--scope personal|workspace", SCOPE_HELP)] = ("personal"),
    yes: YesOpt = False,
) -> None:
    """Delete a stored secret (asks first; a name in the other scope is pointed out)."""
    from osmosis_client.errors import NotFoundError, OsmosisError
    from osmosis_client.platform.resources.secrets import check_name

    out = current_output()
    check_name(name)
    where = _scope(scope, ("personal", "workspace"))
    other = "workspace" if where == "personal" else "personal"
    client, _ = state(ctx).scoped_client()
    with client:
        try:
            stored = {(s.name, s.scope) for s in client.secrets.all("all")}
        except OsmosisError:
            stored = None  # the lookup failed: the platform decides
        if stored is not None and (name, where) not in stored:
            hint = (
                "Did you mean: " + runnable("osmosis", "secret", "delete", name, "--scope", other)
                if (name, other) in stored
                else "see `osmosis secret list`"
            )
            raise NotFoundError(f'no {where} secret named "{name}"', status_code=404, hint=hint)
        if not out.confirm(f'Delete {where} secret "{name}"? This cannot be undone.', yes=yes):
            out.cancelled("secret.delete")
            return
        client.secrets.delete(name, where)
    message = f'Secret "{name}" deleted from {where} scope.'
    if not out.operation_result(
        "secret.delete", resource={"name": name, "scope": where}, message=message
    ):
        out.info(message)


def register(parent: typer.Typer) -> None:
    parent.add_typer(app, name="secret")
