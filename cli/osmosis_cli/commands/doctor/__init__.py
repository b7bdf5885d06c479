"""``osmosis doctor [PATH] [--fix]``: the check a user or their coding agent runs first
(``osmosis --json doctor``). ``--fix`` creates what is safely creatable, offline: the
workspace folders (each with a ``.gitkeep``) and our agent files — never overwriting,
never downloading. Anything still wrong is an error (exit 1), the published CLI's
``VALIDATION`` envelope with every check in its details."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from osmosis_cli.context import state
from osmosis_cli.terminal.declare import Command, option
from osmosis_cli.terminal.errors import current_output, handle_errors

MARKS = {"ok": "✓", "warning": "!", "error": "✗"}


@handle_errors
def doctor(
    ctx: typer.Context,
    path: Annotated[
        Path, typer.Argument(metavar="PATH", help="A folder (or file) in the workspace.")
    ] = Path("."),
    fix: Annotated[
        bool, option("--fix", "Create missing folders and agent files (offline).")
    ] = False,
) -> None:
    """Check this workspace: its folders, git identity, login, linked workspace, eval
    configs, rollout environments, model endpoints and which `osmosis` is on PATH."""
    from osmosis_cli.commands.doctor import checks as c
    from osmosis_client.errors import InvalidInputError, OsmosisError
    from osmosis_client.workspace import REQUIRED_DIRS, find_root, fix_scaffold, missing_paths

    out = current_output()
    if not path.exists():
        raise InvalidInputError(f"{path} does not exist", code="USAGE")
    root = find_root(path)
    fixed = fix_scaffold(root) if fix else []
    missing = missing_paths(root)
    found: list[c.Check] = [c.ok("workspace", str(root))]
    found.append(
        c.error("scaffold", f"missing {', '.join(missing)}", "osmosis doctor --fix")
        if missing
        else c.ok("scaffold", "every workspace folder and agent file is here")
    )
    git, git_check = c.git_identity(root)
    osmosis, osmosis_check = c.which_osmosis()
    linked, login_checks = c.login(state(ctx), git.get("identity"))
    configs, config_checks = c.configs(root)
    found += [git_check, osmosis_check, *login_checks, *config_checks]
    found += c.rollouts(root, configs) + c.endpoints(configs)
    resource: dict[str, Any] = {
        "workspace_directory": str(root),
        "git": git,
        "workspace": linked,
        "required_paths": list(REQUIRED_DIRS),
        "missing": missing,
        "valid": not any(check.status == "error" for check in found),
        "fixed": bool(fixed),
        "created": fixed,
        "checks": [check.to_json() for check in found],
        "osmosis": osmosis,
    }
    if not out.json_mode:
        _show(out, found, fixed)
    if not resource["valid"]:
        errors = [f"{check.name}: {check.message}" for check in found if check.status == "error"]
        lead = "Workspace doctor found missing scaffold paths. " if missing else ""
        raise OsmosisError(
            lead + "Problems: " + "; ".join(errors),
            hint="fix them (`osmosis doctor --fix` creates missing folders)",
            code="DOCTOR_FAILED",
            data=resource,
        )
    message = "Workspace doctor completed."
    if not out.operation_result("doctor", resource=resource, message=message):
        out.info(message)


def _show(out: Any, found: list[Any], fixed: list[str]) -> None:
    for path in fixed:
        out.info(f"created {path}")
    rows = [[MARKS[c.status], c.name, c.message + (f" — {c.fix}" if c.fix else "")] for c in found]
    out.table(["", "check", "result"], rows, keep=("check",))


def register(app: typer.Typer) -> None:
    app.command("doctor", cls=Command)(doctor)


__all__ = ["register"]
