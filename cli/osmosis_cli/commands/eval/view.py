"""``osmosis eval view [--port P] [--host H] [--no-browser]``: the local runs viewer."""

from __future__ import annotations

from typing import Annotated

import typer

from osmosis_cli.terminal.errors import current_output, handle_errors


@handle_errors
def view(
    ctx: typer.Context,
    port: Annotated[
        int,
        typer.Option(
            "--port", metavar="P", min=0, max=65535,
            help="Port to serve on (default: a free one).",
        ),
    ] = 0,
    host: Annotated[
        str,
        typer.Option("--host", metavar="H", help="Address to serve on (default: this machine)."),
    ] = "127.0.0.1",
    no_browser: Annotated[
        bool, typer.Option("--no-browser", help="Print the URL; do not open a browser.")
    ] = False,
) -> None:
    """Serve a read-only viewer of this project's runs (.osmosis/evals/): every run, live,
    each run's report and any two compared. The printed URL carries a token: a request
    without it is refused. Ctrl-C stops it."""
    import asyncio
    import contextlib
    import webbrowser
    from pathlib import Path

    from osmosis_local_runner.viewer.server import Viewer, serve

    out = current_output()

    def ready(url: str) -> None:
        # --json: the one document as soon as it serves (an agent reads the URL from it),
        # then it keeps serving until stopped
        if out.detail_result({"url": url, "root": str(Path.cwd())}, lines=[url]):
            return
        out.info(f"Viewing the runs under {Path.cwd()}: {url}")
        out.info("Ctrl-C stops the viewer.")
        if not no_browser:
            with contextlib.suppress(Exception):  # no browser here: the URL is printed
                webbrowser.open(url)

    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve(Viewer(Path.cwd()), host=host, port=port, ready=ready))
