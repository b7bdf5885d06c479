"""``osmosis template list / apply``: rollout templates (a rollout, its configs and data)
written into the workspace — the published CLI's ``template`` group, offline for the
templates we bundle."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from osmosis_cli.terminal.commands import runnable
from osmosis_cli.terminal.declare import Group, option
from osmosis_cli.terminal.errors import command, current_output

app = typer.Typer(cls=Group, help="List and apply rollout templates.", no_args_is_help=True)


@command(app, "list")
def list_(ctx: typer.Context) -> None:
    """The templates `template apply` knows (bundled ones work offline)."""
    from osmosis_cli.commands.template.catalog import BUNDLED, REMOTE

    out = current_output()
    items = [{"name": t.name, "description": t.description, "source": "bundled"} for t in BUNDLED]
    items += [
        {
            "name": n,
            "description": "fetched from the Osmosis workspace template",
            "source": "remote",
        }
        for n in REMOTE
    ]
    items.sort(key=lambda item: item["name"])
    if out.list_result(items, rows=[[i["name"]] for i in items]):
        return
    out.table(
        ["name", "source", "description"],
        [[i["name"], i["source"], i["description"]] for i in items],
    )


TemplateArg = Annotated[
    str, typer.Argument(metavar="NAME", help="A template (see `template list`).")
]
OverwriteOpt = Annotated[bool, option("--force -f", "Replace the rollout and overwrite its files.")]


@command(app, "apply")
def apply(ctx: typer.Context, name: TemplateArg, force: OverwriteOpt = False) -> None:
    """Write a template's rollout, configs and data into this workspace."""
    from osmosis_cli.commands.template.catalog import apply as apply_template, find
    from osmosis_client.workspace import find_root

    out = current_output()
    template = find(name)
    root = find_root(Path.cwd())
    applied = apply_template(template, root, force=force)
    message = f"Applied template {applied.name!r} into {len(applied.destinations)} location(s)."
    resource = {
        "name": applied.name,
        "destinations": applied.destinations,
        "files": applied.files,
    }
    configs = [f for f in applied.files if f.startswith("configs/eval/")]
    steps = [
        {"action": "eval_run", "command": runnable("osmosis", "eval", "run", c, "--limit", 5)}
        for c in configs
    ]
    steps.append({"action": "git_push", "command": "git add -A && git commit && git push"})
    if out.operation_result("template.apply", resource=resource, message=message, next_steps=steps):
        return
    out.info(message)
    for path in applied.files:
        out.info(f"  {path}")
    out.info("Next: commit and push it, then `osmosis eval submit CONFIG --yes`")


def register(parent: typer.Typer) -> None:
    parent.add_typer(app, name="template")


__all__ = ["register"]
