"""``osmosis whoami``: the logged-in user, workspace and where the token comes from."""

from __future__ import annotations

from typing import Any

import typer

from osmosis_cli.context import state
from osmosis_cli.terminal.errors import current_output, handle_errors


@handle_errors
def whoami(ctx: typer.Context) -> None:
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
    source = "environment" if auth.source == "env" else "credentials"
    published = {  # the published CLI's keys, beside ours
        "email": verified.user.email,
        "name": verified.user.name,
        "source": source,
        "effective_source": source,
        "persistent_login": auth.source != "env",
    }
    if out.detail_result({**doc, **published, "account": {**published, "expires_at": expires}}):
        return
    name = f" ({verified.user.name})" if verified.user.name else ""
    out.print(f"Logged in to {doc['platform_url']} as {verified.user.email}{name}")
    if ws:
        role = f" as {ws['role']}" if ws.get("role") else ""
        out.print(f"Workspace: {ws['name']}{role}")
    else:
        out.print("Workspace: none selected (run `osmosis workspace switch NAME`)")
    out.print(f"Token from: {auth.source}" + (f", expires {expires}" if expires else ""))
