"""``osmosis model list / info / deploy / undeploy``: the platform's base models and the
LoRA adapters trained on them (published-cli-0.3.8-train.md §3): the published flags,
``--json`` envelopes and plain rows; better where the facts show it weak — deploy and
undeploy ask first (``--yes`` in scripts), a deploy refused by the quota names it, and
``info`` says a scope or permission error as such, never "not found"."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer

from osmosis_cli.context import result_scope, state
from osmosis_cli.terminal.commands import runnable
from osmosis_cli.terminal.declare import Group, YesOpt, option
from osmosis_cli.terminal.errors import command, current_output

if TYPE_CHECKING:
    from osmosis_client.platform.model_models import LoraModelPage

app = typer.Typer(
    cls=Group, help="Base models, LoRA models and their deployments.", no_args_is_help=True
)
TYPES = ("all", "base", "lora")


def register(root: typer.Typer) -> None:
    root.add_typer(app, name="model")


@command(app, "list")
def list_(
    ctx: typer.Context,
    limit: Annotated[int | None, option("--limit N", "Per type (1-50).", min=1, max=50)] = None,
    all_: Annotated[bool, option("--all", "Every page.")] = False,
    kind: Annotated[str, option("--type all|base|lora", "Which models (default all).")] = "all",
) -> None:
    """The workspace's base models and LoRA models (with their deployments)."""
    from osmosis_cli.commands.model.render import list_models
    from osmosis_cli.terminal.pages import check_paging, collect
    from osmosis_client.errors import InvalidInputError

    if kind not in TYPES:
        raise InvalidInputError("Type must be 'all', 'base', or 'lora'.", code="VALIDATION")
    check_paging(all_, limit)
    out = current_output()
    client, workspace = state(ctx).scoped_client()
    size = limit or 50
    with client:
        base = (
            collect(client.models.base_pages(size), lambda p: p.models, every=all_)
            if kind != "lora"
            else None
        )
        first: list[LoraModelPage] = []

        def lora_pages() -> Any:
            for page in client.models.lora_pages(size):
                first.append(page)
                yield page

        lora = collect(lora_pages(), lambda p: p.models, every=all_) if kind != "base" else None
    list_models(out, base, lora, first[0] if first else None, result_scope(workspace))


@command(app, "info")
def info(
    ctx: typer.Context,
    model: Annotated[
        str, typer.Argument(metavar="MODEL", help="A LoRA name, base model name or HF path.")
    ],
) -> None:
    """One model: a LoRA adapter (its training run, deployment) or a base model (size,
    context window, inference prices)."""
    from osmosis_cli.commands.model.render import show_model

    out = current_output()
    client, workspace = state(ctx).scoped_client()
    with client:
        found = client.models.get(model)
    show_model(out, found, result_scope(workspace))


LoraArg = Annotated[str, typer.Argument(metavar="LORA_MODEL", help="A LoRA model's name.")]


@command(app, "deploy")
def deploy(ctx: typer.Context, name: LoraArg, yes: YesOpt = False) -> None:
    """Serve a LoRA model for inference (counts toward the deployment quota)."""
    _deployment(ctx, name, yes, "deploy")


@command(app, "undeploy")
def undeploy(ctx: typer.Context, name: LoraArg, yes: YesOpt = False) -> None:
    """Stop serving a LoRA model."""
    _deployment(ctx, name, yes, "undeploy")


def _deployment(ctx: typer.Context, name: str, yes: bool, action: str) -> None:
    out = current_output()
    question = f"{action.capitalize()} LoRA model {name!r}?"
    if not out.confirm(question, yes=yes):  # no terminal and no --yes: refused, never hangs
        out.cancelled(f"model.{action}")
        return
    client, workspace = state(ctx).scoped_client()
    with client:
        done = client.models.deploy(name) if action == "deploy" else client.models.undeploy(name)
    message = f"LoRA model {action}ed: {name}"
    resource = {**done.model_dump(mode="json"), **result_scope(workspace)}
    steps = [{"action": "model_info", "name": name}]
    if not out.operation_result(
        f"model.{action}", resource=resource, message=message, next_steps=steps
    ):
        out.info(message)
        out.info("Check status with: " + runnable("osmosis", "model", "info", name))
