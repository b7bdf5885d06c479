"""``osmosis``: the typer app, global options and the entry point.

Start-up imports only typer's core and our light modules; everything heavy
(httpx, pydantic, keyring, rich, aiohttp) is imported inside the commands that
use it. The global ``--platform-url URL`` is read here, before typer parses:
typer coerces every non-flag option through pydantic, which ``--help`` and
usage errors should not pay for.
"""

from __future__ import annotations

import json
import sys
from typing import Annotated, Any

import typer

from osmosis_cli.commands import agent_loop, auth, rubric, workspace
from osmosis_cli.commands import eval as eval_commands
from osmosis_cli.context import AppState
from osmosis_cli.terminal.declare import Group
from osmosis_cli.terminal.errors import EXIT_INTERRUPTED, EXIT_INVALID
from osmosis_client._version import __version__

PLATFORM_URL_FLAG = "--platform-url"

app = typer.Typer(
    name="osmosis",
    cls=Group,
    help="Osmosis: log in, submit and follow hosted eval runs, and run evals locally.",
    epilog=(
        "Global option (before COMMAND): --platform-url URL — the platform's base URL "
        "(default: $OSMOSIS_PLATFORM_URL or https://platform.osmosis.ai)."
    ),
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
    verbose: Annotated[
        bool,
        typer.Option("-v", "--verbose", help="Debug logs (HTTP, retries, scheduling), tracebacks."),
    ] = False,
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_version, is_eager=True, help="Print the version and exit."
        ),
    ] = False,
) -> None:
    if not isinstance(ctx.obj, AppState):
        ctx.obj = AppState()
    ctx.obj.verbose = verbose


auth.register(app)
workspace.register(app)
eval_commands.register(app)
rubric.register(app, eval_commands.eval_app)
agent_loop.register(app)


def split_global_options(argv: list[str]) -> tuple[list[str], AppState]:
    """Take ``--platform-url URL`` (or ``=URL``) from before the command name."""
    state = AppState()
    rest: list[str] = []
    i = 0
    while i < len(argv):
        arg = argv[i]
        if not arg.startswith("-"):
            rest.extend(argv[i:])
            break
        if arg == PLATFORM_URL_FLAG:
            if i + 1 >= len(argv):
                raise _UsageError(f"option {PLATFORM_URL_FLAG} requires a URL")
            state.platform_url_option = argv[i + 1]
            i += 2
            continue
        if arg.startswith(PLATFORM_URL_FLAG + "="):
            state.platform_url_option = arg.split("=", 1)[1]
        else:
            rest.append(arg)
        i += 1
    return rest, state


class _UsageError(Exception):
    exit_code = EXIT_INVALID

    def format_message(self) -> str:
        return str(self)


def _is_click_exception(exc: BaseException) -> bool:
    return hasattr(exc, "exit_code") and hasattr(exc, "format_message")


def _usage_error(exc: BaseException, argv: list[str]) -> int:
    """One ``error:`` line (or the ``--json`` error document) for a usage error."""
    if type(exc).__name__ == "NoArgsIsHelpError":  # bare `osmosis eval`: show the help
        sys.stderr.write(exc.format_message() + "\n")  # type: ignore[attr-defined]
        return EXIT_INVALID
    message = exc.format_message()  # type: ignore[attr-defined]
    command = getattr(getattr(exc, "ctx", None), "command_path", None) or "osmosis"
    hint = f"see `{command} --help`"
    if "--json" in argv:
        document = {"error": {"code": "USAGE", "message": message, "hint": hint}}
        sys.stderr.write(json.dumps(document) + "\n")
    else:
        sys.stderr.write(f"error: {message} — {hint}\n")
    sys.stderr.flush()
    code = getattr(exc, "exit_code", EXIT_INVALID)
    return code if isinstance(code, int) and code else EXIT_INVALID


def main(argv: list[str] | None = None) -> Any:
    """Console-script entry point: usage errors become one ``error:`` line and exit 2."""
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        rest, state = split_global_options(args)
        code = app(args=rest, obj=state, prog_name="osmosis", standalone_mode=False)
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        sys.exit(EXIT_INTERRUPTED)
    except Exception as exc:
        if type(exc).__name__ == "Abort":  # Ctrl-C / EOF at a prompt
            sys.stderr.write("aborted\n")
            sys.exit(EXIT_INTERRUPTED)
        if not _is_click_exception(exc):
            if "-v" in args or "--verbose" in args:
                raise
            sys.stderr.write(
                f"error: internal error ({type(exc).__name__}: {exc}) — "
                "rerun with -v and report it\n"
            )
            sys.exit(1)
        sys.exit(_usage_error(exc, args))
    sys.exit(code if isinstance(code, int) else 0)


if __name__ == "__main__":  # pragma: no cover
    main()
