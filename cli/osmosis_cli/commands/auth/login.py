"""``osmosis login / logout / whoami``."""

from __future__ import annotations

import contextlib
import os
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any

import typer

from osmosis_cli import context
from osmosis_cli.context import AppState, state
from osmosis_cli.terminal.declare import Command
from osmosis_cli.terminal.errors import current_output, handle_errors

if TYPE_CHECKING:
    from datetime import datetime

    from osmosis_cli.terminal.output import Output
    from osmosis_client import Client
    from osmosis_client.platform.models import TokenGrant, User, Workspace


def register(app: typer.Typer) -> None:
    app.command("login", cls=Command)(login)
    app.command("logout", cls=Command)(logout)
    app.command("whoami", cls=Command)(whoami)


JsonOpt = Annotated[bool, typer.Option("--json", help="Print one JSON document on stdout.")]


@handle_errors
def login(
    ctx: typer.Context,
    workspace: Annotated[
        str | None,
        typer.Option("--workspace", "-w", metavar="NAME", help="Workspace to use after login."),
    ] = None,
    no_browser: Annotated[
        bool, typer.Option("--no-browser", help="Do not open a browser; just print the URL.")
    ] = False,
    with_token: Annotated[
        bool,
        typer.Option("--with-token", help="Read a token from stdin instead of a device login."),
    ] = False,
) -> None:
    """Log in with a device code (or a token on stdin) and pick a workspace."""
    from pydantic import SecretStr

    from osmosis_client.errors import InvalidInputError
    from osmosis_client.platform.settings import ENV_TOKEN

    app_state = state(ctx)
    out = current_output()
    platform = app_state.platform_url()
    if os.environ.get(ENV_TOKEN):
        out.warn(f"{ENV_TOKEN} is set: it overrides the login you are about to store")
    with app_state.client() as client:
        login = (
            _token_login(client)
            if with_token
            else _device_login(client, out, workspace, no_browser)
        )
        workspaces = client.workspaces.list()
        picked, unknown = _pick_workspace(out, workspaces, workspace, login.grant)
        app_state.store().save_login(
            platform,
            token=SecretStr(login.token),
            user=login.user,
            token_id=login.token_id,
            expires_at=login.expires_at,
            workspace=picked,
        )
    out.info(f"Logged in to {platform} as {login.user.email}")
    names = ", ".join(w.name for w in workspaces) or "none"
    if unknown:
        raise InvalidInputError(
            f"you are not a member of workspace {workspace!r} (yours: {names})",
            hint="the login was kept; run `osmosis workspace switch NAME`",
        )
    if picked is not None:
        out.info(f"Active workspace: {picked.name}")
    else:
        out.info(f"No workspace selected (yours: {names}): run `osmosis workspace switch NAME`")


@dataclass
class _Login:
    token: str
    user: User
    token_id: str | None
    expires_at: datetime | None
    grant: TokenGrant | None = None


def _token_login(client: Client) -> _Login:
    """``--with-token``: a token read from stdin, checked with the platform."""
    from osmosis_client.errors import InvalidInputError

    token = sys.stdin.readline().strip()
    if not token:
        raise InvalidInputError(
            "no token on stdin", hint="pipe it in: `osmosis login --with-token < token.txt`"
        )
    if not token.isascii() or not token.isprintable() or any(c.isspace() for c in token):
        raise InvalidInputError(
            "the token on stdin is not a token (it has spaces or non-ASCII characters)",
            hint="paste the token exactly as the platform shows it",
        )
    client.set_token(token)
    verified = client.auth.verify()
    return _Login(token, verified.user, verified.token_id, verified.expires_at)


def _device_login(client: Client, out: Output, workspace: str | None, no_browser: bool) -> _Login:
    """The device flow: show the code, open a browser on a TTY, wait for approval."""
    from osmosis_client.platform import device_flow

    authorization = device_flow.start(client, workspace=workspace)
    out.info(f"First copy your one-time code: {authorization.user_code}")
    out.info(f"Then open {authorization.url} to approve this device.")
    if out.interactive and not no_browser:
        import webbrowser

        with contextlib.suppress(Exception):
            webbrowser.open(authorization.url)
    out.info("Waiting for approval…")
    grant = device_flow.poll(client, authorization, sleep=lambda s: context.SLEEP(s))
    client.set_token(grant.token)
    return _Login(grant.token.get_secret_value(), grant.user, grant.token_id, grant.expiry(), grant)


def _pick_workspace(
    out: Output, workspaces: list[Workspace], wanted: str | None, grant: TokenGrant | None
) -> tuple[Workspace | None, bool]:
    """(workspace, unknown): --workspace, the only one, the token's, a TTY choice, or none."""
    by_name = {w.name: w for w in workspaces}
    if wanted:
        found = by_name.get(wanted) or next((w for w in workspaces if w.id == wanted), None)
        return found, found is None
    if len(workspaces) == 1:
        return workspaces[0], False
    if grant is not None and grant.workspace in by_name:
        return by_name[grant.workspace], False
    choice = out.choose("Which workspace do you want to use?", list(by_name))
    return (by_name[choice] if choice else None), False


@handle_errors
def logout(
    ctx: typer.Context,
    workspace: Annotated[
        str | None,
        typer.Option("--workspace", "-w", metavar="NAME", help="Log out of this workspace."),
    ] = None,
    all_: Annotated[
        bool, typer.Option("--all", help="Log out of every workspace on this platform.")
    ] = False,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")] = False,
) -> None:
    """Remove stored credentials (and revoke tokens no longer used)."""
    from osmosis_client.errors import InvalidInputError, NotAuthenticatedError
    from osmosis_client.platform.settings import ENV_TOKEN

    app_state = state(ctx)
    out = current_output()
    platform = app_state.platform_url()
    store = app_state.store()
    if workspace and all_:
        raise InvalidInputError("--workspace and --all exclude each other", hint="pick one")
    if all_:
        if not out.confirm(f"Log out of every workspace on {platform}?", yes=yes):
            out.info("Nothing changed.")
            return
        dropped = store.remove_all(platform)
        what = "every workspace"
    else:
        name = workspace or store.active_workspace(platform)
        if name is None:
            if store.entries(platform):
                raise InvalidInputError(
                    "no active workspace", hint="name one with --workspace, or use --all"
                )
            dropped = store.remove_all(platform)  # a login with no workspace picked
            if not dropped:
                raise NotAuthenticatedError(f"not logged in to {platform}")
            what = platform
        else:
            dropped = store.remove_workspace(platform, name)
            what = f"workspace {name}"
    _revoke(app_state, out, dropped)
    out.info(f"Logged out of {what}.")
    if os.environ.get(ENV_TOKEN):
        out.warn(f"{ENV_TOKEN} is still set in your environment")


def _revoke(app_state: AppState, out: Output, dropped: list[Any]) -> None:
    """Best effort: tokens are already gone locally; 401/404 mean already gone remotely."""
    from osmosis_client.errors import (
        AuthenticationError,
        NotFoundError,
        OsmosisError,
    )

    for token, token_id in dropped:
        if not token_id:
            continue
        client: Client = app_state.client()
        client.set_token(token)
        try:
            with client:
                client.auth.revoke(token_id)
        except (AuthenticationError, NotFoundError):
            pass
        except OsmosisError as exc:
            out.warn(
                f"could not revoke the token on the platform ({exc.message}); "
                "it was removed from this machine"
            )


@handle_errors
def whoami(ctx: typer.Context, json_output: JsonOpt = False) -> None:
    """Show the logged-in user, workspace and where the token comes from."""
    app_state = state(ctx)
    out = current_output()
    auth = app_state.resolve()
    git_repo = None
    if not auth.workspace:  # the platform then reports the workspace connected to this repo
        from pathlib import Path

        from osmosis_client.platform.git import origin_repo

        git_repo = origin_repo(Path.cwd())
    with app_state.client(auth, git_repo=git_repo) as client:
        verified = client.auth.verify()
    ws: dict[str, Any] | None = None
    if auth.entry is not None:
        ws = {"name": auth.entry.name, "id": auth.entry.id, "role": auth.entry.role}
    elif verified.workspace is not None:
        ws = {
            "name": verified.workspace.name,
            "id": verified.workspace.id,
            "role": verified.workspace.role,
        }
    elif auth.workspace:
        ws = {"name": auth.workspace, "id": None, "role": None}
    expires = verified.expires_at.isoformat() if verified.expires_at else auth.expires_at
    doc = {
        "user": verified.user.model_dump(mode="json"),
        "workspace": ws,
        "platform_url": app_state.platform_url(),
        "token_source": auth.source,
        "expires_at": expires,
    }
    if out.json_mode:
        out.emit_json(doc)
        return
    name = f" ({verified.user.name})" if verified.user.name else ""
    out.print(f"Logged in to {doc['platform_url']} as {verified.user.email}{name}")
    if ws:
        role = f" as {ws['role']}" if ws.get("role") else ""
        out.print(f"Workspace: {ws['name']}{role}")
    else:
        out.print("Workspace: none selected (run `osmosis workspace switch NAME`)")
    out.print(f"Token from: {auth.source}" + (f", expires {expires}" if expires else ""))
