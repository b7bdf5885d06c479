"""``osmosis rollout init / list / validate``: a new rollout, the rollouts the platform
synced, and a rollout loaded the way a run loads it (the published CLI's ``rollout``
group; ``validate`` is ours — the published CLI has none)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

import typer

from osmosis_cli.context import state
from osmosis_cli.terminal.declare import Command, Group, flag, option, options_command
from osmosis_cli.terminal.errors import EXIT_FAILED, command, current_output, handle_errors
from osmosis_cli.terminal.pages import Paging, show_list

app = typer.Typer(cls=Group, help="Create, list and check rollouts.", no_args_is_help=True)


NewNameArg = Annotated[str, typer.Argument(metavar="NAME", help="The rollout name (a-z, 0-9, -).")]
ReplaceOpt = Annotated[bool, option("--force -f", "Replace the rollout and its configs.")]


@command(app, "init")
def init(ctx: typer.Context, name: NewNameArg, force: ReplaceOpt = False) -> None:
    """A runnable rollout: rollouts/NAME (AgentWorkflow + Grader + pyproject.toml), its
    eval and training configs, and data/NAME.jsonl."""
    from osmosis_cli.commands.rollout.init import init as write
    from osmosis_client.workspace import find_root

    out = current_output()
    root = find_root(Path.cwd())
    files = write(name, root, force=force)
    resource = {
        "name": name,
        "workspace_directory": str(root),
        "rollout_dir": str(root / "rollouts" / name),
        "configs": {
            "eval": f"configs/eval/{name}.toml",
            "training": f"configs/training/{name}.toml",
        },
        "files": files,
    }
    steps = [
        {"action": "rollout_validate", "command": f"osmosis rollout validate {name}"},
        {"action": "eval_run", "command": f"osmosis eval run configs/eval/{name}.toml --limit 5"},
    ]
    message = f"Initialized rollout {name!r}."
    if out.operation_result("rollout.init", resource=resource, message=message, next_steps=steps):
        return
    out.info(message)
    for path in files:
        out.info(f"  {path}")
    out.info(f"Try it offline: osmosis eval run configs/eval/{name}.toml --model mock/calculator")


@dataclass(kw_only=True)
class ListOptions(Paging):
    branch: str | None = flag("--branch B", "As synced from this branch.")


@handle_errors
def list_(ctx: typer.Context, opts: ListOptions) -> None:
    """The rollouts the platform synced from this workspace's repository."""
    client, _ = state(ctx).scoped_client()
    with client:
        found = opts.collect(
            lambda size: client.rollouts.pages(opts.branch, size), lambda p: p.rollouts
        )
    items = [r.model_dump(mode="json") for r in found.items]
    rows = [
        [str(i["name"]), str(i["last_synced_commit_sha"] or "")[:8], str(i["last_synced_at"] or "")]
        for i in items
    ]
    show_list(
        current_output(),
        found,
        items=items,
        rows=rows,
        columns=["name", "commit", "synced"],
        keep=("name",),
        extra={"branch": opts.branch} if opts.branch else None,
        empty="No rollouts synced yet: push rollouts/NAME and check Git Sync on the platform.",
    )


app.command("list", cls=Command)(options_command(ListOptions, list_))


@command(app, "validate")
def validate(
    ctx: typer.Context,
    target: Annotated[
        str | None,
        typer.Argument(metavar="NAME|CONFIG", help="A rollout, or an eval config (default: all)."),
    ] = None,
    rollout_python: Annotated[
        Path | None, option("--rollout-python PATH", "The rollout's interpreter (default: uv).")
    ] = None,
) -> None:
    """Load rollouts as a run would (in their own environment), find each one's workflow
    and grader, and say what is wrong (exit 1 when anything is)."""
    from osmosis_cli.commands.rollout.validate import targets, validate as check
    from osmosis_client.workspace import find_root

    out = current_output()
    root = find_root(Path.cwd())
    reports = [check(folder, entry, rollout_python) for folder, entry in targets(root, target)]
    items = [r.to_json() for r in reports]
    rows = [[r.name, "valid" if r.ok else "INVALID", "; ".join(r.problems)] for r in reports]
    if not out.list_result(items, rows=rows):
        for report in reports:
            verdict = "valid" if report.ok else "INVALID"
            out.print(f"{report.entrypoint} ({report.mode} mode): {verdict}")
            if report.python:
                out.print(f"  python:    {report.python}")
            out.print(f"  workflows: {', '.join(report.workflows) or 'none'}")
            out.print(f"  graders:   {', '.join(report.graders) or 'none'}")
            for problem in report.problems:
                out.print(f"  problem:   {problem}")
    if not all(r.ok for r in reports):
        raise typer.Exit(EXIT_FAILED)


def register(parent: typer.Typer) -> None:
    parent.add_typer(app, name="rollout")


__all__ = ["register"]
