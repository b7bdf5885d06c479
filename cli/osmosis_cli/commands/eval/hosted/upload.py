"""``osmosis eval upload NAME_OR_DIR [--replace]`` and ``eval run --upload``: a finished
local run imported into the platform, so it shows on the dashboard beside hosted runs
(published-cli-0.3.8.md §5.3). The run is checked here against every rule the platform
applies before anything is sent; an interrupted upload resumes where it stopped."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from osmosis_cli.context import state
from osmosis_cli.terminal.commands import runnable
from osmosis_cli.terminal.declare import option
from osmosis_cli.terminal.errors import current_output, handle_errors

if TYPE_CHECKING:
    from osmosis_cli.context import AppState
    from osmosis_cli.terminal.output import Output
    from osmosis_client.platform.eval.run_import import ImportSession
    from osmosis_local_runner.api.doors import RunUpload


def run_directory(given: str) -> Path:
    """A path as given when it has a directory part or exists here; else a run name under
    ``.osmosis/evals``."""
    from osmosis_cli.commands.eval.hosted.download import runs_root

    path = Path(given).expanduser()
    if path.is_absolute() or len(path.parts) > 1 or path.is_dir():
        return path
    return runs_root() / given


@handle_errors
def upload(
    ctx: typer.Context,
    run: Annotated[
        str, typer.Argument(metavar="NAME_OR_DIR", help="A local run's name or directory.")
    ],
    replace: Annotated[bool, option("--replace", "Replace an earlier upload of this run.")] = False,
) -> None:
    """Upload a finished local run to the platform (it then shows beside hosted runs)."""
    out = current_output()
    resource = upload_run(state(ctx), out, run_directory(run), replace=replace, given=run)
    steps = [{"action": "eval_info", "name": resource["eval_run_name"]}]
    if resource.get("platform_url"):
        steps.append({"action": "open_url", "url": resource["platform_url"]})
    message = f"Uploaded {resource['local_run_path']} as {resource['eval_run_name']}"
    if not out.operation_result(
        "eval.upload", resource=resource, message=message, next_steps=steps
    ):
        out.info(message)
        if resource.get("platform_url"):
            out.info(f"  {resource['platform_url']}")


def upload_run(
    app_state: AppState,
    out: Output,
    run_dir: Path,
    *,
    replace: bool = False,
    given: str | None = None,
) -> dict[str, Any]:
    """Check, then import ``run_dir`` (holding its run lock); the published
    ``eval.upload`` resource."""
    from osmosis_local_runner.api.doors import RunUpload

    with RunUpload(run_dir, replace=replace) as upload:
        session = send_upload(app_state, out, upload, replace=replace, given=given)
        plan = upload.plan
        assert plan is not None
    return {
        "session_id": session.session_id,
        "local_run_id": plan.body["local_run_id"],
        "local_run_path": str(run_dir),
        "eval_run_id": session.eval_run_id,
        "eval_run_name": session.eval_run_name,
        "status": session.status,
        "expected_files": session.expected_files,
        "uploaded_files": session.uploaded_files,
        "platform_url": session.platform_url,
    }


def send_upload(
    app_state: AppState,
    out: Output,
    upload: RunUpload,
    *,
    replace: bool = False,
    given: str | None = None,
) -> ImportSession:
    """A checked upload sent with this workspace's client, its bytes on a progress bar
    (``eval upload``, and ``eval run --upload`` through the runner's session)."""
    from osmosis_cli.terminal.progress import byte_progress
    from osmosis_client.errors import ConflictError

    client, _ = app_state.scoped_client()
    with client, byte_progress(out, upload.total, "uploading") as sent:
        try:
            return upload.send(client, on_bytes=sent)
        except ConflictError as exc:
            if replace:
                raise
            exc.hint = (
                "it was uploaded before; re-run it with --retry-failed if needed, then "
                "republish with: "
                + runnable("osmosis", "eval", "upload", given or upload.run_dir.name, "--replace")
            )
            raise
