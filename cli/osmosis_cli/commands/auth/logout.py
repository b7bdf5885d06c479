"""``osmosis logout``: forget a workspace's login (or all), revoking tokens no entry uses."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Annotated, Any

import typer

from osmosis_cli.context import AppState, state
from osmosis_cli.terminal.errors import current_output, handle_errors

if TYPE_CHECKING:
    from osmosis_cli.terminal.output import Output
    from osmosis_client import Client


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
