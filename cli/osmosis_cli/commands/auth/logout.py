"""``osmosis logout``: forget a workspace's login (or all), revoking tokens no entry uses."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Annotated, Any

import typer

from osmosis_cli.context import AppState, state
from osmosis_cli.terminal.declare import YesOpt, option
from osmosis_cli.terminal.errors import current_output, handle_errors

if TYPE_CHECKING:
    from osmosis_cli.terminal.output import Output
    from osmosis_client import Client


@handle_errors
def logout(
    ctx: typer.Context,
    workspace: Annotated[
        str | None, option("--workspace -w NAME", "Log out of this workspace.")
    ] = None,
    all_: Annotated[bool, option("--all", "Log out of every workspace on this platform.")] = False,
    yes: YesOpt = False,
) -> None:
    """Remove stored credentials (and revoke tokens no longer used)."""
    from osmosis_client.errors import InvalidInputError
    from osmosis_client.platform.settings import ENV_TOKEN

    app_state = state(ctx)
    out = current_output()
    platform = app_state.platform_url()
    store = app_state.store()
    env_token = bool(os.environ.get(ENV_TOKEN))
    if workspace and all_:
        raise InvalidInputError("--workspace and --all exclude each other", hint="pick one")
    if all_:
        if not out.confirm(f"Log out of every workspace on {platform}?", yes=yes):
            _done(out, platform, "cancelled", "Nothing changed.", env_token, revoked=False)
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
            what = platform
        else:
            dropped = store.remove_workspace(platform, name)
            what = f"workspace {name}"
    if not dropped and not all_ and what == platform:
        message = (
            f"{ENV_TOKEN} is set: run `unset {ENV_TOKEN}` to log out"
            if env_token
            else (f"Not logged in to {platform}.")
        )
        _done(out, platform, "noop", message, env_token, revoked=False)
        return
    revoked = _revoke(app_state, out, dropped)
    _done(out, platform, "success", f"Logged out of {what}.", env_token, revoked=revoked)
    if env_token:
        out.warn(f"{ENV_TOKEN} is still set in your environment")


def _done(
    out: Output, platform: str, status: str, message: str, env_token: bool, *, revoked: bool
) -> None:
    from osmosis_client.platform.settings import ENV_TOKEN

    resource = {
        "logged_in": False if status == "success" else None,
        "revoked": revoked,
        "env_token_set": env_token,
        "persistent_login": False if status == "success" else None,
        "effective_source": "environment" if env_token else None,
        "platform_url": platform,
    }
    steps = [{"action": "unset_env", "name": ENV_TOKEN}] if env_token else []
    if not out.operation_result(
        "auth.logout", status=status, resource=resource, message=message, next_steps=steps
    ):
        out.info(message)


def _revoke(app_state: AppState, out: Output, dropped: list[Any]) -> bool:
    """Best effort: tokens are already gone locally; 401/404 mean already gone remotely.
    True when tokens were revoked there and none failed."""
    from osmosis_client.errors import (
        AuthenticationError,
        NotFoundError,
        OsmosisError,
    )

    revoked = any(token_id for _, token_id in dropped)
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
            revoked = False
            out.warn(
                f"could not revoke the token on the platform ({exc.message}); "
                "it was removed from this machine",
                code="TOKEN_REVOKE_FAILED",
            )
    return revoked
