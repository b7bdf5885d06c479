"""``osmosis eval init NAME [--example EXAMPLE]``: a runnable evaluation, scaffolded."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from osmosis_cli.terminal.declare import option
from osmosis_cli.terminal.errors import current_output, handle_errors


@handle_errors
def init(
    ctx: typer.Context,
    name: Annotated[
        str,
        typer.Argument(metavar="NAME", help="The evaluation's name (config, rollout, dataset)."),
    ],
    example: Annotated[
        str | None,
        option(
            "--example EXAMPLE",
            "Copy a bundled example workspace into ./NAME instead (e.g. quickstart).",
        ),
    ] = None,
) -> None:
    """Scaffold a runnable evaluation (config, rollout stub, sample data, mock model)."""
    from osmosis_cli.commands.eval.local.scaffold import copy_example, example_configs, scaffold

    out = current_output()
    if example is not None:
        folder = copy_example(example, name, Path.cwd())
        configs = [str(c.relative_to(folder)) for c in example_configs(folder)]
        message = f"Wrote the {example} example to {folder}/"
        resource = {"name": name, "example": example, "directory": str(folder), "configs": configs}
        if out.operation_result("eval.init", resource=resource, message=message):
            return
        out.info(message)
        for config in configs:
            out.info(f"Run it: cd {name} && osmosis eval run {config}")
        return
    written = [str(path.relative_to(Path.cwd())) for path in scaffold(name, Path.cwd())]
    message = f"Scaffolded {name}: osmosis eval run configs/eval/{name}.toml"
    if out.operation_result(
        "eval.init", resource={"name": name, "files": written}, message=message
    ):
        return
    for path in written:
        out.info(f"Wrote {path}")
    out.info(
        f"Run it offline: osmosis eval run configs/eval/{name}.toml "
        "(then point model_path at a real model)"
    )
