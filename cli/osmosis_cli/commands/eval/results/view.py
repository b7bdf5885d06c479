"""``osmosis eval view [--port P] [--host H] [--no-browser]``: the local runs viewer;
``--bundle DIR [RUN…]``: the same pages as a static site."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from osmosis_cli.terminal.declare import option
from osmosis_cli.terminal.errors import current_output, handle_errors

BundleOpt = Annotated[
    Path | None,
    option(
        "--bundle DIR", "Write the viewer as a static site in DIR (opens from file://, any host)."
    ),
]
RunsArg = Annotated[
    list[str] | None,
    typer.Argument(metavar="RUN", help="With --bundle: only these runs."),
]
SpaceOpt = Annotated[
    str | None,
    option(
        "--to hf-space:ORG/NAME", "With --bundle: publish the site as a static Hugging Face Space."
    ),
]
PublicOpt = Annotated[bool, option("--public", "With --to: a public Space (else private).")]


@handle_errors
def view(
    ctx: typer.Context,
    port: Annotated[
        int, option("--port P", "Port to serve on (default: a free one).", min=0, max=65535)
    ] = 0,
    host: Annotated[
        str, option("--host H", "Address to serve on (default: this machine).")
    ] = "127.0.0.1",
    no_browser: Annotated[
        bool, option("--no-browser", "Print the URL; do not open a browser.")
    ] = False,
    bundle: BundleOpt = None,
    runs: RunsArg = None,
    to: SpaceOpt = None,
    public: PublicOpt = False,
) -> None:
    """Serve a read-only viewer of this project's runs (.osmosis/evals/): every run, live,
    each run's report and any two compared. The printed URL carries a token: a request
    without it is refused. Ctrl-C stops it. --bundle DIR writes it as a static site."""
    import asyncio
    import contextlib
    import webbrowser

    from osmosis_local_runner.viewer.server import Viewer, serve

    out = current_output()
    if bundle is not None or runs or to:
        _bundle(bundle, runs or [], to, public)
        return

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


def _bundle(into: Path | None, runs: list[str], to: str | None, public: bool) -> None:
    """``--bundle DIR [RUN…] [--to hf-space:ORG/NAME]``: the static site written (and
    published), what it holds said."""
    from osmosis_cli.terminal.sizes import size_text
    from osmosis_client.errors import InvalidInputError
    from osmosis_local_runner.viewer.bundle import write_bundle

    if into is None:
        raise InvalidInputError(
            "runs and --to go with --bundle DIR",
            hint="the live viewer shows every run",
            code="USAGE",
        )
    out = current_output()
    written = write_bundle(Path.cwd(), into, runs, to=to, public=public)
    index = written.path / "index.html"
    counts = (
        f"{len(written.runs)} runs, {len(written.comparisons)} comparisons, "
        f"{len(written.sweeps)} sweeps, {len(written.suites)} suites"
    )
    message = f"Site written to {written.path}: {counts} ({size_text(written.bytes)}); open {index}"
    resource = {
        "output_path": str(written.path),
        "index": str(index),
        "runs": written.runs,
        "comparisons": written.comparisons,
        "sweeps": written.sweeps,
        "suites": written.suites,
        "bytes": written.bytes,
        "files": written.files,
    }
    if written.url is not None:
        resource["url"] = written.url
        message += f"; published at {written.url}"
    if not out.operation_result("eval.view.bundle", resource=resource, message=message):
        out.info(message)
