"""``osmosis login``: a device login (or ``--with-token``), stored per workspace."""

from __future__ import annotations

import contextlib
import os
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING

import typer

from osmosis_cli import context
from osmosis_cli.context import AppState, state
from osmosis_cli.terminal.declare import flag, options_command
from osmosis_cli.terminal.errors import current_output, handle_errors

if TYPE_CHECKING:
    from datetime import datetime

    from osmosis_cli.terminal.output import Output
    from osmosis_client import Client
    from osmosis_client.platform.models import TokenGrant, User, Workspace


@dataclass(kw_only=True)
class LoginOptions:
    workspace: str | None = flag("--workspace -w NAME", "Workspace to use after login.")
    no_browser: bool = flag(
        "--no-browser", "Do not open a browser; just print the URL.", default=False
    )
    force: bool = flag(
        "--force -f",
        "Log in again even when logged in (0.2's flag; always so here).",
        default=False,
    )
    with_token: bool = flag(
        "--with-token", "Read a token from stdin instead of a device login.", default=False
    )
    token: str | None = flag(
        "--token TOKEN",
        "A token on the command line (visible to `ps` and your shell history: "
        "prefer --with-token < FILE; `--token -` reads stdin).",
    )


@handle_errors
def run_login(ctx: typer.Context, opts: LoginOptions) -> None:
    """Log in with a device code (or a token on stdin) and pick a workspace."""
    from pydantic import SecretStr

    from osmosis_client.errors import InvalidInputError

    app_state = state(ctx)
    out = current_output()
    platform = app_state.platform_url()
    _warn_about_tokens(out, opts.token)
    with app_state.client() as client:
        if opts.token is not None or opts.with_token:
            login = _token_login(client, None if opts.token in (None, "-") else opts.token)
        else:
            login = _device_login(client, out, opts.workspace, opts.no_browser)
        workspaces = client.workspaces.list()
        picked, unknown = _pick_workspace(out, workspaces, opts.workspace, login.grant)
        app_state.store().save_login(
            platform,
            token=SecretStr(login.token),
            user=login.user,
            token_id=login.token_id,
            expires_at=login.expires_at,
            workspace=picked,
        )
    if not out.machine:
        out.info(f"Logged in to {platform} as {login.user.email}")
    names = ", ".join(w.name for w in workspaces) or "none"
    if unknown:
        raise InvalidInputError(
            f"you are not a member of workspace {opts.workspace!r} (yours: {names})",
            hint="the login was kept; run `osmosis workspace switch NAME`",
        )
    if _report(out, app_state, login, picked):
        return
    if picked is not None:
        out.info(f"Active workspace: {picked.name}")
    else:
        out.info(f"No workspace selected (yours: {names}): run `osmosis workspace switch NAME`")


login = options_command(LoginOptions, run_login)


def _warn_about_tokens(out: Output, token: str | None) -> None:
    from osmosis_client.platform.settings import ENV_TOKEN

    if os.environ.get(ENV_TOKEN):
        out.warn(f"{ENV_TOKEN} is set: it overrides the login you are about to store")
    if token is not None and token != "-":
        out.warn(
            "a token on the command line is visible to other users (ps) and kept in your "
            "shell history; next time use `osmosis auth login --with-token < FILE`",
            code="TOKEN_ON_COMMAND_LINE",
        )


def _report(out: Output, app_state: AppState, login: _Login, picked: Workspace | None) -> bool:
    """The published ``auth.login`` result (``--json`` / ``--plain``); False for humans."""
    platform = app_state.platform_url()
    resource = {
        "email": login.user.email,
        "name": login.user.name,
        "expires_at": login.expires_at.isoformat() if login.expires_at else None,
        "platform_url": platform,
        "workspace": None if picked is None else {"id": picked.id, "name": picked.name},
        "source": "device" if login.grant is not None else "token",
        "verified": True,
        "saved": True,
        "token_store": app_state.resolve().source,
    }
    return out.operation_result(
        "auth.login",
        resource=resource,
        message=f"Logged in to {platform} as {login.user.email}",
        next_steps=[{"action": "doctor", "description": "Check this workspace: osmosis doctor"}],
    )


@dataclass
class _Login:
    token: str
    user: User
    token_id: str | None
    expires_at: datetime | None
    grant: TokenGrant | None = None


def _token_login(client: Client, given: str | None) -> _Login:
    """``--with-token`` (stdin) or ``--token``: a token checked with the platform."""
    from osmosis_client.errors import InvalidInputError

    token = (sys.stdin.readline() if given is None else given).strip()
    if not token:
        raise InvalidInputError(
            "no token on stdin", hint="pipe it in: `osmosis login --with-token < token.txt`"
        )
    if not token.isascii() or not token.isprintable() or any(c.isspace() for c in token):
        raise InvalidInputError(
            "that is not a token (it has spaces or non-ASCII characters)",
            hint="paste the token exactly as the platform shows it",
        )
    client.set_token(token)
    verified = client.auth.verify()
    return _Login(token, verified.user, verified.token_id, verified.expires_at)


def _device_login(client: Client, out: Output, workspace: str | None, no_browser: bool) -> _Login:
    """The device flow: show the code, open a browser on a TTY, wait for approval."""
    from osmosis_cli.terminal import clipboard
    from osmosis_client.platform.login import device_flow

    authorization = device_flow.start(client, workspace=workspace)
    if out.json_mode:  # stderr stays JSON lines: the code and URL as one of them
        out.warn(
            f"Open {authorization.url} and enter the code {authorization.user_code}",
            code="DEVICE_AUTHORIZATION",
        )
    copied = out.interactive and clipboard.copy(authorization.user_code)
    if copied:
        out.info(f"Your one-time code (copied to the clipboard): {authorization.user_code}")
    else:
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
