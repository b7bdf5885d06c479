"""``osmosis workspace list / current / switch``."""

from __future__ import annotations

import os
from typing import Annotated, Any

import typer

from osmosis_cli.context import state
from osmosis_cli.terminal.declare import Group, option
from osmosis_cli.terminal.errors import command, current_output

app = typer.Typer(cls=Group, help="List, show and switch workspaces.", no_args_is_help=True)


@command(app, "list")
def list_(
    ctx: typer.Context,
    remote: Annotated[
        bool, option("--remote", "Also list the platform's workspaces for your token.")
    ] = False,
) -> None:
    """Workspaces logged in on this machine (with --remote: all of yours)."""
    app_state = state(ctx)
    out = current_output()
    platform = app_state.platform_url()
    store = app_state.store()
    entries = store.entries(platform)
    active = store.active_workspace(platform)
    rows: dict[str, dict[str, Any]] = {
        e.name: {
            "name": e.name,
            "id": e.id,
            "role": e.role,
            "active": e.name == active,
            "logged_in": True,
        }
        for e in entries
    }
    if remote:
        auth = app_state.resolve()
        with app_state.client(auth) as client:
            for ws in client.workspaces.list():
                row = rows.setdefault(
                    ws.name,
                    {
                        "name": ws.name,
                        "id": ws.id,
                        "role": ws.role,
                        "active": False,
                        "logged_in": False,
                    },
                )
                row["id"], row["role"] = ws.id, ws.role or row["role"]
    documents = sorted(rows.values(), key=lambda r: r["name"])
    table = [
        [
            "*" if r["active"] else "",
            r["name"],
            r["role"] or "",
            "yes" if r["logged_in"] else "no",
            r["id"] or "",
        ]
        for r in documents
    ]
    if out.list_result(documents, rows=table):
        return
    if not documents:
        out.info("No workspaces logged in on this machine: run `osmosis login`.")
        return
    out.table(["", "name", "role", "logged in", "id"], table)


@command(app, "current")
def current(ctx: typer.Context) -> None:
    """The workspace commands act in."""
    from osmosis_client.errors import WorkspaceRequiredError

    app_state = state(ctx)
    out = current_output()
    auth = app_state.resolve()
    if not auth.workspace:
        raise WorkspaceRequiredError(
            "no workspace selected", hint="run `osmosis workspace switch NAME`"
        )
    entry = auth.entry
    doc = {
        "name": auth.workspace,
        "id": entry.id if entry else None,
        "role": entry.role if entry else None,
        "platform_url": app_state.platform_url(),
    }
    if out.detail_result(doc):
        return
    role = f" ({doc['role']})" if doc["role"] else ""
    out.print(f"{doc['name']}{role} on {doc['platform_url']}")


@command(app, "switch")
def switch(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(metavar="NAME", help="Workspace name or id.")],
) -> None:
    """Make NAME the active workspace (no new login needed if your user belongs to it)."""
    from osmosis_client.errors import InvalidInputError
    from osmosis_client.platform.settings import ENV_TOKEN, ENV_WORKSPACE

    app_state = state(ctx)
    out = current_output()
    platform = app_state.platform_url()
    store = app_state.store()
    known = {e.name for e in store.entries(platform)} | {
        e.id for e in store.entries(platform) if e.id
    }
    if name in known:
        entry = store.set_active(platform, name)
    else:
        if os.environ.get(ENV_TOKEN):
            raise InvalidInputError(
                f"{ENV_TOKEN} is set, so there is no stored login to switch",
                hint=f"set {ENV_WORKSPACE}={name} instead",
            )
        auth = app_state.resolve()
        with app_state.client(auth) as client:
            remote = client.workspaces.list()
        found = next((w for w in remote if name in (w.name, w.id)), None)
        if found is None:
            names = ", ".join(w.name for w in remote) or "none"
            raise InvalidInputError(
                f"you are not a member of workspace {name!r} (yours: {names})",
                hint="check the name with `osmosis workspace list --remote`",
            )
        if auth.token_key is None:  # the token did not come from the store
            raise InvalidInputError(
                "there is no stored login to switch", hint="run `osmosis login` first"
            )
        store.add_workspace(platform, found, auth.token_key)
        entry = store.set_active(platform, found.name)
    resource = {"name": entry.name, "id": entry.id, "role": entry.role, "platform_url": platform}
    message = f"Active workspace: {entry.name}"
    if not out.operation_result("workspace.switch", resource=resource, message=message):
        out.info(message)
    if os.environ.get(ENV_WORKSPACE):
        out.warn(f"{ENV_WORKSPACE} is set and overrides the active workspace")
