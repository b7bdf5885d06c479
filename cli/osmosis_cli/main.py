"""``osmosis``: the typer app, global options and the entry point.

Start-up imports only typer and our light modules; everything heavy (httpx,
pydantic, keyring, rich) is imported inside the commands that use it.
"""

from __future__ import annotations

import sys
from typing import Annotated, Any

import typer

from osmosis_client._version import __version__

from . import auth, eval_hosted, eval_local, rubric, workspace
from .context import AppState
from .errors import EXIT_INTERRUPTED, EXIT_INVALID

app = typer.Typer(
    name="osmosis",
    help="Osmosis: log in, submit and follow hosted eval runs, and run evals locally.",
    no_args_is_help=True,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
    add_completion=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        sys.stdout.write(f"osmosis-client {__version__}\n")
        raise typer.Exit(0)


@app.callback()
def root(
    ctx: typer.Context,
    platform_url: Annotated[
        str | None,
        typer.Option(
            "--platform-url",
            help="Platform base URL (default: $OSMOSIS_PLATFORM_URL or https://platform.osmosis.ai).",
            show_default=False,
        ),
    ] = None,
    verbose: Annotated[
        bool, typer.Option("-v", "--verbose", help="Debug output and tracebacks.")
    ] = False,
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_version, is_eager=True, help="Print the version and exit."
        ),
    ] = False,
) -> None:
    ctx.obj = AppState(platform_url_option=platform_url, verbose=verbose)


auth.register(app)
app.add_typer(workspace.app, name="workspace")

eval_app = typer.Typer(no_args_is_help=True, invoke_without_command=True)
eval_app.callback()(eval_local.seed_form)
eval_hosted.register(eval_app)
eval_local.register(eval_app)
rubric.register(app, eval_app)
app.add_typer(eval_app, name="eval")


def _is_click_exception(exc: BaseException) -> bool:
    return hasattr(exc, "exit_code") and hasattr(exc, "format_message")


def main(argv: list[str] | None = None) -> Any:
    """Console-script entry point: usage errors become one ``error:`` line and exit 2."""
    try:
        code = app(args=argv, prog_name="osmosis", standalone_mode=False)
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        sys.exit(EXIT_INTERRUPTED)
    except Exception as exc:
        if type(exc).__name__ == "Abort":  # typer.Abort: Ctrl-C / EOF at a prompt
            sys.stderr.write("aborted\n")
            sys.exit(EXIT_INTERRUPTED)
        if not _is_click_exception(exc):
            if "-v" in sys.argv or "--verbose" in sys.argv:
                raise
            sys.stderr.write(
                f"error: internal error ({type(exc).__name__}: {exc}) — "
                "rerun with -v and report it\n"
            )
            sys.exit(1)
        if type(exc).__name__ == "NoArgsIsHelpError":  # bare `osmosis`: show the help
            sys.stderr.write(exc.format_message() + "\n")  # type: ignore[attr-defined]
            sys.exit(EXIT_INVALID)
        message = exc.format_message()  # type: ignore[attr-defined]
        command = getattr(getattr(exc, "ctx", None), "command_path", "osmosis")
        sys.stderr.write(f"error: {message} — see `{command} --help`\n")
        sys.exit(getattr(exc, "exit_code", EXIT_INVALID))
    sys.exit(code if isinstance(code, int) else 0)


if __name__ == "__main__":  # pragma: no cover
    main()
